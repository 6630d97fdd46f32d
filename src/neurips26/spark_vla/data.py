"""The chapter's data, procedural and cached: episodes, renders, per-patch labels and demonstrations.

Disjoint seed ranges keep the splits apart: training episodes from 0, the encoders' pre-training renders from
1,000,000, development episodes (every choice of recipe was tried there) from 2,000,000, and the evaluation
episodes behind the committed verdicts from 3,000,000. Episode ``i`` of a split is a ``colour`` task when
``i`` is even and cycles through the three depth tasks when odd, so every split is half depth, half colour.

Each training episode yields 10 demonstration samples, each a state labelled with the expert's chunk from
it: 2 states around the home position (where every test episode starts) and 8 around the goal, at distances
of 3 to 20 cm (Gaussian, two at each spread). States along the expert's own path would teach a shortcut: after
the first chunk the expert has nearly arrived, so "away from home" alone would predict "hold still".
"""

from __future__ import annotations

import hashlib
import inspect
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from neurips26 import world
from neurips26.cache import cached
from neurips26.spark_vla import sim
from neurips26.validation import check_choice, check_int

SPLIT_SEEDS = {"train": 0, "pretrain": 1_000_000, "dev": 2_000_000, "eval": 3_000_000}
#: Episodes per split at each scale. 4,000 training scenes, not 400: on 400 the policy memorises its scenes
#: (development runs: 80 % success on training scenes, 2 % on new ones).
SPLIT_SIZES = {
    "smoke": {"train": 40, "pretrain": 150, "dev": 20, "eval": 20},
    "default": {"train": 4000, "pretrain": 3000, "dev": 200, "eval": 200},
    "paper": {"train": 20000, "pretrain": 10000, "dev": 400, "eval": 400},
}
HOME_JITTER = 0.01  # metres: std of the two states drawn around the home position
GOAL_SPREADS = (0.03, 0.06, 0.12, 0.2)  # metres: std of the states drawn around the goal, two each
MIN_HEIGHT = 0.01  # states are kept above the table


def episode_task(index: int) -> str:
    """The task of episode ``index`` of any split: even -> colour, odd -> nearer, tallest, behind in turn."""
    index = check_int("index", index, minimum=0)
    return "colour" if index % 2 == 0 else sim.DEPTH_TASKS[(index // 2) % 3]


@dataclass(frozen=True, eq=False)
class EpisodeSet:
    """Per-episode arrays of one split (E episodes).

    images (E, 3, 48, 48) float32 RGB; depth (E, 1, 48, 48) float32 z-depth (the oracle's sensor);
    instructions (E, 8) int64; tasks (E,) index into :data:`~neurips26.spark_vla.sim.TASKS`; goals (E, 3);
    grips (E,); colour_labels, shape_labels (E, 36) int64; geometry (E, 36, 4) per-patch (depth, X, Y, Z);
    target_mask (E, 36) bool (patches showing the object the instruction names); offsets (E, 36, 2) float32
    sub-patch image position of each labelled patch's object (NaN on the table), a 2D pre-training target.
    """

    split: str
    seeds: np.ndarray
    images: np.ndarray
    depth: np.ndarray
    instructions: np.ndarray
    tasks: np.ndarray
    goals: np.ndarray
    grips: np.ndarray
    colour_labels: np.ndarray
    shape_labels: np.ndarray
    geometry: np.ndarray
    target_mask: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return int(self.seeds.shape[0])

    @property
    def is_depth(self) -> np.ndarray:
        """(E,) bool: depth tasks (nearer, tallest, behind)."""
        return np.isin(self.tasks, [sim.TASKS.index(t) for t in sim.DEPTH_TASKS])

    def episode(self, k: int) -> sim.Episode:
        """The :class:`~neurips26.spark_vla.sim.Episode` behind row ``k`` (re-sampled from its seed)."""
        k = check_int("k", k, minimum=0, maximum=len(self) - 1)
        return sim.sample_episode(int(self.seeds[k]), sim.TASKS[int(self.tasks[k])])


@dataclass(frozen=True, eq=False)
class Demonstrations:
    """Expert samples (S of them): ``episode`` (S,) row in the :class:`EpisodeSet`, ``proprio`` (S, 3)
    float32, ``chunks`` (S, 4, 4) float32 (dx, dy, dz, gripper per step)."""

    episode: np.ndarray
    proprio: np.ndarray
    chunks: np.ndarray

    def __len__(self) -> int:
        return int(self.episode.shape[0])


@lru_cache(maxsize=1)
def _sim_fingerprint() -> str:
    """Hash of the code a render depends on (the simulator, this module and ``neurips26.world``)."""
    digest = hashlib.sha256()
    here = Path(__file__).resolve()
    world_dir = Path(inspect.getfile(world)).resolve().parent
    for path in [here, here.with_name("sim.py"), *sorted(world_dir.glob("*.py"))]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _build_episodes(split: str, count: int) -> EpisodeSet:
    base = SPLIT_SEEDS[split]
    rows = []
    for i in range(count):
        task = episode_task(i)
        ep = sim.sample_episode(base + i, task)
        view = sim.render_episode(ep)
        colour, shape = sim.patch_labels(ep, view)
        rows.append(
            (
                base + i,
                sim.image_tensor_array(view),
                view.depth.astype(np.float32)[None],
                sim.instruction_ids(ep.words),
                sim.TASKS.index(task),
                np.asarray(ep.goal),
                ep.grip,
                colour,
                shape,
                sim.patch_geometry(view),
                sim.target_patches(ep, view),
                sim.patch_offsets(ep, view).astype(np.float32),
            )
        )
    cols = list(zip(*rows, strict=True))
    return EpisodeSet(
        split=split,
        seeds=np.asarray(cols[0], dtype=np.int64),
        images=np.stack(cols[1]),
        depth=np.stack(cols[2]),
        instructions=np.stack(cols[3]),
        tasks=np.asarray(cols[4], dtype=np.int64),
        goals=np.stack(cols[5]),
        grips=np.asarray(cols[6], dtype=np.int64),
        colour_labels=np.stack(cols[7]),
        shape_labels=np.stack(cols[8]),
        geometry=np.stack(cols[9]).astype(np.float32),
        target_mask=np.stack(cols[10]),
        offsets=np.stack(cols[11]),
    )


def episodes(split: str, scale: str = "default", *, count: int | None = None) -> EpisodeSet:
    """The episodes of ``split`` at ``scale`` (or the first ``count``), rendered once and cached on disk."""
    split = check_choice("split", split, tuple(SPLIT_SEEDS))
    scale = check_choice("scale", scale, tuple(SPLIT_SIZES))
    n = SPLIT_SIZES[scale][split] if count is None else check_int("count", count, minimum=1)
    config = {"split": split, "count": n, "code": _sim_fingerprint()}
    return cached("spark-vla-episodes", config, lambda: _build_episodes(split, n), verbose=False)


def _build_demonstrations(data: EpisodeSet) -> Demonstrations:
    rows_e, rows_p, rows_c = [], [], []
    scales = np.repeat(np.asarray(GOAL_SPREADS), 2)
    for k in range(len(data)):
        rng = np.random.default_rng([int(data.seeds[k]), 17])
        goal = data.goals[k]
        home = np.asarray(sim.HOME) + HOME_JITTER * rng.standard_normal((2, 3))
        near = goal + scales[:, None] * rng.standard_normal((len(scales), 3))
        states = np.concatenate([home, near])
        states[:, 1] = np.clip(states[:, 1], MIN_HEIGHT, None)
        n = len(states)
        chunks = sim.expert_chunk(np.repeat(goal[None], n, axis=0), np.full(n, data.grips[k]), states)
        rows_e.extend([k] * n)
        rows_p.append(states)
        rows_c.append(chunks)
    return Demonstrations(
        episode=np.asarray(rows_e, dtype=np.int64),
        proprio=np.concatenate(rows_p).astype(np.float32),
        chunks=np.concatenate(rows_c).astype(np.float32),
    )


def demonstrations(data: EpisodeSet) -> Demonstrations:
    """Expert samples of every episode of ``data`` (10 per episode), cached on disk."""
    if not isinstance(data, EpisodeSet):
        raise TypeError(f"data must be an EpisodeSet; got {type(data).__name__}")
    rows = hashlib.sha256(data.seeds.tobytes() + data.tasks.tobytes()).hexdigest()[:16]
    config = {"split": data.split, "rows": rows, "code": _sim_fingerprint()}
    return cached("spark-vla-demos", config, lambda: _build_demonstrations(data), verbose=False)


__all__ = [
    "GOAL_SPREADS",
    "HOME_JITTER",
    "SPLIT_SEEDS",
    "SPLIT_SIZES",
    "Demonstrations",
    "EpisodeSet",
    "demonstrations",
    "episode_task",
    "episodes",
]
