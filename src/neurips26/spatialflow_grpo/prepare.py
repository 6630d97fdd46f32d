"""The chapter's base editor and RL adapters: training recipes and float16 checkpoints (chapter 08).

``python -m neurips26.spatialflow_grpo.prepare --scale default`` pretrains the base editor and runs every RL
arm of :data:`ARMS`, writing float16 checkpoints into ``src/neurips26/spatialflow_grpo/checkpoints/``
(package data); ``--scale smoke`` writes tiny versions into the user cache; ``--only NAME`` restricts the run.
The notebooks get a model through :func:`pretrained` (the chapter's
:class:`~neurips26.checkpoint_files.Registry`): ``pretrained("base")`` is the editor,
``pretrained("spatial-s0")`` the editor with that run's LoRA adapters (a checkpoint stores only the
adapters and is bound to the base's weights hash).

The arms, all from the same base with the same RL settings (:class:`~neurips26.spatialflow_grpo.rl_loop
.RLConfig`), the same cases and the same initial noise per iteration and seed:

- ``flow-s{0,1,2}`` — Flow-GRPO, one advantage per image from the equal-weight mean of the region rewards;
- ``spatial-s{0,1,2}`` — SpatialFlow-GRPO, reading (a), equal region weights;
- ``flow-area`` — Flow-GRPO with the area-weighted scalar;
- ``spatial-shuffled`` — region advantages on shuffled tokens (claim S6's control);
- ``spatial-b`` — reading (b), the per-position ratio;
- ``spatial-area`` — area region weights α_k.

A checkpoint is fresh when its configuration hashes as recorded, its state dict fits and it reproduces its
recorded metric within :data:`~neurips26.checkpoint_files.METRIC_RTOL` plus :data:`METRIC_ATOL`: the base,
its flow-matching loss on a fixed validation draw; an arm, the mean oracle reward of fixed-noise ODE edits
of :data:`VALIDATION_CASES` MultiEdit cases.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

import neurips26
from neurips26.cache import cache_key, cached
from neurips26.checkpoint_files import (
    FORMAT,
    Registry,
    Sidecar,
    StaleCheckpointError,
    check_layout,
    config_hash,
    half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.scales import pick
from neurips26.spatialflow_grpo import reward as R
from neurips26.spatialflow_grpo.editor import (
    Editor,
    EditorConfig,
    PretrainConfig,
    add_rl_lora,
    flow_matching_loss,
    pretrain,
    to_flow,
)
from neurips26.spatialflow_grpo.editworld import make_suite, sample_cases
from neurips26.spatialflow_grpo.rl_loop import RLConfig, edit, run_rl

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.spatialflow_grpo``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = tuple(
    ("neurips26.spatialflow_grpo", f)
    for f in (
        "editor.py",
        "editworld.py",
        "reward.py",
        "sde.py",
        "regions.py",
        "grpo.py",
        "spatial.py",
        "rl_loop.py",
    )
)
MAX_TOTAL_BYTES = 1_000_000
METRIC_ATOL = 1e-5
VALIDATION_CASES = 32
VALIDATION_SEED = 2718
BASE = "base"


@dataclass(frozen=True)
class ArmSpec:
    """A row of the table: ``name``, ``role``; ``method`` None for the base editor, else the RL options
    that differ from the scale's :class:`RLConfig` (and the run's ``seed``)."""

    name: str
    role: str
    method: str | None = None
    scalar: str = "equal"
    reading: str = "a"
    alpha: str = "equal"
    shuffled: bool = False
    seed: int = 0

    def __str__(self) -> str:
        return f"{self.name}  ({self.role})"


ARMS: tuple[ArmSpec, ...] = (
    ArmSpec(BASE, "the pretrained editor (flow matching on flawed pairs), no RL"),
    *(
        ArmSpec(f"flow-s{s}", f"Flow-GRPO, equal-weight scalar, seed {s}", "flow-grpo", seed=s)
        for s in range(3)
    ),
    *(
        ArmSpec(f"spatial-s{s}", f"SpatialFlow-GRPO, reading (a), seed {s}", "spatial", seed=s)
        for s in range(3)
    ),
    ArmSpec("flow-area", "Flow-GRPO, area-weighted scalar reward", "flow-grpo", scalar="area"),
    ArmSpec("spatial-shuffled", "SpatialFlow-GRPO on shuffled tokens (control)", "spatial", shuffled=True),
    ArmSpec("spatial-b", "SpatialFlow-GRPO, reading (b): per-position ratio", "spatial", reading="b"),
    ArmSpec("spatial-area", "SpatialFlow-GRPO, area region weights", "spatial", alpha="area"),
)
ARM_NAMES: tuple[str, ...] = tuple(a.name for a in ARMS)


def arm_spec(name: str) -> ArmSpec:
    """The row ``name`` of :data:`ARMS` (``ValueError`` naming ``name`` otherwise)."""
    if name not in ARM_NAMES:
        raise ValueError(f"name must be one of {', '.join(ARM_NAMES)}; got {name!r}")
    return ARMS[ARM_NAMES.index(name)]


@dataclass(frozen=True)
class PrepareConfig:
    """What trains the table at one scale: the base editor's ``pretraining`` and the arms' ``rl`` settings
    (each arm replaces its own options and seed)."""

    pretraining: PretrainConfig = field(default_factory=PretrainConfig)
    rl: RLConfig = field(default_factory=RLConfig)

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        smoke = cls(
            pretraining=PretrainConfig(steps=40, warmup=5),
            rl=RLConfig(group_size=4, conditions=2, iterations=5, probe_size=16),
        )
        return pick(scale, smoke=smoke, default=cls())

    def arm_config(self, spec: ArmSpec) -> RLConfig:
        """The RL settings of ``spec`` at this scale."""
        if spec.method is None:
            raise ValueError(f"{spec.name} is not an RL arm")
        return self.rl.replace(
            method=spec.method,
            scalar=spec.scalar,
            reading=spec.reading,
            alpha=spec.alpha,
            shuffled=spec.shuffled,
            seed=spec.seed,
        )


# --------------------------------------------------------------------------------------------
# sidecar, building, measuring


def expected_hash(name: str, scale: str, base_hash: str = "") -> str:
    """The configuration hash of ``name`` at ``scale`` (an arm's includes the base's weights hash)."""
    spec = arm_spec(name)
    config = PrepareConfig.for_scale(scale)
    payload: dict[str, Any] = {"arm": spec, "pretraining": config.pretraining, "format": FORMAT}
    if spec.method is not None:
        payload["rl"] = config.arm_config(spec)
        payload["base"] = base_hash
    return config_hash(payload)


@dataclass(frozen=True)
class SFGMeta(Sidecar):
    """The sidecar of a checkpoint: name, config_hash, source, editor (the EditorConfig), spec, rl (the arm's
    RLConfig), metrics, curves (pretraining loss; RL reward, KL, clip fraction, the probe), base (the base's
    weights hash, arms only), weights_hash, version, torch, train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("editor", "spec", "rl", "metrics", "curves")

    name: str
    config_hash: str
    source: str
    editor: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    rl: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    base: str = ""
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def _adapter_keys(editor: Editor) -> list[str]:
    return [k for k in editor.state_dict() if "lora" in k]


def build_model(name: str, scale: str, meta: SFGMeta, state: dict[str, Tensor]) -> Editor:
    """The editor of ``meta`` (float32, eval mode): the base from its float16 state, or, for an arm, the
    base of :func:`pretrained` with the arm's adapters (``StaleCheckpointError`` if bound to another base)."""
    spec = arm_spec(name)
    if spec.method is None:
        editor = Editor(EditorConfig(**meta.editor))
        reference = editor.state_dict()
        check_layout(name, state, reference)
        editor.load_state_dict({k: v.to(reference[k].dtype) for k, v in state.items()}, strict=True)
        return editor.eval()
    base, base_meta = pretrained(BASE, scale, verbose=False)
    if meta.base != base_meta.weights_hash:
        raise StaleCheckpointError(
            f"{name}: trained from base {meta.base}; the base now is {base_meta.weights_hash}"
        )
    editor = Editor(base.config)
    editor.load_state_dict(base.state_dict())
    add_rl_lora(editor, rank=int(meta.rl["lora_rank"]))
    reference = {k: v for k, v in editor.state_dict().items() if k in _adapter_keys(editor)}
    check_layout(name, state, reference)
    editor.load_state_dict({k: v.to(reference[k].dtype) for k, v in state.items()}, strict=False)
    return editor.eval()


@torch.no_grad()
def validation_metrics(name: str, editor: Editor, scale: str) -> dict[str, float]:
    """Base: ``val_loss``, the flow-matching loss on 64 validation pairs at fixed noise and times; arms:
    ``val_reward``, the mean equal-weight oracle reward of fixed-noise ODE edits of MultiEdit cases."""
    if arm_spec(name).method is None:
        batch = sample_cases(64, VALIDATION_SEED)
        generator = torch.Generator().manual_seed(VALIDATION_SEED)
        noise = torch.randn(batch.target.shape, generator=generator)
        t = torch.rand(64, generator=generator)
        loss = flow_matching_loss(
            editor, to_flow(batch.source), to_flow(batch.target), batch.instruction, noise, t
        )
        return {"val_loss": float(loss)}
    cases = make_suite("multiedit", VALIDATION_CASES, seed=VALIDATION_SEED)
    config = PrepareConfig.for_scale(scale).rl
    images = edit(editor, cases, config.eval_steps, seed=VALIDATION_SEED)
    return {"val_reward": float(R.scalar_reward(R.region_rewards(images, cases), cases).mean())}


# --------------------------------------------------------------------------------------------
# training


def train_model(name: str, scale: str, *, progress: bool = True) -> tuple[dict[str, Tensor], SFGMeta]:
    """Train ``name`` at ``scale`` (an arm from the base of :func:`pretrained`); its float16 state (the
    adapters only, for an arm) and sidecar (metrics measured on the float16 weights)."""
    spec = arm_spec(name)
    config = PrepareConfig.for_scale(scale)
    start = time.perf_counter()
    base_hash, rl_dict = "", {}
    if spec.method is None:
        editor, losses = pretrain(config.pretraining, progress=progress)
        curves = {"loss": losses}
        state = half_state(editor)
    else:
        base, base_meta = pretrained(BASE, scale, verbose=progress)
        base_hash = base_meta.weights_hash
        rl = config.arm_config(spec)
        rl_dict = asdict(rl)
        run = run_rl(base, rl, progress=progress)
        h = run.history
        curves = {
            "reward": h.reward,
            "kl": h.kl,
            "approx_kl": h.approx_kl,
            "clip_fraction": h.clip_fraction,
            "probe_iteration": [float(i) for i, _ in h.probe],
            "probe_success": [s for _, s in h.probe],
            **{f"region_reward_{k}": [r[k] for r in h.region_reward] for k in range(4)},
        }
        full = half_state(run.editor)
        state = {k: full[k] for k in _adapter_keys(run.editor)}
        editor = run.editor
    seconds = time.perf_counter() - start
    editor_dict = asdict(editor.config)
    stub = SFGMeta(name=name, config_hash="", source="", editor=editor_dict, rl=rl_dict, base=base_hash)
    metrics = validation_metrics(name, build_model(name, scale, stub, state), scale)
    every = {k: max(1, len(v) // 300) for k, v in curves.items()}
    meta = SFGMeta(
        name=name,
        config_hash=expected_hash(name, scale, base_hash),
        source=source_fingerprint(SOURCE_FILES),
        editor=editor_dict,
        spec={**asdict(spec), "parameters": sum(v.numel() for v in state.values())},
        rl=rl_dict,
        metrics=metrics,
        curves={k: [float(x) for x in v[:: every[k]]] for k, v in curves.items()},
        base=base_hash,
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def _base_hash(scale: str) -> str:
    return pretrained(BASE, scale, verbose=False)[1].weights_hash


def _expected(name: str, scale: str) -> str:
    if arm_spec(name).method is None:
        return expected_hash(name, scale)
    return expected_hash(name, scale, _base_hash(scale))


def _trained(name: str, scale: str, verbose: bool) -> tuple[dict[str, Tensor], SFGMeta]:
    key = {
        "hash": _expected(name, scale),
        "source": source_fingerprint(SOURCE_FILES),
        "train": cache_key("source", None, "neurips26.train"),
    }
    return cached(
        f"spatialflow_grpo-model-{name}-{scale}",
        key,
        lambda: train_model(name, scale, progress=verbose),
        package="neurips26.spatialflow_grpo",
        verbose=verbose,
    )


REGISTRY = Registry(
    chapter="spatialflow_grpo",
    package_dir=PACKAGE_DIR,
    names=ARM_NAMES,
    meta_class=SFGMeta,
    expected_hash=_expected,
    build=build_model,
    measure=lambda name, scale, model: validation_metrics(name, model, scale),
    train=_trained,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)
"""The chapter's models in the :class:`~neurips26.checkpoint_files.Registry`."""

checkpoint_dir = REGISTRY.checkpoint_dir
load_checkpoint = REGISTRY.load
pretrained = REGISTRY.pretrained


def prepare(
    scale: str = "smoke",
    *,
    only: Sequence[str] | None = None,
    out: Path | str | None = None,
    progress: bool = True,
) -> list[SFGMeta]:
    """Train and write the models at ``scale`` (the base first) into ``out``; fresh ones are kept."""
    return REGISTRY.write(
        REGISTRY.chosen(only),
        scale,
        checkpoint_dir(scale) if out is None else out,
        lambda name: train_model(name, scale, progress=progress),
        max_total=MAX_TOTAL_BYTES,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.spatialflow_grpo.prepare --scale smoke|default|paper [--only NAME]...``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.spatialflow_grpo.prepare",
        description="Pretrain the base editor and run the RL arms of chapter 08.",
        models=ARMS,
        prepare=prepare,
    )


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["ARMS", "ARM_NAMES", "REGISTRY", "ArmSpec", "PrepareConfig", "SFGMeta", "pretrained", "prepare"]
