"""Demonstrations as latent videos, and the training examples cut from them.

**An episode** is one expert trajectory (:mod:`~neurips26.sparsevideonav.expert`) in latent form. Its
frames are laid out on a padded timeline so that every decision sees the same shapes:

- :data:`LEAD` copies of the first frame come first (the agent stands and looks for 7 frames, then
  decides: the first decision has its two reference chunks), with zero actions;
- then the trajectory's frames, each action moving frame ``p`` to ``p + 1``;
- then the last frame repeated (an agent that stopped keeps seeing the same view; the world is still)
  with zero actions, far enough for any future offset.

The padded frames are encoded chunk by chunk (:class:`~neurips26.sparsevideonav.codec.Codec`), 1 chunk
= 4 frames = 1 s. **A decision** at chunk ``d`` (``d ≥ 2``) is taken after frame ``4d − 1``: its reference
is chunks ``d − 2, d − 1``, its history every chunk before, its future chunks ``d + offsets``
(:mod:`~neurips26.sparsevideonav.timeline`); its action chunk is the next :data:`ACTION_CHUNK` actions
(``4d − 1 … 4d + 6``) and its stop label says whether the expert's trajectory ends within them. An
episode's decisions run from ``d = 2`` to the first with a stop label (or to the end of an unfinished
trajectory).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparsevideonav.codec import Codec
from neurips26.sparsevideonav.expert import Trajectory
from neurips26.sparsevideonav.instructions import encode
from neurips26.sparsevideonav.timeline import CHUNK_FRAMES, REFERENCE_CHUNKS, check_offsets
from neurips26.validation import check_int

#: Frames the agent stands still before its first decision (so that decision has 2 full chunks).
LEAD = REFERENCE_CHUNKS * CHUNK_FRAMES - 1
#: Actions per decision (2 s at 4 FPS).
ACTION_CHUNK = 8
#: Chunks of padding after the last decision: enough for offsets up to 31 and 80-action chunks.
TAIL_CHUNKS = 34


@dataclass(frozen=True)
class Episode:
    """One demonstration on the padded timeline (module doc).

    kind, world (maze seed); words (MAX_WORDS,) ids; latents (C, 2, 16) float32; actions (4C, 3) float32
    (action ``p`` moves padded frame ``p`` to ``p + 1``); last (the padded index of the trajectory's last
    frame); stopped, success (the expert's); decisions (the chunk indices ``d`` of its decisions).
    """

    kind: str
    world: int
    words: np.ndarray
    latents: np.ndarray
    actions: np.ndarray
    last: int
    stopped: bool
    success: bool
    decisions: np.ndarray

    def stop_label(self, d: int) -> bool:
        """Whether the expert stops within the action chunk of decision ``d``."""
        return self.stopped and self.last <= CHUNK_FRAMES * d - 1 + ACTION_CHUNK

    def action_chunk(self, d: int, length: int = ACTION_CHUNK) -> np.ndarray:
        """The ``length`` actions after decision ``d``: (length, 3)."""
        start = CHUNK_FRAMES * d - 1
        return self.actions[start : start + length]


def padded_frames(trajectory: Trajectory, chunks: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """``(frames (4C, 16, 32, 3), actions (4C, 3), last)`` on the padded timeline of ``trajectory``.

    ``C`` = ``chunks``, or every decision chunk plus :data:`TAIL_CHUNKS`.
    """
    frames = trajectory.frames
    t = len(frames) - 1
    last = LEAD + t
    if chunks is None:
        chunks = -(-(last + 1) // CHUNK_FRAMES) + TAIL_CHUNKS
    n = check_int("chunks", chunks, minimum=1) * CHUNK_FRAMES
    if n < last + 1:
        raise ValueError(f"chunks must cover the trajectory's {last + 1} padded frames; got {chunks}")
    out = np.empty((n, *frames.shape[1:]), dtype=np.float32)
    out[:LEAD] = frames[0]
    out[LEAD : last + 1] = frames
    out[last + 1 :] = frames[-1]
    actions = np.zeros((n, 3), dtype=np.float32)
    actions[LEAD:last] = trajectory.actions
    return out, actions, last


def episode(trajectory: Trajectory, codec: Codec) -> Episode:
    """The latent episode of one demonstration (module doc)."""
    frames, actions, last = padded_frames(trajectory)
    latents = codec.encode(frames).astype(np.float32)
    final = -(-(last + 1) // CHUNK_FRAMES)  # the first d whose current frame 4d − 1 is at or past the end
    decisions = np.arange(REFERENCE_CHUNKS, final + 1)
    ep = Episode(
        kind=trajectory.task.kind,
        world=trajectory.task.seed,
        words=encode(trajectory.task.words),
        latents=latents,
        actions=actions,
        last=last,
        stopped=trajectory.stopped,
        success=trajectory.success,
        decisions=decisions,
    )
    if ep.stopped:
        first = next(d for d in decisions if ep.stop_label(int(d)))
        ep = Episode(**{**ep.__dict__, "decisions": decisions[decisions <= first]})
    return ep


@dataclass(frozen=True)
class Batch:
    """Training examples: clip (B, 2 + F, 2, 16) = reference then future; history (B, H, 2, 16) left-padded
    with its mask (B, H); words (B, L); actions (B, A, 3); stop (B,) float; episode, decision (B,) ints."""

    clip: torch.Tensor
    history: torch.Tensor
    history_mask: torch.Tensor
    words: torch.Tensor
    actions: torch.Tensor
    stop: torch.Tensor
    episode: np.ndarray
    decision: np.ndarray


def decision_index(episodes: Sequence[Episode]) -> np.ndarray:
    """Every (episode, decision chunk) pair, shape (N, 2)."""
    return np.array([(i, int(d)) for i, ep in enumerate(episodes) for d in ep.decisions], dtype=np.int64)


def make_batch(
    episodes: Sequence[Episode],
    pairs: np.ndarray,
    offsets: Sequence[int],
    *,
    action_length: int = ACTION_CHUNK,
    max_history: int | None = None,
) -> Batch:
    """The examples at ``pairs`` (rows of (episode, decision chunk)) for a generator of ``offsets``.

    ``max_history`` keeps only that many most recent history chunks (None: all of them).
    """
    offsets = np.asarray(check_offsets(offsets))
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    clips, histories, words, actions, stops = [], [], [], [], []
    for i, d in pairs:
        ep = episodes[int(i)]
        d = int(d)
        if d < REFERENCE_CHUNKS or d + offsets[-1] >= len(ep.latents):
            raise ValueError(f"decision {d} of episode {i} lies outside its {len(ep.latents)} chunks")
        clips.append(np.concatenate([ep.latents[d - REFERENCE_CHUNKS : d], ep.latents[d + offsets]]))
        start = 0 if max_history is None else max(0, d - REFERENCE_CHUNKS - max_history)
        histories.append(ep.latents[start : d - REFERENCE_CHUNKS])
        words.append(ep.words)
        actions.append(ep.action_chunk(d, action_length))
        stops.append(float(ep.stop_label(d)))
    h = max((len(x) for x in histories), default=0)
    hist = np.zeros((len(pairs), h, 2, clips[0].shape[-1] if clips else 16), dtype=np.float32)
    mask = np.zeros((len(pairs), h), dtype=bool)
    for row, x in enumerate(histories):  # left padding: the latest chunk is always last
        if len(x):
            hist[row, h - len(x) :] = x
            mask[row, h - len(x) :] = True
    return Batch(
        clip=torch.as_tensor(np.stack(clips)),
        history=torch.as_tensor(hist),
        history_mask=torch.as_tensor(mask),
        words=torch.as_tensor(np.stack(words)),
        actions=torch.as_tensor(np.stack(actions)),
        stop=torch.as_tensor(np.array(stops, dtype=np.float32)),
        episode=pairs[:, 0].copy(),
        decision=pairs[:, 1].copy(),
    )


def sample_pairs(index: np.ndarray, size: int, seed: int) -> np.ndarray:
    """``size`` (episode, decision) rows drawn uniformly with replacement from ``index``, seeded."""
    rng = np.random.default_rng(check_int("seed", seed, minimum=0))
    return index[rng.integers(0, len(index), check_int("size", size, minimum=1))]


__all__ = [
    "ACTION_CHUNK",
    "LEAD",
    "TAIL_CHUNKS",
    "Batch",
    "Episode",
    "decision_index",
    "episode",
    "make_batch",
    "padded_frames",
    "sample_pairs",
]
