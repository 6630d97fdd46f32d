"""The HF-trained oracle bridge: PICSB's conditional bridge with the TRUE HF fields as its ``x₀`` end.

Chapter 06, "Baselines" : the upper reference that needs HF supervision. Same denoiser, same
loss (eq. L as configured: ``L_SB`` plus the residual and sensor terms at the config's weights), same
hard-conditioned sampler (:func:`neurips26.picsb.picsb.reconstruct`, so ``M ⊙ x = y`` exactly) and the
same budget and seeds as :func:`neurips26.picsb.picsb.train_picsb`: the network starts from ``seed``,
``λ_R`` (if None) is calibrated on a batch drawn from ``seed`` (here against the truth), and round
``r = 1..R_max`` runs ``S`` AdamW steps from a generator seeded ``seed + r`` (``R_max = 0``: one fit as
round 1). The only difference to PICSB: the endpoints are the truth and are never refreshed.

:func:`neurips26.picsb.picsb.train_picsb` has no hook for given endpoints, so this module is a thin
wrapper over its round machinery (``_calibrate``, ``_fit_round``, ``_log``) rather than a copy of the loop.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.picsb import picsb
from neurips26.picsb.picsb import PICSBConfig, PICSBResult, TrainingSet


def train_oracle(
    data: TrainingSet, truth: Tensor, config: PICSBConfig | None = None, *, progress: bool = False
) -> PICSBResult:
    """Train the bridge on pairs ``(truth, x1)`` conditioned on ``(x1, y, M)``, ``max(R_max, 1) × S``
    steps in the round structure of PICSB without refreshes. Returns a :class:`PICSBResult` whose
    ``surrogates`` are the truth and whose logs' ``rel_l2`` is NaN (no monitor: the endpoints are exact)."""
    if not isinstance(data, TrainingSet):
        raise TypeError(f"data must be a TrainingSet; got {type(data).__name__}")
    config = PICSBConfig() if config is None else config
    if not isinstance(config, PICSBConfig):
        raise TypeError(f"config must be a PICSBConfig; got {type(config).__name__}")
    truth = picsb._field("truth", truth)
    if truth.shape != data.x1.shape:
        raise ValueError(f"truth must have data.x1's shape {tuple(data.x1.shape)}; got {tuple(truth.shape)}")
    return picsb.train_picsb(data, config, progress=progress, surrogates=truth, refresh_with=picsb.keep)


def oracle_bridge(
    result: PICSBResult,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    steps: int,
    method: str = "ot-ode",
    generator: torch.Generator | None = None,
) -> Tensor:
    """The oracle's reconstruction of ``(x1, y, mask)`` ``(B, T, X)``: hard-conditioned sampling with the
    trained ``result.model`` in ``steps`` network calls (:func:`neurips26.picsb.picsb.reconstruct`)."""
    if not isinstance(result, PICSBResult):
        raise TypeError(f"result must be a PICSBResult; got {type(result).__name__}")
    with torch.no_grad():
        return picsb.reconstruct(result.model, x1, y, mask, steps, method=method, generator=generator)
