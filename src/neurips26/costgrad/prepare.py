"""The chapter's world models: seven float16 predictors in one table (chapter 13).

``python -m neurips26.costgrad.prepare --scale default`` trains every row of :data:`MODELS` on its task's
random walks (:mod:`~neurips26.costgrad.data`) with the recipe of :mod:`~neurips26.costgrad.training` and
writes ``NAME.pt`` and ``NAME.json`` into ``src/neurips26/costgrad/checkpoints/`` (package data): AdaLN-Zero
and input-concat predictors on Wall with three seeds each (the architecture and stability studies) and one
AdaLN-Zero predictor on Push. ``--scale smoke`` writes one-block, 50-update versions into the user cache. A
checkpoint is fresh when its validation MSE is within 5% of the recorded one (another CPU moves low bits).

``--scale paper`` trains the same seven rows at the paper's sizes (:data:`PAPER_SPEC`) into the user
cache, on the device :func:`~neurips26.train.choose_device` picks (``torchrun --nproc_per_node=N -m
neurips26.costgrad.prepare --scale paper`` trains each model data-parallel). The paper's predictors read
frozen DINOv2 ViT-S/14 features of 224 × 224 frames (16 × 16 = 256 tokens of 384 numbers) and are trained
for 20 epochs on the JEPA-WMs datasets; neither exists offline. Here the frames are 64 × 64, so the stand-in
encoder's 4 × 4 patches give the paper's grid of 256 tokens (of 32 numbers: a random map of a 48-number
patch has no more directions to give); the predictor is the paper's: 6 blocks of width 400, 16 heads, MLP
1600 (17.8 M parameters with AdaLN-Zero, 11.7 M with input concat), AdamW at ``5·10⁻⁴``; the data are
20,000 random walks of 12 steps (240,000 transitions), 20 epochs of them at batch 256 (18,750 updates).
Its batches are rendered and encoded on the training device (``frames="device"``) and the predictor runs
in bfloat16 autocast on CUDA. ``--trial`` trains each row for one update of two transitions from one
two-step walk and validates on one such walk (:func:`neurips26.scales.trial_run`). The frames of the
``paper`` scale are those of :func:`env_for`; the chapter's planners run on the CPU, so its claims at this
scale are a long computation (not adapted to a GPU).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import torch

import neurips26
from neurips26.cache import cached
from neurips26.checkpoint_files import (
    FORMAT,
    ModelRow,
    Registry,
    Sidecar,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.costgrad.data import random_walks
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor
from neurips26.costgrad.training import FRAMES, train_predictor, validate
from neurips26.scales import pick, trial_run
from neurips26.validation import check_choice, check_int

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
SOURCE_FILES = tuple(
    ("neurips26.costgrad", f) for f in ("envs.py", "encoder.py", "data.py", "predictor.py", "training.py")
)
METRIC_RTOL = 0.05
CURVE_EVERY = 10
ENCODER_SEED = 0
TRAIN_SEED, VALIDATION_SEED = 0, 1
WALK_LENGTH = 12


@dataclass(frozen=True)
class Row:
    """One model: its task, action conditioning and seed."""

    env: str
    cond: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.env}-{self.cond}-{self.seed}"


MODELS = (
    *(Row("wall", "adaln", s) for s in range(3)),
    *(Row("wall", "concat", s) for s in range(3)),
    Row("push", "adaln", 0),
)
NAMES = tuple(r.name for r in MODELS)


def row(name: str) -> Row:
    for r in MODELS:
        if r.name == name:
            return r
    raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")


@dataclass(frozen=True)
class Plan:
    """What trains one model at a scale: the predictor, the frame side of its task, the training and
    validation walks and their length, where the training frames are made (``"host"`` or ``"device"``, see
    :mod:`~neurips26.costgrad.training`) and the precision on CUDA (None: float32; ``"bf16"``)."""

    spec: PredictorSpec
    size: int = 32
    walks: tuple[int, int] = (1000, 100)
    length: int = WALK_LENGTH
    frames: str = "host"
    precision: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.spec, PredictorSpec):
            raise TypeError(f"spec must be a PredictorSpec; got {type(self.spec).__name__}")
        check_int("size", self.size, minimum=4)
        check_int("length", self.length, minimum=1)
        if len(self.walks) != 2:
            raise ValueError(f"walks must be (training, validation); got {self.walks!r}")
        for walks in self.walks:
            check_int("walks", walks, minimum=1)
        check_choice("frames", self.frames, FRAMES)
        if self.precision is not None:
            check_choice("precision", self.precision, ("bf16",))


PAPER_SPEC = PredictorSpec(tokens=256, width=400, depth=6, heads=16, steps=18_750, batch=256)
"""The paper's predictor (6 blocks of width 400, 16 heads, MLP 1600) on the 256-token grid; 18,750 updates of
256 transitions are 20 epochs of :data:`PAPER_WALKS`' transitions. Each row sets its conditioning and seed."""
PAPER_SIZE = 64
PAPER_WALKS = (20_000, 20)
"""Training walks (240,000 transitions) and validation walks (240 transitions, measured on the CPU)."""


def plan_for(name: str, scale: str) -> Plan:
    """The plan of model ``name`` at ``scale`` (smoke: one block, 50 updates; paper: the module doc; a
    trial run: one update of two transitions, one two-step walk for training and one for validation)."""
    r = row(name)
    base = PredictorSpec(cond=r.cond, seed=r.seed, steps=2000)
    plan = pick(
        scale,
        smoke=Plan(replace(base, depth=1, steps=50), walks=(100, 20)),
        default=Plan(base),
        paper=Plan(
            replace(PAPER_SPEC, cond=r.cond, seed=r.seed),
            size=PAPER_SIZE,
            walks=PAPER_WALKS,
            frames="device",
            precision="bf16",
        ),
    )
    if trial_run():
        plan = replace(plan, spec=replace(plan.spec, steps=1, batch=2), walks=(1, 1), length=2)
    return plan


def spec_for(name: str, scale: str) -> PredictorSpec:
    """The predictor of ``name`` at ``scale`` (:func:`plan_for`)."""
    return plan_for(name, scale).spec


def walks_for(scale: str) -> tuple[int, int]:
    """Training and validation walks at ``scale``."""
    return plan_for(NAMES[0], scale).walks


def env_for(task: str, scale: str = "default") -> EnvSpec:
    """Task ``task`` (``"wall"`` or ``"push"``) with the frames of ``scale`` (64 × 64 at ``paper``)."""
    return EnvSpec(task, size=plan_for(NAMES[0], scale).size)


def env_of(name: str, scale: str = "default") -> EnvSpec:
    """The task of model ``name`` at ``scale``."""
    return env_for(row(name).env, scale)


def expected_hash(name: str, scale: str) -> str:
    plan = plan_for(name, scale)
    config = {
        "spec": plan.spec,
        "env": env_of(name, scale),
        "walks": plan.walks,
        "length": plan.length,
        "seeds": (TRAIN_SEED, VALIDATION_SEED, ENCODER_SEED),
        "format": FORMAT,
    }
    # the paper's switches enter only where they leave the shipped recipe: the default hashes stay those
    # of the committed checkpoints
    if plan.frames != "host":
        config["frames"] = plan.frames
    if plan.precision is not None:
        config["precision"] = plan.precision
    return config_hash(config)


@dataclass(frozen=True)
class PredictorMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics (validation MSE and the "nothing moves" MSE), the
    loss curve, weights_hash, version, torch, train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics", "curve")

    name: str
    config_hash: str
    source: str
    metrics: dict[str, float] = field(default_factory=dict)
    curve: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def encoder() -> FrozenEncoder:
    return FrozenEncoder(seed=ENCODER_SEED)


def measure(name: str, scale: str, model: TokenPredictor) -> dict[str, float]:
    """Validation MSE of one-step predictions on separate walks, and of predicting no change."""
    plan = plan_for(name, scale)
    data = random_walks(env_of(name, scale), plan.walks[1], plan.length, seed=VALIDATION_SEED)
    v = validate(model, data, encoder())
    return {"val_mse": v.mse, "still_mse": v.still}


def build(name: str, scale: str, meta: PredictorMeta, state: dict[str, torch.Tensor]) -> TokenPredictor:
    model = load_half_state(name, TokenPredictor(spec_for(name, scale)), state).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], PredictorMeta]:
    plan = plan_for(name, scale)

    def compute() -> tuple[dict[str, torch.Tensor], PredictorMeta]:
        start = time.perf_counter()
        data = random_walks(env_of(name, scale), plan.walks[0], plan.length, seed=TRAIN_SEED)
        model, losses = train_predictor(
            plan.spec, data, encoder(), progress=verbose, frames=plan.frames, precision=plan.precision
        )
        state = half_state(model)
        meta = PredictorMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(SOURCE_FILES),
            curve={"loss": [round(x, 6) for x in losses[::CURVE_EVERY]]},
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(time.perf_counter() - start, 1),
        )
        metrics = measure(name, scale, build(name, scale, meta, state))
        return state, replace(meta, metrics=metrics)

    return cached("cg-predictor", {"name": name, "scale": scale, "hash": expected_hash(name, scale)}, compute)


REGISTRY = Registry(
    chapter="costgrad",
    package_dir=PACKAGE_DIR,
    names=NAMES,
    meta_class=PredictorMeta,
    expected_hash=expected_hash,
    build=build,
    measure=measure,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
    rtol=METRIC_RTOL,
)


def pretrained(
    name: str, scale: str = "default", *, verbose: bool = True
) -> tuple[TokenPredictor, PredictorMeta]:
    """Predictor ``name``: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(name, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[PredictorMeta]:
    """Train and write the predictors' checkpoints at ``scale`` into ``out``."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.costgrad.prepare",
        description="Train the chapter 13 world models and write their float16 checkpoints.",
        models=tuple(ModelRow(r.name, f"{r.cond} predictor on {r.env}, seed {r.seed}") for r in MODELS),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.costgrad.prepare``, which a later process can read back.
    from neurips26.costgrad import prepare as _importable

    sys.exit(_importable.main())
