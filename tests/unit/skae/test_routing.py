"""Staged routing: oracle and support routing recover per-basin local maps on a piecewise-affine toy; the
staged model starts as the global model and its second stage trains only the local maps; fallback,
partition controls, the support-gated K, the wrong-support freeze and validation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from neurips26.skae.losses import default_weights
from neurips26.skae.model import KAE
from neurips26.skae.rollout import rollout
from neurips26.skae.routing import (
    FrozenGateStep,
    GatedStep,
    LocalMaps,
    family_centers,
    fit_local_maps,
    kmeans_router,
    make_router,
    oracle_router,
    random_router,
    routed_loss,
    support_router,
    wrong_families,
)

# piecewise-affine toy: x' = c_b + A_b (x − c_b), b = 1 if x₁ ≥ 0 else 0
CENTERS = torch.tensor([[-1.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
MATS = torch.tensor([[[0.9, -0.2], [0.2, 0.9]], [[0.8, 0.1], [-0.1, 0.7]]], dtype=torch.float64)


def side(x: Tensor) -> Tensor:
    return (x[..., 0] >= 0).long()


def toy_step(x: Tensor) -> Tensor:
    b = side(x)
    c = CENTERS[b]
    return c + ((x - c).unsqueeze(-2) @ MATS[b].transpose(-1, -2)).squeeze(-2)


def toy_trajectories(n: int, steps: int, seed: int) -> Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, 2, generator=g, dtype=torch.float64) * 4 - 2
    out = [x]
    for _ in range(steps):
        x = toy_step(x)
        out.append(x)
    return torch.stack(out, dim=1)


def toy_truth(x0: Tensor, horizon: int) -> np.ndarray:
    return toy_trajectories_from(x0, horizon)[:, 1:].numpy()


def toy_trajectories_from(x0: Tensor, steps: int) -> Tensor:
    x, out = x0, [x0]
    for _ in range(steps):
        x = toy_step(x)
        out.append(x)
    return torch.stack(out, dim=1)


def identity_model() -> KAE:
    """A KAE whose encoder and decoder are the identity: the latent is the state."""
    m = KAE("mlp_dense", "dense", 2, state_dim=2, seed=0).double()
    m.encoder, m.decoder = nn.Identity(), nn.Identity()
    return m


class SplitEncoder(nn.Module):
    """A sparse code whose support is the half-plane: ``[x, 0]`` if ``x₁ ≥ 0`` else ``[0, x]``."""

    def forward(self, x: Tensor) -> Tensor:
        right = (x[..., :1] >= 0).to(x.dtype)
        return torch.cat([x * right, x * (1 - right)], dim=-1)


class SumDecoder(nn.Module):
    def forward(self, z: Tensor) -> Tensor:
        return z[..., :2] + z[..., 2:]


def split_model() -> KAE:
    m = KAE("mlp_sparse", "dense", 4, state_dim=2, seed=0).double()
    m.encoder, m.decoder = SplitEncoder(), SumDecoder()
    return m


X0 = torch.tensor([[-1.7, 1.2], [1.5, -1.4], [0.4, 1.9], [-0.3, -1.8], [1.9, 1.9]], dtype=torch.float64)


def test_oracle_routing_equals_per_basin_local_maps() -> None:
    model = identity_model()
    train = toy_trajectories(64, 20, seed=0)
    step = fit_local_maps(model, train, oracle_router(model, side, 2), method="lstsq", ridge=0.0)
    for b in range(2):
        torch.testing.assert_close(step.maps.local[b].detach(), MATS[b], rtol=0, atol=1e-10)
        # T_b(z) = c_b + A_b (z − c_b): check at an arbitrary point
        z = torch.tensor([[0.3, -0.7]], dtype=torch.float64)
        want = CENTERS[b] + (z - CENTERS[b]) @ MATS[b].T
        torch.testing.assert_close(step.maps(z, torch.tensor([b])), want, rtol=0, atol=1e-10)
    got = rollout(model, X0, 30, step=step)
    np.testing.assert_allclose(got, toy_truth(X0, 30), rtol=0, atol=1e-9)
    assert step.coverage == 1.0


def test_support_routing_recovers_the_oracle_on_a_split_sparse_code() -> None:
    model = split_model()
    train = toy_trajectories(64, 20, seed=1)
    fitted = support_router(model, train)
    assert fitted.router.count == 2  # the two half-plane supports, nothing else survives τ_J = 0.4
    step = fit_local_maps(model, train, fitted.router, method="lstsq", ridge=0.0)
    # re-encoding every step refreshes the support when a state crosses into the other half-plane
    got = rollout(model, X0, 30, period=1, step=step)
    np.testing.assert_allclose(got, toy_truth(X0, 30), rtol=0, atol=1e-9)
    # the identity K of the global model cannot do this
    global_fit = rollout(model, X0, 30, period=1)
    assert np.abs(global_fit - toy_truth(X0, 30)).max() > 0.1


@pytest.fixture(scope="module")
def lista() -> KAE:
    m = KAE("lista", "dense", 16, seed=3).double()
    with torch.no_grad():
        noise = torch.randn(16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
        m.transition.K.copy_(0.97 * torch.eye(16, dtype=torch.float64) + 0.03 * noise)
    return m


def lista_trajectories() -> Tensor:
    from neurips26.skae.systems import square_four_well

    s = square_four_well()
    return s.trajectories(s.initial_states(24, seed=0), 16).double()


def test_staged_model_starts_as_the_global_model(lista: KAE) -> None:
    train = lista_trajectories()
    router = support_router(lista, train).router
    step = fit_local_maps(lista, train, router, steps=0)
    x0 = train[:6, 0]
    np.testing.assert_allclose(rollout(lista, x0, 12, step=step), rollout(lista, x0, 12), rtol=0, atol=1e-12)
    k = lista.transition_matrix()
    torch.testing.assert_close(step.maps.target.detach(), step.maps.source_centers @ k.T)


def test_second_stage_trains_only_the_local_maps(lista: KAE) -> None:
    train = lista_trajectories()
    before = {n: p.detach().clone() for n, p in lista.state_dict().items()}
    router = support_router(lista, train).router
    init = fit_local_maps(lista, train, router, steps=0)
    trained = fit_local_maps(lista, train, router, steps=15, lr=3e-3, batch=16, window=8, seed=0)
    windows = train[:, :9]
    w = default_weights(lista)
    with torch.no_grad():
        assert routed_loss(lista, trained, windows, w) < routed_loss(lista, init, windows, w)
    for n, p in lista.state_dict().items():
        assert torch.equal(p, before[n]), n  # E, D and K frozen
    assert not any(p.requires_grad for p in lista.parameters())
    # the same seed gives the same maps
    again = fit_local_maps(lista, train, router, steps=15, lr=3e-3, batch=16, window=8, seed=0)
    torch.testing.assert_close(again.maps.local, trained.maps.local, rtol=0, atol=0)


def test_unrouted_latents_fall_back_to_k() -> None:
    k = torch.tensor([[0.5, 0.1], [0.0, 2.0]], dtype=torch.float64)
    maps = LocalMaps(k, torch.tensor([[1.0, 1.0]], dtype=torch.float64))
    with torch.no_grad():
        maps.local.zero_()
        maps.target.fill_(7.0)
    z = torch.tensor([[1.0, 2.0], [3.0, 4.0], [float("nan"), 0.0]], dtype=torch.float64)
    out = maps(z, torch.tensor([-1, 0, -1]))
    torch.testing.assert_close(out[0], z[0] @ k.T)
    torch.testing.assert_close(out[1], torch.tensor([7.0, 7.0], dtype=torch.float64))


def test_partition_controls_are_count_matched_and_seeded(lista: KAE) -> None:
    train = lista_trajectories()
    support = support_router(lista, train).router
    src = lista.encode(train[:, :-1].reshape(-1, 2)).detach()
    occupied = torch.unique(support(src))
    rnd = random_router(lista, train, support, seed=0)
    assert rnd.count == int((occupied >= 0).sum()) and rnd.kind == "random"
    torch.testing.assert_close(rnd.centers, random_router(lista, train, support, seed=0).centers)
    assert not torch.equal(rnd.centers, random_router(lista, train, support, seed=1).centers)
    km = kmeans_router(lista, train, 3, seed=0)
    assert km.count == 3
    assert set(km(src).tolist()) <= {0, 1, 2}
    assert make_router("kmeans", lista, train, seed=0).count == int((occupied >= 0).sum())
    with pytest.raises(ValueError, match="kind must be one of"):
        make_router("voronoi", lista, train)
    with pytest.raises(ValueError, match="labeler"):
        make_router("oracle", lista, train)
    with pytest.raises(ValueError, match="count"):
        kmeans_router(lista, train, 0, seed=0)


def test_random_control_permutes_the_reference_labels() -> None:
    # on the toy, the support routes are the half-planes; the permuted control keeps the two part sizes
    model = split_model()
    train = toy_trajectories(64, 20, seed=1)
    support = support_router(model, train).router
    rnd = random_router(model, train, support, seed=0)
    src = model.encode(train[:, :-1].reshape(-1, 2))
    # the random parts' means are close to each other (no information), unlike the support parts'
    sup_centers = torch.stack([src[support(src) == f].mean(0) for f in range(2)])
    assert torch.dist(rnd.centers[0], rnd.centers[1]) < 0.2 * torch.dist(sup_centers[0], sup_centers[1])


def test_oracle_by_centers_and_min_transitions() -> None:
    model = identity_model()
    train = toy_trajectories(64, 20, seed=0)
    router = oracle_router(model, centers=CENTERS.numpy())
    z = torch.tensor([[-0.2, 0.0], [0.3, 5.0]], dtype=torch.float64)
    assert router(z).tolist() == [0, 1]
    # a threshold above every route's count leaves only the fallback K
    step = fit_local_maps(model, train, router, method="lstsq", min_transitions=10**6)
    assert not step.maps.active.any()
    np.testing.assert_array_equal(rollout(model, X0, 4, step=step), rollout(model, X0, 4))
    with pytest.raises(ValueError, match="min_transitions"):
        fit_local_maps(model, train, router, min_transitions=0)
    with pytest.raises(ValueError, match="centers"):
        oracle_router(model, centers=np.zeros((2, 3)))


def test_support_gated_k_and_wrong_support_freeze() -> None:
    model = split_model()
    with torch.no_grad():
        model.transition.K.copy_(torch.eye(4, dtype=torch.float64) * 0.5)
    train = toy_trajectories(32, 10, seed=2)
    router = support_router(model, train).router
    centers = family_centers(model, train, router)
    gated = GatedStep(model, router, centers)
    z = model.encode(X0)
    fam = router(z)
    m = torch.as_tensor(router.codebook.representatives).to(z.dtype)[fam]
    want = centers[fam] + 0.5 * m * (z - centers[fam])
    torch.testing.assert_close(gated(z), want)
    # the frozen gate ignores the current support; with the wrong family it uses the other mask
    wrong = wrong_families(fam.numpy(), router.count)
    assert np.all(wrong != fam.numpy()) and set(wrong.tolist()) <= {0, 1}
    frozen = FrozenGateStep(gated, wrong)
    torch.testing.assert_close(frozen(z), gated.gate(z, torch.as_tensor(wrong)))
    assert rollout(model, X0, 5, step=frozen).shape == (5, 5, 2)
    with pytest.raises(ValueError, match="shift"):
        wrong_families(fam.numpy(), 2, shift=2)


def test_validation(lista: KAE) -> None:
    train = lista_trajectories()
    router = support_router(lista, train).router
    with pytest.raises(ValueError, match="tau_j"):
        support_router(lista, train, tau_j=0.0)
    with pytest.raises(ValueError, match="method must be one of"):
        fit_local_maps(lista, train, router, method="adam")
    with pytest.raises(ValueError, match="steps"):
        fit_local_maps(lista, train, router, steps=-1)
    with pytest.raises(ValueError, match="window"):
        fit_local_maps(lista, train, router, steps=1, window=99)
    bad = train.clone()
    bad[0, 3, 0] = float("nan")
    with pytest.raises(ValueError, match="trajectories"):
        fit_local_maps(lista, bad, router)
    with pytest.raises(ValueError, match="trajectories"):
        support_router(lista, train[:, :, :1])
    with pytest.raises(ValueError, match="horizon"):
        rollout(lista, train[:2, 0], 0, step=fit_local_maps(lista, train, router, steps=0))


def test_local_maps_apply_each_route_s_own_affine_map_row_by_row():
    g = torch.Generator().manual_seed(0)
    k = torch.randn(4, 4, generator=g, dtype=torch.float64)
    centers = torch.randn(3, 4, generator=g, dtype=torch.float64)
    maps = LocalMaps(k, centers, active=torch.tensor([True, True, False]))
    with torch.no_grad():
        maps.local.copy_(torch.randn(3, 4, 4, generator=g, dtype=torch.float64))
        maps.target.copy_(torch.randn(3, 4, generator=g, dtype=torch.float64))
    z = torch.randn(9, 4, generator=g, dtype=torch.float64)
    routes = torch.tensor([0, 1, 2, -1, 1, 0, 2, 1, -1])
    out = maps(z, routes)
    for i, f in enumerate(routes.tolist()):
        if f < 0 or not maps.active[f]:
            want = k @ z[i]
        else:
            want = maps.target[f] + maps.local[f] @ (z[i] - centers[f])
        assert torch.allclose(out[i], want, atol=1e-12)
