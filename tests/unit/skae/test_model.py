"""The KAE: exact shrinkage, the sign-split and LISTA codes, the paper's initialisation, transitions,
validation, seeding, and a short training run that lowers the loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.skae.losses import kae_loss
from neurips26.skae.model import (
    ALPHA,
    KAE,
    LIPSCHITZ_MARGIN,
    LISTAEncoder,
    block_groups,
    shrink,
    sign_split,
)
from neurips26.train import fit


def states(n: int = 512, scale: float = 3.0, seed: int = 0) -> torch.Tensor:
    return scale * torch.randn(n, 2, generator=torch.Generator().manual_seed(seed))


def test_shrink_is_exact() -> None:
    a = torch.tensor([-3.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 3.0], dtype=torch.float64)
    out = shrink(a, 0.5)
    assert torch.equal(out, torch.tensor([-2.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25, 2.5], dtype=torch.float64))
    # bit-exact against sign(a)(|a| - τ) where |a| > τ, exactly zero where |a| <= τ (boundary included)
    x = torch.randn(10_000, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    tau = 0.3
    y = shrink(x, tau)
    big = x.abs() > tau
    assert torch.equal(y[big], torch.sign(x[big]) * (x[big].abs() - tau))
    assert torch.all(y[~big] == 0)


def test_sign_split_halves_are_never_both_active() -> None:
    model = KAE("lista", "dense", 64, seed=3)
    with torch.no_grad():
        z = model.encode(states())
        u = model.encoder.trace(states())[2]
    m = 32
    assert z.shape == (512, 64)
    assert torch.all(z >= 0)
    assert torch.all(z[:, :m] * z[:, m:] == 0)
    assert torch.equal(z[:, :m] - z[:, m:], u)
    assert torch.equal(sign_split(torch.tensor([[1.5, -2.0, 0.0]])), torch.tensor([[1.5, 0, 0, 0, 2.0, 0]]))


def test_lista_code_is_zero_exactly_where_last_argument_is_within_tau() -> None:
    model = KAE("lista", "dense", 64, seed=0)
    with torch.no_grad():
        _, a, u = model.encoder.trace(states(scale=5.0))
    tau = model.encoder.tau
    inside = a.abs() <= tau
    assert inside.any() and (~inside).any()  # both cases occur
    assert torch.all(u[inside] == 0)
    assert torch.all(u[~inside] != 0)


def test_lista_recursion_by_hand() -> None:
    """``u⁰ = shrink(c, τ)``, ``u^{q+1} = shrink(S u^q + c, τ)``, ``Q = 2``, with a non-symmetric ``S``."""
    model = KAE("lista", "dense", 16, seed=4).double()
    enc = model.encoder
    with torch.no_grad():
        enc.S.add_(0.1 * torch.randn(8, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
        x = states(64).double()
        c = enc.precode(x).numpy()
        s, tau = enc.S.numpy(), float(enc.tau)

        def soft(v: np.ndarray) -> np.ndarray:
            return np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)

        u = soft(c)
        for _ in range(2):
            u = soft(u @ s.T + c)
        np.testing.assert_allclose(enc.trace(x)[2].numpy(), u, rtol=0, atol=1e-12)
        np.testing.assert_allclose(model.encode(x).numpy(), np.concatenate([u.clip(0), (-u).clip(0)], 1))
    one_shot = KAE("lista", "dense", 16, loops=0, seed=4)
    with torch.no_grad():
        x = states(8)
        c = one_shot.encoder.precode(x)
        assert torch.equal(one_shot.encoder.trace(x)[2], shrink(c, one_shot.encoder.tau))


def test_lista_initialisation_follows_the_paper() -> None:
    model = KAE("lista", "dense", 64, state_dim=2, seed=5)
    enc = model.encoder
    assert isinstance(enc, LISTAEncoder) and enc.loops == 2
    w_d = model.decoder.dictionary.detach()[:, :32]
    assert torch.allclose(model.decoder.dictionary.detach()[:, 32:], -w_d)
    assert torch.allclose(w_d.norm(dim=0), torch.ones(32), atol=1e-6)
    gram = w_d.T @ w_d
    norm = torch.linalg.matrix_norm(gram.double(), ord=2).item()
    assert norm == pytest.approx(16.0, rel=1e-5)  # 32 atoms = 16 orthonormal bases of R^2
    assert enc.lipschitz == pytest.approx(LIPSCHITZ_MARGIN * norm, rel=1e-5)
    assert model.tau == pytest.approx(ALPHA / enc.lipschitz, rel=1e-6)
    assert torch.allclose(enc.S.detach(), torch.eye(32) - gram / enc.lipschitz, atol=1e-6)
    # unit-norm atoms, and at init D z equals the sparse-coding decoder W_d u of the base code
    assert torch.allclose(model.decoder.matrix().norm(dim=0), torch.ones(64), atol=1e-6)
    with torch.no_grad():
        x = states(64)
        u = enc.trace(x)[2]
        assert torch.allclose(model.decode(model.encode(x)), u @ w_d.T, atol=1e-5)
    assert torch.equal(model.transition_matrix().detach(), torch.eye(64))


def test_decoder_normalises_atoms_after_updates() -> None:
    model = KAE("lista", "dense", 16, seed=0)
    with torch.no_grad():
        model.decoder.dictionary.mul_(torch.linspace(0.2, 5.0, 16))
    assert torch.allclose(model.decoder.matrix().norm(dim=0), torch.ones(16), atol=1e-6)
    mlp = KAE("mlp_sparse", "dense", 16, seed=0)
    assert not torch.allclose(mlp.decoder.matrix().norm(dim=0), torch.ones(16))


def test_mlp_rows_and_topk() -> None:
    x = states(256)
    with torch.no_grad():
        z_sparse = KAE("mlp_sparse", "dense", 32, seed=0).encode(x)
        z_dense = KAE("mlp_dense", "dense", 32, seed=0).encode(x)
        z_top = KAE("topk", "dense", 32, k=4, seed=0).encode(x)
    assert torch.all(z_sparse >= 0) and (z_sparse == 0).any()
    assert (z_dense < 0).any()
    assert torch.all((z_top != 0).sum(dim=-1) <= 4)
    assert torch.all(z_top >= 0)


def test_block_groups_and_block_transition_stays_block_diagonal() -> None:
    assert np.bincount(block_groups(64, 3)).tolist() == [22, 21, 21]
    assert block_groups(8, 4).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    model = KAE("lista", "block", 16, blocks=4, seed=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    windows = torch.randn(16, 5, 2, generator=torch.Generator().manual_seed(0))
    for _ in range(3):
        opt.zero_grad()
        kae_loss(model, windows).backward()
        opt.step()
    k = model.transition_matrix().detach()
    g = torch.as_tensor(block_groups(16, 4))
    off = g[:, None] != g[None, :]
    assert torch.all(k[off] == 0)
    assert not torch.equal(k[~off], torch.eye(16)[~off])  # the blocks did learn


def test_offblock_penalty_by_hand() -> None:
    model = KAE("mlp_dense", "softblock", 4, blocks=2, seed=0)
    with torch.no_grad():
        model.transition.K.copy_(torch.arange(16.0).reshape(4, 4) - 8)
    k = (np.arange(16.0) - 8).reshape(4, 4)
    expected = np.abs(k[:2, 2:]).sum() + np.abs(k[2:, :2]).sum()
    assert model.offblock_penalty().item() == expected
    assert model.lambda_off == 1e-4
    assert KAE("mlp_dense", "dense", 4).offblock_penalty().item() == 0.0


def test_seeded_and_leaves_global_rng_alone() -> None:
    before = torch.get_rng_state()
    a = KAE("lista", "softblock", 16, blocks=2, seed=7).state_dict()
    assert torch.equal(torch.get_rng_state(), before)
    b = KAE("lista", "softblock", 16, blocks=2, seed=7).state_dict()
    c = KAE("lista", "softblock", 16, blocks=2, seed=8).state_dict()
    assert all(torch.equal(a[name], b[name]) for name in a)
    assert not all(torch.equal(a[name], c[name]) for name in a)


def test_runs_in_float64_and_follows_the_model_dtype() -> None:
    model = KAE("lista", "dense", 16, seed=0).double()
    z = model.encode(torch.randn(3, 2))
    assert z.dtype == torch.float64 and model.forward(torch.randn(3, 2)).dtype == torch.float64


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"encoder": "ista"}, r"encoder must be one of \('lista', 'mlp_sparse', 'mlp_dense', 'topk'\)"),
        ({"transition": "diag"}, r"transition must be one of \('dense', 'block', 'softblock'\)"),
        ({"encoder": "topk", "k": 0}, "k must be >= 1"),
        ({"encoder": "topk", "k": 65}, "k must be <= 64"),
        ({"encoder": "topk"}, "k must be given"),
        ({"encoder": "lista", "k": 3}, "k is only used"),
        ({"latent": 63}, "latent must be even"),
        ({"latent": 0}, "latent must be >= 1"),
        ({"transition": "block"}, "blocks must be given"),
        ({"transition": "softblock", "blocks": 65}, "blocks must be <= 64"),
        ({"transition": "dense", "blocks": 2}, "blocks is only used"),
        ({"state_dim": 0}, "state_dim must be >= 1"),
        ({"seed": -1}, "seed must be >= 0"),
        ({"alpha": -0.1}, "alpha must be >= 0"),
    ],
)
def test_bad_configs(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        KAE(**{"latent": 64, **kwargs})


def test_bad_states() -> None:
    model = KAE("lista", "dense", 16, state_dim=3)
    with pytest.raises(ValueError, match="state_dim=3"):
        model.encode(torch.zeros(4, 2))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        model.encode(np.zeros((4, 3)))  # type: ignore[arg-type]


def test_fifty_lista_steps_on_a_linear_system_decrease_the_loss() -> None:
    """Smoke training with ``neurips26.train.fit``: windows of ``x_{t+1} = A x_t`` (a damped rotation)."""
    theta, rho = 0.2, 0.98
    a = rho * torch.tensor([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    gen = torch.Generator().manual_seed(0)
    x0 = 2 * torch.rand(512, 2, generator=gen) - 1
    steps = [x0]
    for _ in range(8):
        steps.append(steps[-1] @ a.T)
    windows = torch.stack(steps, dim=1)  # (512, 9, 2)
    model = KAE("lista", "dense", 32, seed=0)

    def batches(step: int) -> torch.Tensor:
        return windows[(step * 64) % 512 : (step * 64) % 512 + 64]

    with torch.no_grad():
        start = kae_loss(model, windows).item()
    history = fit(model, kae_loss, batches, steps=50, seed=0, lr=3e-3, progress=False)
    with torch.no_grad():
        end = kae_loss(model, windows).item()
    assert all(math.isfinite(v) for v in history.loss)
    assert end < 0.8 * start


@pytest.mark.parametrize(
    ("encoder", "transition", "blocks", "k"),
    [("lista", "softblock", 4, None), ("topk", "block", 2, 4), ("mlp_dense", "dense", None, None)],
)
def test_creates_tensors_on_the_model_device(
    encoder: str, transition: str, blocks: int | None, k: int | None
):
    """On the ``meta`` device (a stand-in for an accelerator) any tensor made on the CPU would raise."""
    model = KAE(encoder, transition, 16, blocks=blocks, k=k).to("meta")
    loss = kae_loss(model, torch.randn(4, 9, 2))  # CPU windows are moved to the model's device
    loss.backward()
    assert loss.device.type == "meta" and model.transition.K.grad.device.type == "meta"


def test_state_dict_holds_learned_weights_only_and_reloads_exactly() -> None:
    """``τ``, the block mask and the groups follow from (config, seed); float16 weights cannot round them."""
    model = KAE("lista", "block", 16, blocks=2, seed=9)
    state = model.state_dict()
    assert set(state) == {
        "encoder.S",
        "encoder.precode.0.weight",
        "encoder.precode.0.bias",
        "encoder.precode.2.weight",
        "encoder.precode.2.bias",
        "encoder.precode.4.weight",
        "encoder.precode.4.bias",
        "decoder.dictionary",
        "transition.K",
    }
    rebuilt = KAE("lista", "block", 16, blocks=2, seed=9)
    rebuilt.load_state_dict({name: value.half().float() for name, value in state.items()})
    assert rebuilt.tau == model.tau
    assert torch.equal(rebuilt.transition.mask, model.transition.mask)
