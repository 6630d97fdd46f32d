"""Support-coordinate interventions (paper appendix "Support-coordinate intervention table").

Is the support *used* by the predictor? Edit the initial code ``z₀ = E(x₀)`` and roll the edited code out:

* :func:`drop_top`: zero the ``k`` largest ``|z₀,i|`` (``k ∈ {1, 2, 3, 5, 10}`` in the paper);
* :func:`random_support`: move the active values (``|z_i| > 1e-3``) to randomly drawn inactive coordinates
  (the paper's "random support", 20 draws per start); :func:`permute_active` shuffles the values among the
  active coordinates, keeping the support [ours, a milder control].

:func:`accumulated_mse` is the paper's measure here: the sum over steps ``t = 1..H`` of the squared error
averaged over state coordinates, averaged over starts (not the state-summed through-horizon mean of the
forecasting tables). :func:`intervened_rollout` applies an edit to ``z₀`` and otherwise runs
:func:`neurips26.skae.rollout.rollout` unchanged (same re-encoding cadence).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from neurips26.skae.model import KAE
from neurips26.skae.rollout import rollout
from neurips26.skae.supports import ABS_THRESHOLD, support_topk
from neurips26.validation import check_int, check_seed

#: The paper's numbers of dropped coordinates.
KS = (1, 2, 3, 5, 10)
#: The paper's random-support draws per start.
DRAWS = 20


def _latents(z: object) -> Tensor:
    if not isinstance(z, Tensor):
        raise TypeError(f"z must be a torch.Tensor; got {type(z).__name__}")
    if z.ndim != 2 or z.shape[1] < 1:
        raise ValueError(f"z must have shape (N, d_z); got {tuple(z.shape)}")
    if torch.isnan(z).any():
        raise ValueError("z must not contain NaN")
    return z


def drop_top(z: Tensor, k: int) -> Tensor:
    """A copy of ``z`` with its ``k`` largest-magnitude coordinates per row set to 0 (``k ∈ [1, d_z]``).

    Ties go to the lowest index (:func:`~neurips26.skae.supports.support_topk`); every other entry is kept.
    """
    z = _latents(z)
    k = check_int("k", k, minimum=1, maximum=z.shape[1])
    top = torch.as_tensor(support_topk(z, k), device=z.device)
    return torch.where(top, torch.zeros_like(z), z)


def random_support(z: Tensor, seed: int, *, threshold: float = ABS_THRESHOLD) -> Tensor:
    """A copy of ``z`` whose active values (``|z_i| > threshold``) sit on random inactive coordinates.

    Per row, the active values keep their order and move to a uniformly drawn set of as many formerly
    inactive coordinates; the old active coordinates become 0. A row with more active than inactive
    coordinates cannot be moved and raises ``ValueError``.
    """
    z = _latents(z)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    active = (z.abs() > threshold).cpu().numpy()
    out = torch.zeros_like(z)
    for i, row in enumerate(active):
        on, off = np.flatnonzero(row), np.flatnonzero(~row)
        if on.size > off.size:
            raise ValueError(f"z[{i}] has {on.size} active coordinates but only {off.size} inactive ones")
        target = torch.as_tensor(np.sort(rng.choice(off, size=on.size, replace=False)), device=z.device)
        out[i, target] = z[i, torch.as_tensor(on, device=z.device)]
    return out


def permute_active(z: Tensor, seed: int, *, threshold: float = ABS_THRESHOLD) -> Tensor:
    """A copy of ``z`` with the active values of each row randomly permuted among the active coordinates."""
    z = _latents(z)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    active = (z.abs() > threshold).cpu().numpy()
    out = z.clone()
    for i, row in enumerate(active):
        on = np.flatnonzero(row)
        idx = torch.as_tensor(on, device=z.device)
        out[i, idx] = z[i, torch.as_tensor(rng.permutation(on), device=z.device)]
    return out


class _EditFirst:
    """A latent step that applies ``edit`` to the code it is given the first time, then ``advance``."""

    def __init__(self, edit: Callable[[Tensor], Tensor], advance: Callable[[Tensor], Tensor]) -> None:
        self.edit, self.advance, self.done = edit, advance, False

    def __call__(self, z: Tensor) -> Tensor:
        if not self.done:
            self.done = True
            z = self.edit(z)
        return self.advance(z)


def intervened_rollout(
    model: KAE,
    x0: object,
    horizon: int,
    edit: Callable[[Tensor], Tensor],
    *,
    period: int | None = None,
    step: Callable[[Tensor], Tensor] | None = None,
) -> np.ndarray:
    """:func:`~neurips26.skae.rollout.rollout` from ``edit(E(x0))`` instead of ``E(x0)``, ``(N, H, d_x)``.

    Only the initial code is edited; a re-encoding (``period``) reads the model's own prediction as usual.
    """
    if not callable(edit):
        raise TypeError(f"edit must be callable (z -> z); got {type(edit).__name__}")
    if not isinstance(model, KAE):
        raise TypeError(f"model must be a KAE; got {type(model).__name__}")
    return rollout(
        model, x0, horizon, period=period, step=_EditFirst(edit, model.step if step is None else step)
    )


def accumulated_mse(predicted: object, truth: object) -> np.ndarray:
    """``A_H = mean_i Σ_{t ≤ H} mean_j (x̂_{i,t,j} − x_{i,t,j})²`` for every ``H``, shape ``(H,)``."""
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(truth, dtype=float)
    if p.ndim != 3:
        raise ValueError(f"predicted must have shape (N, H, state_dim); got {p.shape}")
    if y.shape != p.shape:
        raise ValueError(f"truth must have the shape of predicted {p.shape}; got {y.shape}")
    if np.isnan(y).any():
        raise ValueError("truth must not contain NaN")
    with np.errstate(over="ignore", invalid="ignore"):
        return np.cumsum(((p - y) ** 2).mean(axis=2), axis=1).mean(axis=0)
