"""The chapter's world models: seven float16 predictors in one table (chapter 13).

``python -m neurips26.costgrad.prepare --scale default`` trains every row of :data:`MODELS` on its task's
random walks (:mod:`~neurips26.costgrad.data`) with the recipe of :mod:`~neurips26.costgrad.training` and
writes ``NAME.pt`` and ``NAME.json`` into ``src/neurips26/costgrad/checkpoints/`` (package data): AdaLN-Zero
and input-concat predictors on Wall with three seeds each (the architecture and stability studies) and one
AdaLN-Zero predictor on Push. ``--scale smoke`` writes one-block, 50-update versions into the user cache. A
checkpoint is fresh when its validation MSE is within 5% of the recorded one (another CPU moves low bits).
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
from neurips26.costgrad.training import train_predictor, validate
from neurips26.scales import pick

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


def spec_for(name: str, scale: str) -> PredictorSpec:
    """The predictor of ``name`` at ``scale`` (smoke: one block, 50 updates)."""
    r = row(name)
    base = PredictorSpec(cond=r.cond, seed=r.seed, steps=2000)
    return pick(scale, smoke=replace(base, depth=1, steps=50), default=base)


def walks_for(scale: str) -> tuple[int, int]:
    """Training and validation walks at ``scale``."""
    return pick(scale, smoke=(100, 20), default=(1000, 100))


def env_of(name: str) -> EnvSpec:
    return EnvSpec(row(name).env)


def expected_hash(name: str, scale: str) -> str:
    return config_hash(
        {
            "spec": spec_for(name, scale),
            "env": env_of(name),
            "walks": walks_for(scale),
            "length": WALK_LENGTH,
            "seeds": (TRAIN_SEED, VALIDATION_SEED, ENCODER_SEED),
            "format": FORMAT,
        }
    )


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
    data = random_walks(env_of(name), walks_for(scale)[1], WALK_LENGTH, seed=VALIDATION_SEED)
    v = validate(model, data, encoder())
    return {"val_mse": v.mse, "still_mse": v.still}


def build(name: str, scale: str, meta: PredictorMeta, state: dict[str, torch.Tensor]) -> TokenPredictor:
    model = load_half_state(name, TokenPredictor(spec_for(name, scale)), state).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], PredictorMeta]:
    spec = spec_for(name, scale)

    def compute() -> tuple[dict[str, torch.Tensor], PredictorMeta]:
        start = time.perf_counter()
        data = random_walks(env_of(name), walks_for(scale)[0], WALK_LENGTH, seed=TRAIN_SEED)
        model, losses = train_predictor(spec, data, encoder(), progress=verbose)
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
    sys.exit(main())
