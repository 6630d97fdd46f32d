"""Field-space test-time optimisation (TTO): the per-instance baseline PICSB amortises (claims P3, P4).

Minimise the auxiliary energy of :mod:`neurips26.picsb.energy`,

``E(x) = λ_R ‖R(x)‖² + λ_o/(2σ_o²) ‖M ⊙ x − y‖² + λ_p ‖P_low(x − x₁)‖²``,

directly over the whole HF field ``x`` ``(B, T, X)`` with Adam, starting from the LF prior ``x₁``. With
exact observations (``σ_o = 0``) the data term is the constraint ``M ⊙ x = y``: the start is projected
and every Adam step is followed by the hard projection (projected gradient descent), so the result
honours the sensors exactly. With ``σ_o > 0`` the data term is a penalty and no projection is done.

``K`` iterations cost ``K`` energy gradients (one residual forward and backward each, FFTs only): the
chapter runs ``K ∈ {100, 300, 1000}`` (:data:`ITERATIONS`). Defaults: ``lr = 1e-2`` with ``λ_p = 1e-3``
(found good by the energy's author). Cases are independent (Adam is elementwise and ``E`` sums over
cases), so a batch gives the same fields as one case at a time. Optional ``jitter`` perturbs the start
with seeded Gaussian noise (restarts, diversity); the default start is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from neurips26.picsb.baselines import check_problem, jittered
from neurips26.picsb.burgers import BurgersConfig
from neurips26.picsb.energy import EnergyConfig, energy, project
from neurips26.validation import check_float, check_int, check_seed

#: The chapter's iteration budgets ``K``.
ITERATIONS = (100, 300, 1000)
#: Adam's default step size (with ``λ_p = 1e-3``).
LR = 1e-2


@dataclass(frozen=True)
class TTOResult:
    """``field`` ``(B, T, X)`` after ``K`` iterations (detached) and ``energy`` ``(K + 1, B)``: row ``k``
    is ``E`` after ``k`` iterations (row 0 the start, the last row the returned field); ``snapshots``
    maps each requested ``k`` to the field after ``k`` iterations (a budget curve from one run)."""

    field: Tensor
    energy: Tensor
    snapshots: dict[int, Tensor] = field(default_factory=dict)


def field_tto(
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    *,
    iterations: int = 100,
    lr: float = LR,
    config: EnergyConfig | None = None,
    burgers: BurgersConfig | None = None,
    jitter: float = 0.0,
    seed: int = 0,
    snapshots: tuple[int, ...] = (),
) -> TTOResult:
    """Adam on ``E`` over the field, from ``x₁`` (+ ``jitter`` noise), projected when ``σ_o = 0``.

    ``x1``, ``y``, ``mask``: ``(B, T, X)``; ``iterations`` ``K >= 1``; ``lr > 0``; ``config`` the energy
    (its ``sigma_o`` decides projection vs penalty); ``jitter >= 0`` the start noise std, drawn from
    ``seed``; ``snapshots`` iteration counts in ``[0, K]`` whose fields to keep. Runs in ``x1``'s dtype
    and device; does not touch the global RNG.
    """
    x1, y, mask = check_problem(x1, y, mask, burgers)
    iterations = check_int("iterations", iterations, minimum=1)
    lr = check_float("lr", lr, minimum=0.0, strict_min=True)
    jitter = check_float("jitter", jitter, minimum=0.0)
    seed = check_seed("seed", seed)
    if not isinstance(snapshots, tuple):
        raise TypeError(f"snapshots must be a tuple of iteration counts; got {type(snapshots).__name__}")
    keep = {check_int("snapshots", k, minimum=0, maximum=iterations) for k in snapshots}
    cfg = config or EnergyConfig()
    if not isinstance(cfg, EnergyConfig):
        raise TypeError(f"config must be an EnergyConfig; got {type(cfg).__name__}")
    hard = cfg.sigma_o == 0.0
    x1 = x1.detach()

    def constrain(x: Tensor) -> Tensor:
        return project(x, mask, y) if hard else x

    x = constrain(jittered(x1, jitter, seed)).requires_grad_(True)
    optimiser = torch.optim.Adam([x], lr=lr)
    history = []
    kept: dict[int, Tensor] = {0: x.detach().clone()} if 0 in keep else {}
    with torch.enable_grad():
        for k in range(1, iterations + 1):
            optimiser.zero_grad(set_to_none=True)
            e = energy(x, x1, y, mask, cfg, burgers)
            history.append(e.detach())
            e.sum().backward()
            optimiser.step()
            with torch.no_grad():
                x.copy_(constrain(x))
            if k in keep:
                kept[k] = x.detach().clone()
    result = x.detach()
    with torch.no_grad():
        history.append(energy(result, x1, y, mask, cfg, burgers))
    return TTOResult(field=result, energy=torch.stack(history), snapshots=dict(sorted(kept.items())))
