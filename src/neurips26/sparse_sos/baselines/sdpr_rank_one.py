"""An SDPRLayers-style gradient for SO(2) pose synchronisation (Holmes et al. 2024), as a cross-check.

When the Shor relaxation is tight its solution has rank two, ``X* = Y Yᵀ`` with ``Y`` the stacked
``Y_i = R_iᵀ`` (``2n × 2``), and ``Y`` solves the QCQP ``min ⟨C(θ), Y Yᵀ⟩ s.t. Y_i Y_iᵀ = I``. Its
first-order conditions with the certificate's Lagrange multipliers ``Λ_i`` (symmetric ``2 × 2``; the dual
certificate is ``C − Λ ⪰ 0``) are

    Σ_j C_ij(θ) Y_j − Λ_i Y_i = 0,     Y_i Y_iᵀ − I = 0,      i = 1 … n − 1,

with the gauge fixed by ``Y_0 = I``: a square system ``F(u, θ) = 0`` in ``u = (Y_{1:}, Λ_{1:})``. The gradient
of a loss ``ℓ(R(u))`` is ``−(∂ℓ/∂u) (∂F/∂u)⁻¹ ∂F/∂θ`` (implicit function theorem), never touching the SDP.
The starting point is the rotations extracted from the relaxation, polished by Newton steps on ``F``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparse_sos.tasks.pose_sync import PoseGraph

_F64 = torch.float64


def _unpack(graph: PoseGraph, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    n = graph.n
    Y = torch.cat([torch.eye(2, dtype=_F64, device=u.device)[None], u[: 4 * (n - 1)].reshape(n - 1, 2, 2)])
    lam = u[4 * (n - 1) :].reshape(n - 1, 3)
    L = torch.stack([torch.stack([lam[:, 0], lam[:, 1]], -1), torch.stack([lam[:, 1], lam[:, 2]], -1)], -2)
    return Y, L


def kkt_residual(graph: PoseGraph, u: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """``F(u, θ)``: the stationarity rows ``(C Y)_i − Λ_i Y_i`` and the constraints ``Y_i Y_iᵀ − I`` (upper
    triangle), ``i ≥ 1``."""
    Y, L = _unpack(graph, u)
    C = graph.cost_matrix(theta)
    CY = (C @ Y.reshape(2 * graph.n, 2)).reshape(graph.n, 2, 2)
    stationarity = CY[1:] - L @ Y[1:]
    gram = Y[1:] @ Y[1:].transpose(1, 2) - torch.eye(2, dtype=_F64, device=u.device)
    return torch.cat([stationarity.reshape(-1), gram[:, 0, 0], gram[:, 0, 1], gram[:, 1, 1]])


@dataclass(frozen=True)
class RankOneGradient:
    """The loss gradient, the polished rotations, the certificate's smallest eigenvalue (``≥ 0``: tight),
    and the KKT residual before and after polishing."""

    grad: torch.Tensor
    rotations: torch.Tensor
    certificate_min_eig: float
    residual_start: float
    residual: float


def multipliers(graph: PoseGraph, rotations: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """``Λ_i = sym(Σ_j C_ij Y_j Y_iᵀ)`` for every pose (``n × 2 × 2``): stationarity solved for ``Λ``."""
    Y = rotations.transpose(1, 2)
    CY = (graph.cost_matrix(theta) @ Y.reshape(2 * graph.n, 2)).reshape(graph.n, 2, 2)
    L = CY @ Y.transpose(1, 2)
    return 0.5 * (L + L.transpose(1, 2))


def rank_one_gradient(
    graph: PoseGraph,
    theta: torch.Tensor,
    rotations: torch.Tensor,
    loss: Callable[[torch.Tensor], torch.Tensor],
    *,
    newton_steps: int = 5,
) -> RankOneGradient:
    """``dℓ/dθ`` at the QCQP solution near ``rotations`` (``n × 2 × 2``, ``R_0 = I``), for a loss ``ℓ`` of
    the rotations (``n × 2 × 2``)."""
    if not isinstance(theta, torch.Tensor) or tuple(theta.shape) != (len(graph.edges),):
        raise ValueError(f"theta must be a tensor of shape ({len(graph.edges)},)")
    if not isinstance(rotations, torch.Tensor) or tuple(rotations.shape) != (graph.n, 2, 2):
        raise ValueError(f"rotations must be a tensor of shape ({graph.n}, 2, 2)")
    theta = theta.detach().to(_F64)
    rotations = rotations.detach().to(_F64)
    L = multipliers(graph, rotations, theta)
    Y = rotations.transpose(1, 2)
    u = torch.cat([Y[1:].reshape(-1), torch.stack([L[1:, 0, 0], L[1:, 0, 1], L[1:, 1, 1]], -1).reshape(-1)])
    start = float(kkt_residual(graph, u, theta).norm())
    for _ in range(newton_steps):
        J = torch.autograd.functional.jacobian(lambda v: kkt_residual(graph, v, theta), u)
        u = u - torch.linalg.solve(J, kkt_residual(graph, u, theta))
    Ju, Jt = torch.autograd.functional.jacobian(lambda v, t: kkt_residual(graph, v, t), (u, theta))
    u_req = u.clone().requires_grad_(True)
    Yp, _ = _unpack(graph, u_req)
    (dl_du,) = torch.autograd.grad(loss(Yp.transpose(1, 2)), u_req)
    grad = -(torch.linalg.solve(Ju.T, dl_du) @ Jt)
    polished = _unpack(graph, u)[0].transpose(1, 2)
    Lfull = multipliers(graph, polished, theta)
    Z = graph.cost_matrix(theta) - torch.block_diag(*Lfull)
    return RankOneGradient(
        grad,
        polished,
        float(np.linalg.eigvalsh(Z.detach().cpu().numpy()).min()),
        start,
        float(kkt_residual(graph, u, theta).norm()),
    )
