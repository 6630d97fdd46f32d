"""The training objective of the paper (§method_training, eqs. loss_state_terms, loss_latent_terms,
training_objective), on windows of ``L + 1`` adjacent stored states.

For a batch of ``B`` windows ``x_{b,0..L}`` with ``z^enc_ℓ = E(x_ℓ)``, ``z^roll_ℓ = K^ℓ z^enc_0``,
``x^rec_ℓ = D(z^enc_ℓ)`` and ``x̂_ℓ = D(z^roll_ℓ)``, every sum runs over the future offsets ``ℓ = 1..L`` and
is divided by ``B L``::

    L_pred = Σ ‖x̂_ℓ − x_ℓ‖₂ / (B L √d_x)        L_rec = Σ ‖x^rec_ℓ − x_ℓ‖₂ / (B L √d_x)
    L_lin  = Σ ‖z^roll_ℓ − z^enc_ℓ‖₂ / (B L)     L_sp  = Σ ‖z^roll_ℓ‖₁ / (B L)
    L = λ_pred L_pred + λ_rec L_rec + λ_lin L_lin + λ_sp L_sp + λ_off Σ_{g(i)≠g(j)} |K_ij|

Norms, not squared norms; the ℓ1 term acts on the *rolled-out* latents, and the reconstruction term on the
future states only. This is the latest draft's text, and the authors' current ``skae/training/runner.py``
(``train_step``) agrees: it reconstructs ``z_all[:, 1:]``, rolls ``K`` out from ``z_0`` and puts the ℓ1 term
on the rollout by default (``SPARSITY_TARGET="rollout"``). The earlier draft used other weights and divided
the whole loss by ``L`` once more, and an older ``loss_sequence`` used squared norms summed over ``ℓ``; we
follow the latest draft. Gradients flow into both sides of ``L_lin`` (no stop-gradient on ``z^enc``), as in
the authors' code. Weights (appendix "Controlled multibasin training"): ``(1, 0.03, 1, 3e-3)``,
``λ_sp = 0`` for Dense MLP, ``λ_off = 1e-4`` for the soft-block rows only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from neurips26 import distributed
from neurips26.skae.model import KAE, LAMBDA_OFF
from neurips26.validation import check_float, check_int

#: Training-window rollout length on the controlled benchmark (10 on Dysts).
WINDOW = 8


@dataclass(frozen=True)
class LossWeights:
    """``λ_pred, λ_rec, λ_lin, λ_sp, λ_off`` (paper appendix, controlled benchmark)."""

    pred: float = 1.0
    rec: float = 0.03
    lin: float = 1.0
    sp: float = 3e-3
    off: float = 0.0

    def __post_init__(self) -> None:
        for name in ("pred", "rec", "lin", "sp", "off"):
            check_float(f"weights.{name}", getattr(self, name), minimum=0.0)


def default_weights(model: KAE, *, sparsity: float = 3e-3) -> LossWeights:
    """The paper's weights for ``model``'s row: ``λ_sp = 0`` for Dense MLP, ``λ_off`` only for soft-block.

    ``sparsity`` is ``λ_sp`` of the sparse rows (3e-3 controlled, 6e-3 on Dysts).
    """
    if not isinstance(model, KAE):
        raise TypeError(f"model must be a KAE; got {type(model).__name__}")
    sparsity = check_float("sparsity", sparsity, minimum=0.0)
    weights = LossWeights(sp=sparsity if model.sparse else 0.0)
    if model.transition_kind == "softblock":
        weights = replace(weights, off=LAMBDA_OFF)
    return weights


def check_windows(model: KAE | nn.Module, windows: object) -> Tensor:
    """A finite ``(B, L + 1, state_dim)`` tensor with ``L ≥ 1``, moved to the model's device.

    ``model`` may be the data-parallel wrapper of a KAE (its attributes are read off the module inside).
    """
    kae = distributed.unwrap(model)
    if not isinstance(windows, Tensor):
        raise TypeError(f"windows must be a torch.Tensor; got {type(windows).__name__}")
    if windows.ndim != 3 or windows.shape[1] < 2 or windows.shape[2] != kae.state_dim:
        raise ValueError(
            f"windows must have shape (B, L + 1 >= 2, state_dim={kae.state_dim}); got {tuple(windows.shape)}"
        )
    check_int("windows.shape[0]", windows.shape[0], minimum=1)
    if not torch.isfinite(windows).all():
        raise ValueError("windows must contain only finite values (no NaN or inf)")
    return windows.to(device=kae.device, dtype=kae.transition.K.dtype)


def loss_terms(model: KAE | nn.Module, windows: Tensor) -> dict[str, Tensor]:
    """The unweighted terms ``pred, rec, lin, sp, off`` (scalar tensors) on a batch of windows.

    Calls the module (``model(x, windows=True)``, :meth:`~neurips26.skae.model.KAE.window_pass`), so
    ``model`` may be its data-parallel wrapper under torchrun.
    """
    x = check_windows(model, windows)
    batch, length, dim = x.shape[0], x.shape[1] - 1, x.shape[2]
    out = model(x, windows=True)
    future = x[:, 1:]
    count = batch * length
    return {
        "pred": torch.linalg.vector_norm(out.x_hat - future, dim=-1).sum() / (count * math.sqrt(dim)),
        "rec": torch.linalg.vector_norm(out.x_rec - future, dim=-1).sum() / (count * math.sqrt(dim)),
        "lin": torch.linalg.vector_norm(out.z_roll - out.z_enc[:, 1:], dim=-1).sum() / count,
        "sp": out.z_roll.abs().sum() / count,
        "off": out.off,
    }


def kae_loss(model: KAE | nn.Module, windows: Tensor, weights: LossWeights | None = None) -> Tensor:
    """The weighted objective (paper eq. training_objective); ``weights`` default to :func:`default_weights`.

    Takes ``(model, batch)`` as :func:`neurips26.train.fit`'s ``loss_fn`` does (``model`` may be the
    data-parallel wrapper of a KAE).
    """
    if weights is None:
        weights = default_weights(distributed.unwrap(model))
    elif not isinstance(weights, LossWeights):
        raise TypeError(f"weights must be a LossWeights; got {type(weights).__name__}")
    terms = loss_terms(model, windows)
    total = (
        weights.pred * terms["pred"]
        + weights.rec * terms["rec"]
        + weights.lin * terms["lin"]
        + weights.sp * terms["sp"]
    )
    if weights.off:
        total = total + weights.off * terms["off"]
    return total
