"""The sparsely supervised denoising loss (chapter 05, Eqs. (1)–(2)).

For one example with per-example weight ``λ`` (``λ(σ)`` of the noise schedule) and residual
``r = pred − target`` of shape (C, H, W), the full loss (Eq. (1)) and the SSD loss (Eq. (2)) are

    ℓ_full = λ / (C·H·W) · Σ_p Σ_c r_{c,p}²,
    ℓ_SSD  = λ / Z       · Σ_p m_p Σ_c r_{c,p}²,

with ``Z`` the number of kept entries ``C·Σ_p m_p`` (``normaliser="kept"``, default: the loss keeps the
scale of ``ℓ_full`` for every ``η``) or all entries ``C·H·W`` (``"all"``: the loss shrinks by ``1 − η``).
Both are averaged over the batch. The residual is whatever the parametrisation regresses (the
EDM-preconditioned ``x₀`` residual by default, or the ``ε`` or ``v`` residual): the mask does not care.
``x_t`` itself is built from the full clean image and is never masked; :func:`input_masked` builds the
*other* design (MaskDM-style input masking) for the baseline.

For a fixed-count mask independent of the data, ``E_m[ℓ_SSD] = ℓ_full`` exactly under ``"kept"`` (each
pixel is kept with probability ``k/HW`` and ``Z = C·k`` is constant), so the population minimiser is
unchanged; for Bernoulli masks ``E_m[ℓ_SSD] = (1 − η)·ℓ_full`` exactly under ``"all"``.
"""

from __future__ import annotations

import torch

from neurips26.ssd.masks import check_images, check_mask
from neurips26.validation import check_choice

PARAMETRISATIONS = ("x0", "eps", "v")
NORMALISERS = ("kept", "all")


def _check_weight(weight: object, batch: int, like: torch.Tensor) -> torch.Tensor | None:
    if weight is None:
        return None
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"weight must be a torch.Tensor of shape ({batch},); got {type(weight).__name__}")
    if weight.shape != (batch,):
        raise ValueError(f"weight must have shape ({batch},) (one λ per example); got {tuple(weight.shape)}")
    return weight.to(like.dtype)


def per_example_loss(
    pred: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    normaliser: str = "kept",
) -> torch.Tensor:
    """``(1/Z) Σ_p m_p Σ_c (pred − target)²`` for every example, shape (B,) (Eq. (2) without ``λ``).

    ``mask=None`` is the full loss, ``Z = C·H·W``. An example whose mask keeps nothing (possible
    with Bernoulli masks) contributes 0 under ``"kept"`` instead of 0/0.
    """
    pred = check_images("pred", pred)
    target = check_images("target", target)
    if pred.shape != target.shape:
        raise ValueError(f"pred must have the shape of target {tuple(target.shape)}; got {tuple(pred.shape)}")
    normaliser = check_choice("normaliser", normaliser, NORMALISERS)
    sq = (pred - target) ** 2
    all_entries = float(sq[0].numel())
    if mask is None:
        return sq.sum(dim=(1, 2, 3)) / all_entries
    m = check_mask(mask, pred)
    masked_sum = (m * sq).sum(dim=(1, 2, 3))  # multiplying by 1.0 is exact: η = 0 gives the full sum
    if normaliser == "all":
        return masked_sum / all_entries
    kept = m.expand_as(sq).sum(dim=(1, 2, 3))  # C · (kept pixels), an exact integer in floating point
    return masked_sum / kept.clamp(min=1.0)


def ssd_loss(
    pred: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor | None,
    *,
    weight: torch.Tensor | None = None,
    normaliser: str = "kept",
) -> torch.Tensor:
    """Batch mean of ``λ_b · ℓ_b`` with ``ℓ_b`` from :func:`per_example_loss` (Eq. (2)); a scalar.

    pred, target: (B, C, H, W) network output and regression target in the same parametrisation;
    mask: (B, 1, H, W) 0/1 from :func:`~neurips26.ssd.masks.sample_mask`, or ``None`` for the full loss;
    weight: ``λ`` per example (B,), or ``None`` for 1. With ``mask=None`` or an all-ones mask (``η = 0``)
    the result equals the plain weighted mean squared error bit for bit.
    """
    per_example = per_example_loss(pred, target, mask, normaliser=normaliser)
    lam = _check_weight(weight, pred.shape[0], pred)
    if lam is not None:
        per_example = lam * per_example
    return per_example.mean()


def full_loss(
    pred: torch.Tensor, target: torch.Tensor, *, weight: torch.Tensor | None = None
) -> torch.Tensor:
    """The dense denoising loss of Eq. (1): :func:`ssd_loss` with no mask."""
    return ssd_loss(pred, target, None, weight=weight)


def input_masked(x_t: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """MaskDM-style network input ``[m ⊙ x_t ; m]`` of shape (B, C + 1, H, W) for the baseline.

    This is *not* SSD: here the network cannot see the masked pixels of ``x_t`` and is told where they
    are through the extra channel (which is why its U-Net needs ``in_channels = C + 1``). A mask with
    one channel is required, since it becomes that extra input channel.
    """
    x_t = check_images("x_t", x_t)
    m = check_mask(mask, x_t)
    if m.shape[1] != 1:
        raise ValueError(f"mask must have one channel (B, 1, H, W) for input masking; got {tuple(m.shape)}")
    return torch.cat([x_t * m, m], dim=1)
