"""The simulator: resampling agrees with the exact dynamic programme; noiseless cases are exact; utilities
behave as defined."""

import numpy as np
import pytest

from neurips26.expansion_utility.simulator import (
    BENCHMARKS,
    FAMILIES,
    SolverFamily,
    benchmark,
    exact_success_prob,
    family,
    resample_from,
    sample_chains,
    sample_problems,
)
from neurips26.expansion_utility.utility import utilities


@pytest.mark.parametrize(("b", "f"), [(0, 3), (1, 8), (4, 1), (5, 6)])
def test_monte_carlo_agrees_with_the_exact_probability(b, f):
    problems = sample_problems(BENCHMARKS[b], 12, seed=b)
    chains = sample_chains(problems, FAMILIES[f], seed=f)
    hits = resample_from(chains, 4000, seed=1).mean(-1)
    exact = exact_success_prob(chains)
    valid = ~np.isnan(exact)
    se = np.sqrt(exact[valid] * (1 - exact[valid]) / 4000) + 1e-3
    assert (np.abs(hits[valid] - exact[valid]) <= 5 * se).all()
    assert np.isnan(exact[~valid]).all() and not hits[~valid].any()


def test_states_and_answers_are_consistent():
    problems = sample_problems(benchmark("uniform"), 200, seed=3)
    chains = sample_chains(problems, family("dune"), seed=4)
    final = chains.correct_before[np.arange(200), chains.n]
    assert not (chains.correct & ~final & ~chains.parse_failed).all()
    assert chains.correct_before[:, 0].all() and (chains.approach_before[:, 0] == 0).all()
    assert not (chains.correct & chains.parse_failed).any()
    live = np.arange(problems.n_max)[None, :] < problems.n[:, None]
    assert ((chains.confidence > 0) == live).all() and (
        chains.confidence_min <= chains.confidence + 1e-12
    ).all()


def test_a_perfect_solver_is_always_right_and_without_repair_a_wrong_prefix_stays_at_the_guess_floor():
    problems = sample_problems(benchmark("short-arith"), 50, seed=0)
    perfect = SolverFamily("perfect", eps=0.0, rho=0.0, calibration=0.0, parse_fail=0.0)
    chains = sample_chains(problems, perfect, seed=0)
    assert chains.correct.all()
    assert np.allclose(exact_success_prob(chains)[~np.isnan(exact_success_prob(chains))], 1.0)
    sloppy = SolverFamily("sloppy", eps=0.3, rho=0.0, calibration=0.5, parse_fail=0.0)
    chains = sample_chains(sample_problems(benchmark("late-carry"), 300, seed=1), sloppy, seed=2)
    p = exact_success_prob(chains)
    wrong = ~chains.correct_before[:, :-1] & ~np.isnan(p[:, :-1])
    assert wrong.any()
    assert np.allclose(p[:, :-1][wrong], 1 / benchmark("late-carry").answers)  # ρ = 0: only a guess


def test_utilities_halves_and_definitions():
    problems = sample_problems(benchmark("mid-lookup"), 30, seed=5)
    chains = sample_chains(problems, family("birch"), seed=6)
    u = utilities(chains, 8, seed=7)
    assert u.sel.shape == u.ev.shape == (30, problems.n_max)
    assert np.array_equal(np.isnan(u.sel), np.arange(problems.n_max)[None, :] >= problems.n[:, None])
    assert np.allclose(np.nan_to_num(u.reuse), np.nan_to_num((u.sel + u.ev) / 2))
    assert ((u.sel >= -1) & (u.sel <= 1))[~np.isnan(u.sel)].all()
    # U_k - U_{k+1} = u_k: the two readings are consistent
    d = u.exact[:, :-1] - u.exact[:, 1:]
    ok = ~np.isnan(d)
    assert np.allclose(d[ok], u.inc_exact[:, :-1][ok])
    with pytest.raises(ValueError, match="r"):
        utilities(chains, 3, seed=0)


def test_bad_names_and_settings():
    with pytest.raises(ValueError, match="name"):
        family("zeta")
    with pytest.raises(ValueError, match="name"):
        benchmark("gsm8k")
    with pytest.raises(ValueError, match="eps"):
        SolverFamily("x", eps=1.5, rho=0.0, calibration=0.0)
    with pytest.raises(ValueError, match="bias"):
        SolverFamily("x", eps=0.1, rho=0.0, calibration=0.0, bias={"dance": 2.0})
    with pytest.raises(TypeError, match="count"):
        sample_problems(BENCHMARKS[0], 2.0, seed=0)
