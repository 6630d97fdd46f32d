"""Tests of the SKAE baselines: exactness of the least-squares references on systems they can represent,
the one-component reductions to DMD, the GMM gates, the consistency penalty, oracle routing, bad input."""

import numpy as np
import pytest
import torch

from neurips26.skae import systems as S
from neurips26.skae.baselines import (
    CLOSED_FORM,
    DMD,
    ConsistentKAE,
    ConsistentWeights,
    Forecaster,
    GMMLocalLinear,
    KMeansLocalLinear,
    OracleMixture,
    StateKMeans,
    basin_labeler,
    consistency_penalty,
    consistent_loss,
    forecast_table,
    make_baseline,
    poly_edmd,
    rbf_edmd,
    ridge_lstsq,
)
from neurips26.skae.baselines.kae import backward_prediction
from neurips26.skae.baselines.linear import median_gamma
from neurips26.skae.losses import kae_loss
from neurips26.skae.rollout import rollout

A = torch.tensor([[-0.5, 2.0], [-2.0, -0.5]], dtype=torch.float64)  # a damped rotation
H = 0.07


def _linear_windows(n=16, length=10, seed=0):
    x0 = torch.randn(n, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return S.rk4_trajectory(lambda x: x @ A.T, x0, H, length)


def _rk4_step_matrix():
    ha = (H * A).numpy()
    eye = np.eye(2)
    return eye + ha + ha @ ha / 2 + ha @ ha @ ha / 6 + ha @ ha @ ha @ ha / 24


@pytest.fixture(scope="module")
def wells():
    """Windows of the Square four-well (float64) and held-out starts with their true futures."""
    system = S.make_system("square-4")
    windows = system.trajectories(system.initial_states(256, seed=1), 8)
    starts = system.initial_states(12, seed=2)
    return system, windows, starts, system.trajectories(starts, 40)[:, 1:]


# --- least squares ---------------------------------------------------------------------------------------


def test_ridge_lstsq_matches_the_normal_equations_and_is_plain_least_squares_at_zero():
    rng = np.random.default_rng(0)
    phi, y = rng.normal(size=(50, 4)), rng.normal(size=(50, 3))
    ridge = 0.3
    expected = np.linalg.solve(phi.T @ phi / 50 + ridge * np.eye(4), phi.T @ y / 50)
    assert np.abs(ridge_lstsq(phi, y, ridge) - expected).max() < 1e-12
    assert np.abs(ridge_lstsq(phi, y, 0.0) - np.linalg.lstsq(phi, y, rcond=None)[0]).max() < 1e-12
    w = rng.uniform(0.5, 2.0, size=50)  # weighted: the same as repeating rows in proportion
    weighted = np.linalg.solve(
        (phi * w[:, None]).T @ phi / w.sum() + ridge * np.eye(4), (phi * w[:, None]).T @ y / w.sum()
    )
    assert np.abs(ridge_lstsq(phi, y, ridge, weights=w) - weighted).max() < 1e-12


# --- DMD and EDMD ----------------------------------------------------------------------------------------


def test_dmd_recovers_the_rk4_step_matrix_of_a_linear_system():
    windows = _linear_windows()
    step = _rk4_step_matrix()
    assert np.abs(DMD(2, ridge=0.0).fit(windows).A - step).max() < 1e-10
    affine = DMD(2, ridge=0.0, affine=True).fit(windows)
    assert np.abs(affine.A - step).max() < 1e-10 and np.abs(affine.b).max() < 1e-10
    # and its rollout is the RK4 trajectory
    x0 = windows[:3, 0]
    assert np.abs(DMD(2, ridge=0.0).fit(windows).predict(x0, 10) - windows[:3, 1:].numpy()).max() < 1e-10
    # the paper's ridge biases it, slightly
    assert 1e-12 < np.abs(DMD(2).fit(windows).A - step).max() < 1e-4


def _invariant_map(x, mu=0.9, lam=0.5):
    """x1' = μ x1, x2' = λ x2 + (μ² − λ) x1²: span{x1, x2, x1²} is Koopman-invariant.

    (x2 − x1² ↦ λ(x2 − x1²), x1² ↦ μ² x1².)"""
    return np.stack([mu * x[:, 0], lam * x[:, 1] + (mu**2 - lam) * x[:, 0] ** 2], axis=1)


def test_polynomial_edmd_is_exact_on_a_polynomial_closed_system():
    rng = np.random.default_rng(1)
    states = [rng.uniform(-1.5, 1.5, size=(40, 2))]
    for _ in range(6):
        states.append(_invariant_map(states[-1]))
    windows = np.stack(states, axis=1)  # (40, 7, 2)
    model = poly_edmd(2, ridge=0.0).fit(windows)
    x0 = rng.uniform(-1.0, 1.0, size=(5, 2))
    truth = [x0]
    for _ in range(30):
        truth.append(_invariant_map(truth[-1]))
    truth = np.stack(truth[1:], axis=1)
    assert np.abs(model.predict(x0, 30) - truth).max() < 1e-8
    assert np.abs(model.predict(x0, 30, period=7) - truth).max() < 1e-8  # re-lifting an exact state is exact
    # DMD cannot represent the x1² term
    assert np.abs(DMD(2, ridge=0.0).fit(windows).predict(x0, 30) - truth).max() > 1e-3


def test_edmd_dictionaries_contain_the_state_and_the_constant(wells):
    _, windows, starts, _ = wells
    for model in (poly_edmd(2), rbf_edmd(2, centers=16)):
        model.fit(windows)
        psi = model.lift(starts.numpy())
        assert np.array_equal(psi[:, 0], np.ones(len(starts)))
        assert np.array_equal(model.readout(psi), starts.numpy())
    assert poly_edmd(2).fit(windows).K.shape == (10, 10)  # 1 + 2 + 3 + 4 monomials in 2-D at degree 3
    rbf = rbf_edmd(2, centers=16).fit(windows)
    assert rbf.K.shape == (19, 19) and rbf.dictionary.gamma > 0


def test_median_gamma_is_the_inverse_median_squared_distance():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    assert median_gamma(x) == pytest.approx(1 / 25)
    x = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])  # squared distances 1, 4, 9
    assert median_gamma(x) == pytest.approx(1 / 4)
    assert median_gamma(np.ones((5, 3))) == pytest.approx(1 / 3)  # degenerate: scikit-learn's 1 / d


# --- local-linear ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("affine", [False, True])
def test_one_component_local_linear_models_equal_dmd(wells, affine):
    _, windows, starts, _ = wells
    dmd = DMD(2, affine=affine).fit(windows)
    reference = dmd.predict(starts, 40)
    for model in (
        KMeansLocalLinear(2, components=1, affine=affine),
        GMMLocalLinear(2, components=1, affine=affine),
        GMMLocalLinear(2, components=1, affine=affine, soft=True),
    ):
        model.fit(windows)
        assert np.abs(model.maps[0, :2].T - dmd.A).max() < 1e-10, model.name
        assert np.abs(model.predict(starts, 40) - reference).max() < 1e-8, model.name


def test_gmm_soft_weights_sum_to_one_and_soft_prediction_is_their_mixture(wells):
    _, windows, starts, _ = wells
    model = GMMLocalLinear(2, soft=True).fit(windows)
    x = starts.numpy()
    r = model.responsibilities(x)
    assert r.shape == (12, 4) and np.all(r >= 0) and np.abs(r.sum(1) - 1).max() < 1e-12
    each = np.einsum("np,cpq->ncq", np.concatenate([x, np.ones((12, 1))], 1), model.maps)
    assert np.abs(model.step(x) - (r[:, :, None] * each).sum(1)).max() < 1e-10
    bad = np.array([[np.nan, 0.0], [0.5, 0.5]])
    r_bad = model.responsibilities(bad)
    assert np.isnan(r_bad[0]).all() and abs(r_bad[1].sum() - 1) < 1e-12


def test_gmm_responsibilities_equal_sklearn_predict_proba_bit_for_bit(wells):
    # The soft model skips sklearn's per-call input checks; it must compute the very same posterior.
    _, windows, starts, _ = wells
    model = GMMLocalLinear(2, soft=True).fit(windows)
    x = np.concatenate([starts.numpy(), starts.numpy()[:, ::-1].copy() * 0.7])
    assert np.array_equal(model.responsibilities(x), model.gmm.predict_proba(x))
    assert np.array_equal(model.responsibilities(x[:, :]), model.responsibilities(np.asfortranarray(x)))


def test_state_kmeans_separates_far_apart_blobs():
    rng = np.random.default_rng(2)
    centers = np.array([[-5.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    x = np.concatenate([c + 0.1 * rng.normal(size=(30, 2)) for c in centers])
    truth = np.repeat(np.arange(3), 30)
    labels = StateKMeans(3, seed=0).fit(x).assign(x)
    # one cluster per blob: the label map is a bijection
    assert all(len(set(labels[truth == b])) == 1 for b in range(3)) and len(set(labels)) == 3


def test_hard_local_linear_moves_each_state_by_its_own_cluster_map(wells):
    _, windows, starts, _ = wells
    model = KMeansLocalLinear(2).fit(windows)
    x = starts.numpy()
    lab = model.partition.assign(x)
    by_hand = np.stack([np.append(x[i], 1.0) @ model.maps[lab[i]] for i in range(len(x))])
    assert np.abs(model.step(x) - by_hand).max() < 1e-12


# --- the common protocol --------------------------------------------------------------------------------


def test_every_closed_form_baseline_follows_the_protocol(wells):
    _, windows, starts, truth = wells
    for key in CLOSED_FORM:
        model = make_baseline(key, 2, seed=0)
        assert isinstance(model, Forecaster)
        if key == "rbf-edmd":
            model.dictionary.count = 16  # keep the test fast
        out = model.fit(windows).predict(starts, 40)
        assert out.shape == (12, 40, 2) and out.dtype == np.float64, key
        table = forecast_table(model, starts, truth, horizons=(10, 40), periods=(None, 10))
        assert set(table) == {(None, 10), (None, 40), (10, 10), (10, 40)}


# --- consistent KAE --------------------------------------------------------------------------------------


def _azencot_loop(k_mat, c_mat):
    total = 0.0
    n = k_mat.shape[0]
    for k in range(1, n + 1):
        eye = torch.eye(k, dtype=k_mat.dtype)
        total += ((c_mat[:k, :] @ k_mat[:, :k] - eye) ** 2).sum() / (2 * k)
        total += ((k_mat[:k, :] @ c_mat[:, :k] - eye) ** 2).sum() / (2 * k)
    return total


def test_consistency_penalty_is_zero_for_an_inverse_and_matches_the_block_sum():
    g = torch.Generator().manual_seed(3)
    k_mat = torch.eye(6, dtype=torch.float64) + 0.3 * torch.randn(6, 6, generator=g, dtype=torch.float64)
    assert consistency_penalty(k_mat, torch.linalg.inv(k_mat)).item() < 1e-20
    c_mat = torch.randn(6, 6, generator=g, dtype=torch.float64)
    assert abs(consistency_penalty(k_mat, c_mat).item() - _azencot_loop(k_mat, c_mat).item()) < 1e-10
    assert consistency_penalty(k_mat, c_mat).item() > 0.1


def test_consistent_loss_adds_the_backward_and_consistency_terms(wells):
    _, windows, _, _ = wells
    model = ConsistentKAE(latent=8, seed=0)
    batch = windows[:16].float()
    assert model.consistency().item() == 0.0  # K = C = I at initialisation
    with torch.no_grad():
        model.backward_map.C.mul_(0.5)
    total = consistent_loss(model, batch, ConsistentWeights(backward=0.2, consistency=0.05))
    parts = kae_loss(model.kae, batch) + 0.2 * backward_prediction(model, batch) + 0.05 * model.consistency()
    assert torch.allclose(total, parts)
    total.backward()
    assert model.backward_map.C.grad is not None and model.backward_map.C.grad.abs().sum() > 0


def test_latent_matrices_train_at_a_tenth_of_the_rate(wells):
    """Adam's first update moves every weight by about its rate: K and C by a tenth of the others."""
    _, windows, _, _ = wells
    model = ConsistentKAE(latent=8, seed=0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    model.fit(windows, steps=1, batch=32, seed=0, lr=1e-3)
    moved = {n: (p.detach() - before[n]).abs().max().item() for n, p in model.named_parameters()}
    rate = model.history.lr[0]  # the scheduled rate of that one update
    assert 0.5 * rate < moved["kae.encoder.net.0.weight"] < 1.1 * rate
    assert 0.05 * rate < moved["kae.transition.K"] < 0.11 * rate
    assert 0.05 * rate < moved["backward_map.C"] < 0.11 * rate


def test_consistent_kae_trains_and_forecasts_through_the_chapter_rollout(wells):
    _, windows, starts, _ = wells
    model = ConsistentKAE(latent=8, seed=0)
    assert model.fit(windows, steps=5, batch=32, seed=0) is model
    assert len(model.history.loss) == 5
    out = model.predict(starts, 20, period=5)
    assert np.array_equal(out, rollout(model.kae, starts.float(), 20, period=5))
    assert model.backward_map.C.detach().sub(torch.eye(8)).abs().max() > 0  # C trained


# --- oracle mixture --------------------------------------------------------------------------------------


def test_oracle_mixture_routes_each_start_to_its_basin_expert():
    system = S.LocalLinearGates()
    labeler = basin_labeler(system)
    starts = system.initial_states(30, seed=4).float()
    model = OracleMixture(labeler, system.count, encoder="mlp_dense", latent=8, seed=0)
    lab = labeler(starts)
    out = model.predict(starts, 15)
    for b in range(system.count):
        rows = lab == b
        if rows.any():
            assert np.allclose(out[rows.numpy()], rollout(model.experts[b], starts[rows], 15), atol=1e-6)
    # with rerouting off, periodic re-encoding stays within each start's expert
    fixed = OracleMixture(labeler, system.count, encoder="mlp_dense", latent=8, seed=0, reroute=False)
    for b in range(system.count):
        rows = lab == b
        if rows.any():
            assert np.allclose(
                fixed.predict(starts[rows], 15, period=4),
                rollout(fixed.experts[b], starts[rows], 15, period=4),
            )


def test_oracle_mixture_trains_each_expert_on_its_own_basin_only():
    system = S.LocalLinearGates()
    windows = system.trajectories(system.initial_states(64, seed=5), 4).float()
    model = OracleMixture(basin_labeler(system), system.count, encoder="mlp_dense", latent=8, seed=0)
    before = [e.transition.K.detach().clone() for e in model.experts]
    model.fit(windows, steps=3, batch=8)
    for expert, k0 in zip(model.experts, before, strict=True):
        assert (expert.transition.K.detach() - k0).abs().max() > 0
    assert len(model.histories) == system.count
    # expert 0 sees only basin-0 windows: thinning the other basins' windows leaves it bit-identical
    lab = basin_labeler(system)(windows[:, 0])
    thinned = torch.cat([windows[lab == 0], windows[lab != 0][::2]])
    other = OracleMixture(basin_labeler(system), system.count, encoder="mlp_dense", latent=8, seed=0)
    other.fit(thinned, steps=3, batch=8)
    mine, theirs = model.experts[0].named_parameters(), other.experts[0].parameters()
    for (name, p0), p1 in zip(mine, theirs, strict=True):
        assert torch.equal(p0, p1), name
    one_basin = windows[lab == 0]
    with pytest.raises(ValueError, match="windows"):
        OracleMixture(basin_labeler(system), system.count, latent=8).fit(one_basin, steps=1)


def test_basin_labeler_uses_native_labels_or_the_nearest_proxy_centre():
    gates = S.LocalLinearGates()
    x = gates.initial_states(20, seed=6)
    assert torch.equal(basin_labeler(gates)(x), gates.native_labels(x))
    wells = S.make_system("square-4")
    centers = torch.tensor([[1.0, 1.0], [-1.0, -1.0]], dtype=torch.float64)
    assert torch.equal(basin_labeler(wells, centers)(x), S.nearest_center(x, centers))
    with pytest.raises(ValueError, match="centers"):
        basin_labeler(wells)


# --- bad input -------------------------------------------------------------------------------------------


def test_bad_inputs_name_the_argument(wells):
    _, windows, starts, _ = wells
    with pytest.raises(ValueError, match="windows"):
        DMD(2).fit(windows[:, :1])
    with pytest.raises(ValueError, match="windows"):
        DMD(3).fit(windows)
    nan_windows = windows.clone()
    nan_windows[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="windows"):
        DMD(2).fit(nan_windows)
    model = DMD(2).fit(windows)
    with pytest.raises(ValueError, match="x0"):
        model.predict(starts[:, :1], 5)
    with pytest.raises(ValueError, match="x0"):
        model.predict(torch.full((2, 2), float("nan")), 5)
    with pytest.raises(ValueError, match="horizon"):
        model.predict(starts, 0)
    with pytest.raises(ValueError, match="period"):
        model.predict(starts, 5, period=0)
    with pytest.raises(ValueError, match="ridge"):
        DMD(2, ridge=-1.0)
    with pytest.raises(ValueError, match="components"):
        KMeansLocalLinear(2, components=0)
    with pytest.raises(ValueError, match="degree"):
        poly_edmd(2, degree=0)
    with pytest.raises(ValueError, match="centers"):
        rbf_edmd(2, centers=10_000).fit(windows[:10])
    with pytest.raises(ValueError, match="key"):
        make_baseline("sindy", 2)
    with pytest.raises(TypeError, match="dictionary"):
        from neurips26.skae.baselines import EDMD

        EDMD(2, dictionary="poly")
    with pytest.raises(RuntimeError, match="fit"):
        DMD(2).predict(starts, 5)
    with pytest.raises(ValueError, match="kappa"):
        consistency_penalty(torch.eye(3), torch.eye(3), kappa=4)
    with pytest.raises(ValueError, match="labeler"):
        OracleMixture(lambda x: torch.full(x.shape[:1], 7), 2, latent=8).predict(starts, 3)
    with pytest.raises(ValueError, match="count"):
        OracleMixture(lambda x: x[:, 0].long(), 0)
    with pytest.raises(TypeError, match="weights"):
        consistent_loss(ConsistentKAE(latent=8), windows[:4].float(), weights=1.0)
