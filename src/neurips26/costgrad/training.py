"""Training the world model: teacher-forced one-step regression of the next frame's tokens.

Each update draws ``batch`` transitions ``(z_t, a_t, z_{t+1})`` uniformly from the training walks (seeded by
the update's index) and minimises ``mean ‖f(z_t, a_t) − z_{t+1}‖²`` with AdamW (the JEPA-WMs recipe's
learning rate ``5·10⁻⁴``; a short warm-up, cosine decay). The validation MSE is measured on separate walks,
beside the MSE of predicting "nothing moves" (``z_{t+1} ≈ z_t``), the floor any useful model must beat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.costgrad.data import Trajectories, transitions
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor
from neurips26.seeding import sub_seed
from neurips26.train import fit


def batch_at(data: Trajectories, encoder: FrozenEncoder, size: int, seed: int, step: int):
    rng = np.random.default_rng(sub_seed(seed, 11, step))
    rows = rng.integers(0, data.count, size)
    steps = rng.integers(0, data.length, size)
    return transitions(data, encoder, rows, steps)


def train_predictor(
    spec: PredictorSpec, data: Trajectories, encoder: FrozenEncoder, *, progress: bool = False
) -> tuple[TokenPredictor, list[float]]:
    """The trained predictor (eval mode, weights frozen) and its loss curve."""
    model = TokenPredictor(spec)

    def loss(m: TokenPredictor, batch) -> torch.Tensor:
        z, a, z_next = batch
        return F.mse_loss(m(z, a), z_next)

    history = fit(
        model,
        loss,
        lambda s: batch_at(data, encoder, spec.batch, spec.seed, s),
        steps=spec.steps,
        seed=spec.seed,
        lr=spec.lr,
        warmup=spec.steps // 20,
        weight_decay=0.01,
        progress=progress,
        desc=f"predictor ({spec.cond}, seed {spec.seed})",
    )
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, list(history.loss)


@dataclass(frozen=True)
class Validation:
    """Validation MSE of the model and of the "nothing moves" prediction."""

    mse: float
    still: float


@torch.no_grad()
def validate(model: TokenPredictor, data: Trajectories, encoder: FrozenEncoder) -> Validation:
    """MSE over every transition of ``data``."""
    rows = np.repeat(np.arange(data.count), data.length)
    steps = np.tile(np.arange(data.length), data.count)
    z, a, z_next = transitions(data, encoder, rows, steps)
    pred = model(z, a)
    return Validation(float(F.mse_loss(pred, z_next)), float(F.mse_loss(z, z_next)))
