"""Tests of the SKAE systems: RK4's order and exactness, the vector fields, proxy labels, the hard pool."""

import math

import numpy as np
import pytest
import torch

from neurips26.skae import systems as S

A = torch.tensor([[-0.5, 2.0], [-2.0, -0.5]], dtype=torch.float64)  # a damped rotation


def _linear(x):
    return x @ A.T


# --- RK4 --------------------------------------------------------------------------------------------------


def test_rk4_is_fourth_order_on_a_linear_system():
    x0 = torch.tensor([[1.0, -0.5], [0.3, 2.0]], dtype=torch.float64)
    exact = x0 @ torch.linalg.matrix_exp(2.0 * A).T  # x(T) = e^{AT} x0 at T = 2
    errors = []
    for steps in (20, 40, 80):
        end = S.rk4_advance(_linear, x0, 2.0 / steps, steps)
        errors.append((end - exact).norm().item())
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    assert all(14.0 < r < 18.0 for r in ratios), ratios  # 2^4 = 16 for a fourth-order method


def test_least_squares_one_step_map_is_the_rk4_step_matrix():
    h = 0.07
    hA = h * A
    eye = torch.eye(2, dtype=torch.float64)
    step_matrix = eye + hA + hA @ hA / 2 + hA @ hA @ hA / 6 + hA @ hA @ hA @ hA / 24
    x0 = torch.randn(16, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    traj = S.rk4_trajectory(_linear, x0, h, 10)  # (16, 11, 2)
    source, target = traj[:, :-1].reshape(-1, 2), traj[:, 1:].reshape(-1, 2)
    fitted = torch.linalg.lstsq(source, target).solution.T  # target = source @ K^T
    assert (fitted - step_matrix).abs().max().item() < 1e-10
    assert (step_matrix - torch.linalg.matrix_exp(hA)).abs().max().item() > 1e-8  # not the exact flow


def test_stored_steps_are_substeps_of_rk4_and_trajectories_agree_with_advance():
    flow = S.Lorenz63(warmup=0)
    x = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)
    by_hand = S.rk4_advance(flow.vector_field, x, flow.dt / flow.substeps, flow.substeps)
    assert torch.equal(flow.step(x), by_hand)
    wells = S.square_four_well()
    x0 = wells.initial_states(8, seed=3)
    traj = wells.trajectories(x0, 12)
    assert traj.shape == (8, 13, 2)
    assert torch.equal(traj[:, 0], x0) and torch.equal(traj[:, -1], wells.advance(x0, 12))
    assert wells.step(x0.float()).dtype == torch.float32


# --- vector fields at known points --------------------------------------------------------------------------


def test_gaussian_well_field_by_hand():
    # One well c = (1, 0), a = 2, sigma = 1, gamma = 0.5, omega = 0: at the origin the well pulls towards c
    # with 2 e^{-1/2} (x - c) -> (2 e^{-1/2}, 0); at (1, 1) add -4 gamma x^3 = (-2, -2).
    one = S.GaussianWells(
        dt=0.03, centers=((1.0, 0.0),), amplitudes=(2.0,), sigmas=(1.0,), omega=0.0, gamma=0.5,
        reset_box=((-2.0, 2.0), (-2.0, 2.0)),
    )  # fmt: skip
    pull = 2 * math.exp(-0.5)
    x = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    expected = torch.tensor([[pull, 0.0], [-2.0, -2.0 - pull]], dtype=torch.float64)
    torch.testing.assert_close(one.vector_field(x), expected, rtol=1e-14, atol=1e-14)
    # The rotation omega R x, R x = (x2, -x1): at a lone well's centre with gamma = 0 it is all there is.
    spin = S.GaussianWells(
        dt=0.03, centers=((1.0, 2.0),), amplitudes=(3.0,), sigmas=(0.5,), omega=1.5, gamma=0.0,
        reset_box=((-3.0, 3.0), (-3.0, 3.0)),
    )  # fmt: skip
    torch.testing.assert_close(spin.vector_field(torch.tensor([1.0, 2.0])), torch.tensor([3.0, -1.5]))


@pytest.mark.parametrize(
    "make",
    [S.square_four_well, S.high_cross_three_well, S.asymmetric_three_well, S.transition_routes_four_well,
     lambda: S.random_wells(4, seed=3)],
)  # fmt: skip
def test_gaussian_well_fields_are_minus_grad_v_plus_rotation(make):
    system = make()
    x = 3.0 * torch.rand(64, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) - 1.5
    x.requires_grad_(True)
    (grad,) = torch.autograd.grad(system.potential(x).sum(), x)
    x = x.detach()
    corridor = torch.exp(-((x[:, 1] - 1.8) ** 2) / 0.3) + torch.exp(-((x[:, 1] + 1.8) ** 2) / 0.3)
    omega = system.omega + system.route_gain * corridor
    rotation = omega[:, None] * torch.stack([x[:, 1], -x[:, 0]], dim=1)
    torch.testing.assert_close(system.vector_field(x), -grad + rotation, rtol=1e-12, atol=1e-12)


def test_paper_instances_have_the_paper_parameters():
    square = S.square_four_well()
    r = 1.8 / math.sqrt(2)
    np.testing.assert_allclose(square.centers, [(r, r), (-r, r), (-r, -r), (r, -r)], atol=1e-12)
    assert (square.amplitudes, square.sigmas, square.omega, square.gamma) == (
        (3.0,) * 4,
        (0.5,) * 4,
        1.0,
        0.03,
    )
    assert square.dt == 0.03 and square.box == ((-3.3, 3.3), (-3.3, 3.3)) and square.count == 4
    cross = S.high_cross_three_well()
    np.testing.assert_allclose(cross.centers[0], (0.0, 1.8), atol=1e-12)
    assert (cross.omega, cross.count) == (2.0, 3)
    asym = S.asymmetric_three_well()
    assert asym.sigmas == (0.55, 0.4, 0.5) and asym.box == ((-3.0, 3.0), (-2.5, 3.0))
    routes = S.transition_routes_four_well()
    assert (routes.dt, routes.route_gain, routes.sigmas[0]) == (0.02, 0.3, 0.6)
    # Square symmetry: the field vanishes at the origin.
    assert square.vector_field(torch.zeros(2, dtype=torch.float64)).abs().max().item() < 1e-15


def test_transition_routes_add_the_corridor_rotation():
    routes = S.transition_routes_four_well()
    plain = S.GaussianWells(
        dt=routes.dt, centers=routes.centers, amplitudes=routes.amplitudes, sigmas=routes.sigmas,
        omega=1.0, gamma=0.03, reset_box=routes.reset_box,
    )  # fmt: skip
    x = torch.tensor([0.5, 1.8], dtype=torch.float64)
    c = 1.0 + math.exp(-(3.6**2) / 0.3)
    extra = routes.vector_field(x) - plain.vector_field(x)
    torch.testing.assert_close(extra, 0.3 * c * torch.tensor([1.8, -0.5], dtype=torch.float64))


def test_local_linear_gates_field_and_labels_by_hand():
    gates = S.LocalLinearGates()
    centers = torch.tensor(gates.centers)
    assert gates.vector_field(centers).abs().max().item() < 1e-12  # each core's equilibrium
    # In core 0 (alpha_0 = 0, so A_0 = At_0): At_0 (0.5, 0) = (-0.45, 0.6).
    x = centers[0] + torch.tensor([0.5, 0.0], dtype=torch.float64)
    torch.testing.assert_close(gates.vector_field(x), torch.tensor([-0.45, 0.6], dtype=torch.float64))
    # In core 1: A_1 = Q(2 pi / 3) At_1 Q^T.
    c, s = math.cos(2 * math.pi / 3), math.sin(2 * math.pi / 3)
    q = torch.tensor([[c, -s], [s, c]], dtype=torch.float64)
    a1 = q @ torch.tensor([[-1.35, 0.2], [-0.3, -0.7]], dtype=torch.float64) @ q.T
    v = torch.tensor([0.2, -0.3], dtype=torch.float64)
    torch.testing.assert_close(gates.vector_field(centers[1] + v), a1 @ v)
    # Outside the cores: G (x - c_sector); at the origin the sector is 0: G (-1.75, 0) = (2.3625, -1.575).
    torch.testing.assert_close(gates.vector_field(torch.zeros(2, dtype=torch.float64)),
                               torch.tensor([2.3625, -1.575], dtype=torch.float64))  # fmt: skip
    # Labels: the core's basin, else the nearest angular sector.
    deg = math.pi / 180
    angles = (10, 100, 170, 250, 350)
    outside = torch.tensor([[2.5 * math.cos(a * deg), 2.5 * math.sin(a * deg)] for a in angles])
    assert gates.native_labels(outside).tolist() == [0, 1, 1, 2, 0]
    assert gates.native_labels(centers).tolist() == [0, 1, 2]
    assert gates.dt == 0.04 and gates.box == ((-2.6, 2.6), (-2.6, 2.6)) and gates.count == 3


def test_flow_fields_by_hand():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    torch.testing.assert_close(S.ShimizuMorioka().vector_field(torch.ones(3, dtype=torch.float64)),
                               torch.tensor([1.0, -0.85, 0.5], dtype=torch.float64))  # fmt: skip
    torch.testing.assert_close(
        S.Sakarya().vector_field(x), torch.tensor([7.0, -1.8, 2.4], dtype=torch.float64)
    )
    torch.testing.assert_close(
        S.Lorenz63().vector_field(x), torch.tensor([10.0, 23.0, -6.0], dtype=torch.float64)
    )
    l96 = S.Lorenz96()
    assert l96.dim == 40
    assert l96.vector_field(torch.full((40,), 8.0, dtype=torch.float64)).abs().max().item() == 0.0
    y = torch.zeros(40, dtype=torch.float64)
    y[0], y[1] = 1.0, 2.0  # f_i = (y_{i+1} - y_{i-2}) y_{i-1} - y_i + 8
    expected = torch.full((40,), 8.0, dtype=torch.float64)
    expected[:3] = torch.tensor([7.0, 6.0, 6.0])
    torch.testing.assert_close(l96.vector_field(y), expected)
    assert S.ShimizuMorioka().dt == pytest.approx(30 * 2.4080013336e-3, rel=1e-12)
    assert S.Sakarya().dt == pytest.approx(30 * 9.9704617436e-4, rel=1e-12)


def test_flows_start_on_a_bounded_attractor_and_are_seeded():
    for flow in (S.ShimizuMorioka(warmup=300), S.Sakarya(warmup=300), S.Lorenz63(warmup=100),
                 S.Lorenz96(size=12, warmup=100)):  # fmt: skip
        x = flow.initial_states(16, seed=0)
        assert x.shape == (16, flow.dim)
        assert torch.equal(x, flow.initial_states(16, seed=0))
        assert not torch.equal(x, flow.initial_states(16, seed=1))
        traj = flow.trajectories(x, 300)
        assert torch.isfinite(traj).all() and traj.abs().max().item() < 100.0
        assert traj[:, 1:].sub(traj[:, :-1]).abs().max().item() > 0.0  # it moves (not a fixed point)


def test_sakarya_replaces_the_start_that_escapes_during_the_warm_up():
    # Seed 2's flow stream (the default data pipeline) draws, as its 8th of 64 starts, a Sakarya orbit
    # that grows without bound and overflows at one RK4 substep; it is replaced by a later bounded draw.
    from neurips26.seeding import sub_seed
    from neurips26.skae.data import STREAMS

    flow, seed = S.Sakarya(), sub_seed(2, STREAMS["flow"])
    generator = torch.Generator().manual_seed(seed)
    raw = torch.tensor(flow.initial_condition, dtype=torch.float64) + flow.spread * torch.randn(
        64, 3, generator=generator, dtype=torch.float64
    )
    for _ in range(flow.warmup):
        raw = flow._step(raw)
    escaped = ~torch.isfinite(raw).all(-1)
    assert escaped.nonzero().flatten().tolist() == [7]
    x = flow.initial_states(64, seed)
    assert torch.isfinite(x).all() and x.abs().max() <= S.ESCAPE_BOUND
    assert torch.equal(x[:7], raw[:7]) and torch.equal(x[7:63], raw[8:])  # the bounded ones, in order
    assert torch.equal(x, flow.initial_states(64, seed))


# --- proxy labels and the margin --------------------------------------------------------------------------


def test_margin_and_nearest_center_by_hand():
    centers = torch.tensor([[0.0, 0.0], [3.0, 0.0], [0.0, 5.0]], dtype=torch.float64)
    x = torch.tensor([[1.0, 0.0], [2.5, 0.0], [0.0, 4.0]], dtype=torch.float64)
    assert S.nearest_center(x, centers).tolist() == [0, 1, 2]
    torch.testing.assert_close(
        S.center_margin(x, centers), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    )


def test_farthest_point_init_starts_at_the_first_point():
    pts = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 0.0], [0.0, 3.0]])
    np.testing.assert_array_equal(S.farthest_point_init(pts, 3), pts[[0, 2, 3]])


def test_proxy_centers_are_the_equilibria_and_stable_at_half_the_step():
    system = S.square_four_well()
    starts = system.initial_states(64, seed=42)
    runs = []
    for sys_, steps in ((system, 64), (system.with_dt(system.dt / 2), 128)):  # same physical times
        endpoints = sys_.advance(starts, steps)
        runs.append(S.proxy_centers(sys_, endpoints, roll_steps=800 * steps // 64))
    coarse, fine = runs
    assert coarse.shape == (4, 2)
    # The centres are equilibria of the vector field (RK4's fixed points are exactly its zeros).
    assert system.vector_field(coarse).abs().max().item() < 1e-6
    # Same centres at dt/2, up to order; labels agree on >= 99% of interior (margin >= 0.1) grid states.
    match = S.nearest_center(fine, coarse)
    assert sorted(match.tolist()) == [0, 1, 2, 3]
    assert (fine - coarse[match]).abs().max().item() < 1e-6
    g = torch.linspace(-3.2, 3.2, 41, dtype=torch.float64)
    grid = torch.cartesian_prod(g, g)
    interior = S.center_margin(grid, coarse) >= 0.1
    same = S.nearest_center(grid, coarse)[interior] == match[S.nearest_center(grid, fine)][interior]
    assert interior.float().mean().item() > 0.8
    assert same.float().mean().item() >= 0.99


# --- hard pool ---------------------------------------------------------------------------------------------


def _nearest_distance(x, points):
    """Exact distance from each row of ``x`` to its nearest row of ``points`` (no matmul shortcut)."""
    return torch.linalg.vector_norm(x[:, None] - points[None], dim=-1).min(1).values


def _fate_split(system, states, equilibria, seed):
    """Fraction of ``states`` whose 4 small perturbations end near different equilibria."""
    g = torch.Generator().manual_seed(seed)
    probes = states[:, None] + 0.1 * torch.randn(len(states), 4, 2, generator=g, dtype=torch.float64)
    labels = S.nearest_center(system.advance(probes, 300), equilibria)
    return (labels.max(1).values != labels.min(1).values).double().mean().item()


def test_hard_pool_keeps_the_top_scores_and_its_states_are_perturbation_sensitive():
    system = S.square_four_well()
    sampler = S.HardPoolSampler(system, S.HardPoolConfig(candidates=512, pool=128), seed=0)
    assert sampler.pool.shape == (128, 2)
    top = torch.sort(sampler.scores, descending=True).values
    in_pool = torch.isin(sampler.candidates[:, 0], sampler.pool[:, 0])
    assert int(in_pool.sum()) == 128 and sampler.scores[in_pool].min() >= top[127]
    # The point of the pool: nearby states there end in different basins far more often than at a
    # uniform reset (measured 0.27-0.38 vs 0.00-0.02 over pool seeds 0-2).
    equilibria = system.advance(torch.tensor(system.centers, dtype=torch.float64), 2000)
    pool_split = _fate_split(system, sampler.pool, equilibria, seed=1)
    base_split = _fate_split(system, sampler.candidates[~in_pool][:128], equilibria, seed=1)
    assert pool_split > 1.5 * base_split, (pool_split, base_split)


def test_hard_pool_draws_are_seeded_inside_the_box_and_mix_as_configured():
    system = S.square_four_well()
    sampler = S.HardPoolSampler(system, S.HardPoolConfig(candidates=256, pool=64), seed=0)
    draws = sampler.sample(4000, seed=1)
    assert torch.equal(draws, sampler.sample(4000, seed=1))
    assert not torch.equal(draws, sampler.sample(4000, seed=2))
    low, high = system.box_tensors()
    assert bool(((draws >= low) & (draws <= high)).all())
    # With probability 1 and no jitter every draw is a pool state; with probability 0 none is.
    always = S.HardPoolConfig(candidates=256, pool=64, pool_probability=1.0, jitter=0.0)
    only_pool = S.HardPoolSampler(system, always, seed=0).sample(200, seed=3)
    assert bool((_nearest_distance(only_pool, sampler.pool) == 0).all())
    never = S.HardPoolConfig(candidates=256, pool=64, pool_probability=0.0)
    base = S.HardPoolSampler(system, never, seed=0).sample(200, seed=3)
    assert bool((_nearest_distance(base, sampler.pool) > 0).all())
    # Half the draws are jittered pool states (within 4 jitter sds with probability 1 - e^-8); the other
    # half are uniform, near the pool as often as the pool-free sampler's draws: p + (1 - p) q, p = 1/2.
    radius = 4 * 0.01 * 6.6
    near = (_nearest_distance(draws, sampler.pool) < radius).double().mean().item()
    uniform = S.HardPoolSampler(system, never, seed=0).sample(4000, seed=4)
    base_near = (_nearest_distance(uniform, sampler.pool) < radius).double().mean().item()
    assert abs(near - (0.5 + 0.5 * base_near)) < 0.04  # binomial sds ~0.008 each


# --- bad inputs -------------------------------------------------------------------------------------------


def _wells(**change):
    kw = dict(dt=0.03, centers=((0.0, 0.0), (2.0, 0.0)), amplitudes=(1.0, 1.0), sigmas=(0.5, 0.5),
              omega=1.0, gamma=0.03, reset_box=((-3.0, 3.0), (-3.0, 3.0)))  # fmt: skip
    kw.update(change)
    return S.GaussianWells(**kw)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"dt": 0.0}, "dt"),
        ({"dt": -0.01}, "dt"),
        ({"dt": float("nan")}, "dt"),
        ({"substeps": 0}, "substeps"),
        ({"centers": ((0.0, 0.0, 1.0), (2.0, 0.0))}, "centers"),
        ({"centers": ((0.0, float("nan")), (2.0, 0.0))}, "centers"),
        ({"amplitudes": (1.0,)}, "amplitudes"),
        ({"sigmas": (0.5, 0.0)}, "sigmas"),
        ({"omega": float("nan")}, "omega"),
        ({"gamma": -1.0}, "gamma"),
        ({"reset_box": ((-3.0, 3.0),)}, "reset_box"),
        ({"reset_box": ((3.0, -3.0), (-3.0, 3.0))}, "reset_box"),
    ],
)
def test_bad_well_configs_name_the_field(change, field):
    with pytest.raises(ValueError, match=field):
        _wells(**change)


def test_other_bad_inputs_name_the_argument():
    wells = _wells()
    with pytest.raises(ValueError, match="x must have shape"):
        wells.vector_field(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="x must contain only finite"):
        wells.step(torch.tensor([0.0, float("nan")]))
    with pytest.raises(ValueError, match="x0"):
        wells.trajectories(torch.zeros(2, 5), 3)
    with pytest.raises(TypeError, match="x must hold floating"):
        wells.step(torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="steps"):
        wells.advance(torch.zeros(2), -1)
    with pytest.raises(ValueError, match="dt"):
        S.LocalLinearGates(dt=0.0)
    with pytest.raises(ValueError, match="dt"):
        S.ShimizuMorioka(dt=-1.0)
    with pytest.raises(ValueError, match="size"):
        S.Lorenz96(size=2)
    with pytest.raises(ValueError, match="forcing"):
        S.Lorenz96(forcing=float("inf"))
    with pytest.raises(ValueError, match="count"):
        S.proxy_centers(S.Lorenz63(), torch.zeros(8, 3))
    with pytest.raises(ValueError, match="endpoints"):
        S.proxy_centers(wells, torch.zeros(8, 3))
    with pytest.raises(ValueError, match="pool"):
        S.HardPoolConfig(candidates=10, pool=20)
    with pytest.raises(ValueError, match="pool_probability"):
        S.HardPoolConfig(pool_probability=1.5)
    with pytest.raises(ValueError, match="reset box"):
        S.HardPoolSampler(S.Lorenz63(), seed=0)
    with pytest.raises(ValueError, match="count"):
        S.random_wells(0, seed=0)
    with pytest.raises(ValueError, match="h"):
        S.rk4_advance(_linear, torch.zeros(2, dtype=torch.float64), 0.0, 3)


def test_the_roster_builds_every_system_and_rejects_unknown_keys():
    for key in S.SYSTEMS:
        system = S.make_system(key)
        assert isinstance(system, S.System) and system.dt > 0
        if key in S.CONTROLLED:
            assert system.count in (3, 4) and system.box is not None
            x = system.initial_states(5, seed=0, dtype=torch.float32)
            assert x.dtype == torch.float32 and torch.isfinite(system.step(x)).all()
        else:
            assert system.count is None and system.box is None
    assert S.make_system("square-4") == S.square_four_well()
    assert S.make_system("square-4").with_dt(0.015).centers == S.square_four_well().centers
    with pytest.raises(ValueError, match="key"):
        S.make_system("square-5")
