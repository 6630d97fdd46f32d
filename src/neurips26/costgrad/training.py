"""Training the world model: teacher-forced one-step regression of the next frame's tokens.

Each update draws ``batch`` transitions ``(z_t, a_t, z_{t+1})`` uniformly from the training walks (seeded by
the update's index) and minimises ``mean ‖f(z_t, a_t) − z_{t+1}‖²`` with AdamW (the JEPA-WMs recipe's
learning rate ``5·10⁻⁴``; a short warm-up, cosine decay). The validation MSE is measured on separate walks,
beside the MSE of predicting "nothing moves" (``z_{t+1} ≈ z_t``), the floor any useful model must beat.

Where the frames are made: ``frames="host"`` (every shipped model) renders and encodes each batch with
NumPy on the CPU; ``frames="device"`` (the ``paper`` scale) sends only the states and actions of the
batch and renders and encodes them on the training device inside the loss (the same transitions: a batch
of 256 frames of 64 × 64 would otherwise cost the CPU more per update than the GPU's step). The predictor
trains on :func:`~neurips26.train.choose_device`'s device, data-parallel under ``torchrun``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.costgrad import envs
from neurips26.costgrad.data import Trajectories, state_transitions, transitions
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor
from neurips26.seeding import sub_seed
from neurips26.train import choose_device, fit
from neurips26.validation import check_choice

FRAMES = ("host", "device")


def _draw(data: Trajectories, size: int, seed: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """The walks and steps of update ``step``'s transitions."""
    rng = np.random.default_rng(sub_seed(seed, 11, step))
    rows = rng.integers(0, data.count, size)
    steps = rng.integers(0, data.length, size)
    return rows, steps


def batch_at(data: Trajectories, encoder: FrozenEncoder, size: int, seed: int, step: int):
    """Update ``step``'s encoded transitions ``(z, a, z_next)`` (rendered and encoded on the host)."""
    return transitions(data, encoder, *_draw(data, size, seed, step))


def state_batch_at(data: Trajectories, size: int, seed: int, step: int) -> dict[str, torch.Tensor]:
    """The same transitions as :func:`batch_at`, as states and actions
    (:func:`~neurips26.costgrad.data.state_transitions`), for rendering on the training device."""
    return state_transitions(data, *_draw(data, size, seed, step))


def one_step_loss(model: torch.nn.Module, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """``mean ‖f(z_t, a_t) − z_{t+1}‖²`` of a batch of encoded transitions (calls ``model``, so a
    ``DistributedDataParallel`` wrapper synchronises the gradients)."""
    z, a, z_next = batch
    return F.mse_loss(model(z, a), z_next)


def rendering_loss(
    env: EnvSpec, encoder: FrozenEncoder
) -> Callable[[torch.nn.Module, dict[str, torch.Tensor]], torch.Tensor]:
    """:func:`one_step_loss` of a batch of states (:func:`state_batch_at`), rendered and encoded where the
    batch is (``encoder`` on that device). The tokens are made in float32 outside any autocast, so that
    a bfloat16 run rounds the predictor, not its inputs and targets."""

    def loss(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        with torch.autocast(batch["agent"].device.type, enabled=False):
            z = encoder(envs.render_tensors(env, batch["agent"], batch["gap"], batch["block"]))
            z_next = encoder(
                envs.render_tensors(env, batch["agent_next"], batch["gap_next"], batch["block_next"])
            )
        return one_step_loss(model, (z, batch["action"], z_next))

    return loss


def train_predictor(
    spec: PredictorSpec,
    data: Trajectories,
    encoder: FrozenEncoder,
    *,
    progress: bool = False,
    frames: str = "host",
    precision: str | None = None,
) -> tuple[TokenPredictor, list[float]]:
    """The trained predictor (eval mode, weights frozen, on the training device) and its loss curve.

    ``frames``: where the batches are rendered and encoded (module doc). ``precision="bf16"``: autocast
    on CUDA (:func:`neurips26.train.fit`); a CPU has no fast bfloat16 and trains in float32.
    """
    check_choice("frames", frames, FRAMES)
    device = choose_device()
    model = TokenPredictor(spec).to(device)
    if frames == "host":
        loss: Callable[[torch.nn.Module, Any], torch.Tensor] = one_step_loss
        batches: Callable[[int], Any] = partial(batch_at, data, encoder, spec.batch, spec.seed)
    else:
        loss = rendering_loss(data.spec, copy.deepcopy(encoder).to(device))
        batches = partial(state_batch_at, data, spec.batch, spec.seed)
    history = fit(
        model,
        loss,
        batches,
        steps=spec.steps,
        seed=spec.seed,
        lr=spec.lr,
        warmup=spec.steps // 20,
        weight_decay=0.01,
        progress=progress,
        desc=f"predictor ({spec.cond}, seed {spec.seed})",
        precision=precision if device.type == "cuda" else None,
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
    """MSE over every transition of ``data`` (on the model's device)."""
    rows = np.repeat(np.arange(data.count), data.length)
    steps = np.tile(np.arange(data.length), data.count)
    device = next(model.parameters()).device
    z, a, z_next = (t.to(device) for t in transitions(data, encoder, rows, steps))
    pred = model(z, a)
    return Validation(float(F.mse_loss(pred, z_next)), float(F.mse_loss(z, z_next)))
