"""The auxiliary energy that defines the observation-conditioned HF endpoint law (chapter 06, §3.2).

``p*(x_0 | x_1, y, M) ∝ exp(−E(x_0))`` with

``E(x) = λ_R ‖R(x)‖² + λ_o/(2σ_o²) ‖M ⊙ x − y‖² + λ_p ‖P_low(x − x_1)‖²``:

- the physics term, ``R`` the Burgers scheme's one-step defect (:func:`neurips26.picsb.burgers.residual`);
- the data term; with exact observations (``σ_o = 0``) it becomes the hard constraint ``M ⊙ x = y``,
  imposed by :func:`project` instead of a penalty (the term is then left out of ``E``);
- the LF-prior term [reconstruction]: ``P_low`` keeps the Fourier modes ``|k| <= 2`` of each frame, the
  scales the 8-point LF grid resolves after 2/3 de-aliasing, and ties them to the LF prior ``x_1``;
  without it residual plus a few sensors leaves many PDE solutions.

Sums run over ``(T, X)``; every function works on any leading batch shape and returns one energy per case.
Used by the field-space test-time optimisation baseline, the optional energy polish of the refresh and the
per-round logging.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.picsb.burgers import BurgersConfig, residual
from neurips26.picsb.observations import check_mask
from neurips26.validation import check_float, check_int


@dataclass(frozen=True)
class EnergyConfig:
    """The weights ``λ_R, λ_o, λ_p``, the noise level ``σ_o`` (0: hard constraint, no data term) and the
    low-pass cut ``k_low`` of ``P_low`` [our choice: ``|k| <= 2``]."""

    lambda_r: float = 1.0
    lambda_o: float = 1.0
    lambda_p: float = 1e-3
    sigma_o: float = 0.0
    k_low: int = 2

    def __post_init__(self) -> None:
        check_float("lambda_r", self.lambda_r, minimum=0.0)
        check_float("lambda_o", self.lambda_o, minimum=0.0)
        check_float("lambda_p", self.lambda_p, minimum=0.0)
        check_float("sigma_o", self.sigma_o, minimum=0.0)
        check_int("k_low", self.k_low, minimum=0)


def low_pass(x: Tensor, k_low: int = 2) -> Tensor:
    """``P_low x``: keep the Fourier modes ``|k| <= k_low`` along the last axis (each frame), drop the rest.

    An orthogonal projection (idempotent, self-adjoint); ``k_low >= X/2`` keeps everything.
    """
    k_low = check_int("k_low", k_low, minimum=0)
    spectrum = torch.fft.rfft(x, dim=-1)
    keep = torch.arange(spectrum.shape[-1], device=x.device) <= k_low
    return torch.fft.irfft(spectrum * keep, n=x.shape[-1], dim=-1)


def project(x: Tensor, mask: Tensor, y: Tensor) -> Tensor:
    """The hard observation constraint: ``(1 − M) ⊙ x + M ⊙ y`` (``M ⊙ x = y`` exactly afterwards).

    Differentiable in ``x`` (zero gradient on the sensors); ``mask`` and ``y`` have ``x``'s shape.
    """
    mask = check_mask(mask, x)
    if y.shape != x.shape:
        raise ValueError(f"y must have the field's shape {tuple(x.shape)}; got {tuple(y.shape)}")
    return torch.where(mask, y.to(x), x)


def energy_terms(
    x: Tensor,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    config: EnergyConfig | None = None,
    burgers: BurgersConfig | None = None,
) -> dict[str, Tensor]:
    """The three weighted terms of ``E`` per case, shape ``x.shape[:-2]``: ``"residual"``
    ``λ_R ‖R(x)‖²``, ``"data"`` ``λ_o/(2σ_o²) ‖M ⊙ x − y‖²`` (zeros when ``σ_o = 0``), ``"prior"``
    ``λ_p ‖P_low(x − x_1)‖²``; and ``"total"``, their sum ``E(x)``."""
    cfg = config or EnergyConfig()
    mask = check_mask(mask, x)
    for name, other in (("x1", x1), ("y", y)):
        if other.shape != x.shape:
            raise ValueError(f"{name} must have the field's shape {tuple(x.shape)}; got {tuple(other.shape)}")
    dims = (-2, -1)
    terms = {"residual": cfg.lambda_r * residual(x, burgers).square().sum(dims)}
    if cfg.sigma_o > 0:
        misfit = torch.where(mask, x - y, torch.zeros_like(x))
        terms["data"] = cfg.lambda_o / (2.0 * cfg.sigma_o**2) * misfit.square().sum(dims)
    else:  # hard constraint: M ⊙ x = y is imposed by project, not penalised
        terms["data"] = torch.zeros_like(terms["residual"])
    terms["prior"] = cfg.lambda_p * low_pass(x - x1, cfg.k_low).square().sum(dims)
    terms["total"] = terms["residual"] + terms["data"] + terms["prior"]
    return terms


def energy(
    x: Tensor,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    config: EnergyConfig | None = None,
    burgers: BurgersConfig | None = None,
) -> Tensor:
    """``E(x; x_1, y, M)`` per case (Eq. of §3.2), shape ``x.shape[:-2]``; differentiable in ``x``."""
    return energy_terms(x, x1, y, mask, config, burgers)["total"]
