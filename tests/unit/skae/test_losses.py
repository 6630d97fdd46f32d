"""The training objective on a tiny case computed by hand, its weights, gradients and bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.skae.losses import LossWeights, default_weights, kae_loss, loss_terms
from neurips26.skae.model import KAE


def linear_kae(transition: str = "dense", blocks: int | None = None) -> KAE:
    """A 2-D KAE with a linear encoder ``E x = diag(1, .5) x``, ``D = I`` and ``K = [[2, .3], [-.4, .5]]``."""
    model = KAE("mlp_dense", transition, 2, state_dim=2, hidden=(), blocks=blocks).double()
    with torch.no_grad():
        layer = model.encoder.net[0]
        layer.weight.copy_(torch.diag(torch.tensor([1.0, 0.5], dtype=torch.float64)))
        layer.bias.zero_()
        model.decoder.dictionary.copy_(torch.eye(2))
        model.transition.K.copy_(torch.tensor([[2.0, 0.3], [-0.4, 0.5]], dtype=torch.float64))
    return model


WINDOWS = torch.tensor(
    [[[1.0, 1.0], [1.0, 0.0], [0.0, 2.0]], [[-1.0, 2.0], [0.5, 0.5], [3.0, -1.0]]], dtype=torch.float64
)


def by_hand(k: np.ndarray, windows: np.ndarray) -> dict[str, float]:
    """The paper's four terms written out with NumPy loops (B = 2 windows, L = 2)."""
    e = np.diag([1.0, 0.5])
    pred = rec = lin = sp = 0.0
    for w in windows:
        z0 = e @ w[0]
        for ell in (1, 2):
            z_roll = np.linalg.matrix_power(k, ell) @ z0
            z_enc = e @ w[ell]
            pred += np.linalg.norm(z_roll - w[ell])  # D = I
            rec += np.linalg.norm(z_enc - w[ell])
            lin += np.linalg.norm(z_roll - z_enc)
            sp += np.abs(z_roll).sum()
    n = 2 * 2
    return {"pred": pred / (n * math.sqrt(2)), "rec": rec / (n * math.sqrt(2)), "lin": lin / n, "sp": sp / n}


def test_terms_and_total_match_a_hand_computation() -> None:
    model = linear_kae()
    k = np.array([[2.0, 0.3], [-0.4, 0.5]])
    expected = by_hand(k, WINDOWS.numpy())
    terms = loss_terms(model, WINDOWS)
    for name, value in expected.items():
        assert terms[name].item() == pytest.approx(value, rel=1e-12)
    # Dense MLP row: λ_sp = 0, no off-block term
    total = expected["pred"] + 0.03 * expected["rec"] + expected["lin"]
    assert kae_loss(model, WINDOWS).item() == pytest.approx(total, rel=1e-12)
    weights = LossWeights(pred=0.5, rec=2.0, lin=0.0, sp=1.0)
    custom = 0.5 * expected["pred"] + 2.0 * expected["rec"] + expected["sp"]
    assert kae_loss(model, WINDOWS, weights).item() == pytest.approx(custom, rel=1e-12)


def test_softblock_adds_the_l1_off_block_penalty() -> None:
    model = linear_kae("softblock", blocks=2)
    expected = by_hand(np.array([[2.0, 0.3], [-0.4, 0.5]]), WINDOWS.numpy())
    total = expected["pred"] + 0.03 * expected["rec"] + expected["lin"] + 1e-4 * (0.3 + 0.4)
    assert kae_loss(model, WINDOWS).item() == pytest.approx(total, rel=1e-12)


def test_default_weights_per_row() -> None:
    assert default_weights(KAE("mlp_dense", "dense", 8)) == LossWeights(1.0, 0.03, 1.0, 0.0, 0.0)
    assert default_weights(KAE("lista", "dense", 8)) == LossWeights(1.0, 0.03, 1.0, 3e-3, 0.0)
    assert default_weights(KAE("mlp_sparse", "block", 8, blocks=2)).sp == 3e-3
    assert default_weights(KAE("lista", "softblock", 8, blocks=2)).off == 1e-4
    assert default_weights(KAE("lista", "dense", 8), sparsity=6e-3).sp == 6e-3


def test_gradients_are_finite_when_a_residual_is_exactly_zero() -> None:
    model = linear_kae()
    with torch.no_grad():
        model.encoder.net[0].weight.copy_(torch.eye(2))  # x_rec = x exactly: ‖x_rec − x‖ = 0
    loss = kae_loss(model, WINDOWS, LossWeights(rec=1.0))
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


@pytest.mark.parametrize(
    ("windows", "error", "match"),
    [
        (np.zeros((2, 3, 2)), TypeError, "windows must be a torch.Tensor"),
        (torch.zeros(2, 1, 2), ValueError, r"windows must have shape \(B, L \+ 1 >= 2"),
        (torch.zeros(2, 3, 3), ValueError, "state_dim=2"),
        (torch.zeros(3, 2), ValueError, "windows must have shape"),
        (torch.tensor([[[0.0, float("nan")], [0.0, 0.0]]]), ValueError, "windows must contain only finite"),
    ],
)
def test_bad_windows(windows: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        kae_loss(KAE("lista", "dense", 8), windows)  # type: ignore[arg-type]


def test_bad_weights() -> None:
    with pytest.raises(ValueError, match="weights.sp must be >= 0"):
        LossWeights(sp=-1.0)
    with pytest.raises(TypeError, match="weights must be a LossWeights"):
        kae_loss(KAE("lista", "dense", 8), torch.zeros(1, 2, 2), {"sp": 0.0})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model must be a KAE"):
        default_weights(torch.nn.Linear(2, 2))  # type: ignore[arg-type]
