"""Router parts: depth bins, features, the depth mask and its lifting, ListNet (gradients, optimum), the
gate, a short fit."""

import numpy as np
import pytest
import torch

from neurips26.expansion_utility.allocation import budget
from neurips26.expansion_utility.router import (
    BINS,
    RouterConfig,
    depth_bins,
    depth_mask,
    feature_names,
    gate_margin,
    listnet_loss,
    masked_scores,
    step_features,
    top_labels,
)
from neurips26.expansion_utility.router_fit import (
    N_MAX,
    choose_theta,
    fit_router,
    route,
    router_scores,
    step_data,
)
from neurips26.expansion_utility.simulator import BENCHMARKS, FAMILIES, sample_chains, sample_problems
from neurips26.expansion_utility.utility import utilities


def test_depth_bins_cover_every_step_once():
    bins = depth_bins(np.array([3, 10, 20]), 20)
    assert bins[1, :10].tolist() == list(range(10)) and (bins[1, 10:] == -1).all()
    assert bins[0, :3].tolist() == [0, 3, 6] and bins[2, 19] == BINS - 1


def test_features_have_their_names_and_vanish_on_padding():
    chains = sample_chains(sample_problems(BENCHMARKS[2], 7, seed=0), FAMILIES[1], seed=1)
    phi = step_features(chains)
    assert phi.shape == (7, chains.problems.n_max, len(feature_names()))
    pad = np.arange(chains.problems.n_max)[None, :] >= chains.n[:, None]
    assert (phi[pad] == 0).all()
    names = feature_names()
    assert (phi[~pad][:, names.index(f"bench:{BENCHMARKS[2].name}")] == 1).all()


def test_listnet_gradient_matches_finite_differences_and_is_minimised_by_the_right_order():
    gen = torch.Generator().manual_seed(0)
    u = torch.rand(4, 6, generator=gen, dtype=torch.float64)
    valid = torch.ones(4, 6, dtype=torch.bool)
    valid[1, 4:] = False
    z = torch.randn(4, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: listnet_loss(z, u, valid, temperature=0.5), (z,))
    aligned = listnet_loss(u.clone() / 0.05, u, valid)
    reversed_ = listnet_loss(-u / 0.05, u, valid)
    assert aligned < reversed_
    # the optimum of the cross-entropy is z = U / τ (plus a constant per chain)
    z_opt = (u / 0.05 + 3.0).requires_grad_(True)
    listnet_loss(z_opt, u, valid).backward()
    assert z_opt.grad.abs().max() < 1e-12
    constant = torch.ones(2, 5, dtype=torch.float64)
    assert (
        listnet_loss(torch.randn(2, 5, dtype=torch.float64), constant, torch.ones(2, 5, dtype=torch.bool))
        == 0
    )


def test_mask_drops_the_worst_bins_and_is_lifted_when_too_few_steps_remain():
    n = np.full(50, 10)
    sel = np.tile(np.arange(10.0), (50, 1))  # utility grows with depth
    bench = np.zeros(50, dtype=int)
    mask = depth_mask(sel, n, bench)
    assert mask[0].tolist() == [True] * 3 + [False] * 7 and not mask[1:].any()
    z = np.zeros((2, 10))
    scores = masked_scores(z, np.array([10, 10]), np.array([0, 0]), mask, 0.1)
    assert np.isinf(scores[:, :3]).all() and np.isfinite(scores[:, 3:]).all()
    lifted = masked_scores(z, np.array([10, 10]), np.array([0, 0]), mask, 0.8)  # B = 8 > 7 left
    assert np.isfinite(lifted).all()
    assert budget(10, 0.8) == 8


def test_gate_and_labels():
    z = np.array([[5.0, 0.0, 0.0], [1.0, 1.0, -np.inf]])
    m = gate_margin(z)
    assert m[0] > 0.9 and m[1] == pytest.approx(0.0)
    sel = np.array([[0.1, 0.5, 0.5, np.nan], [0.0, 0.0, 0.0, 0.0]])
    labels = top_labels(sel, np.array([3, 4]), seed=0)
    assert labels.sum(1).tolist() == [1, 1] and labels[0, 1] | labels[0, 2]


def test_a_short_fit_routes_and_an_infinite_threshold_never_acts():
    cells = []
    for b, f in ((0, 1), (3, 2)):
        chains = sample_chains(sample_problems(BENCHMARKS[b], 30, seed=b), FAMILIES[f], seed=f)
        cells.append((chains, utilities(chains, 4, seed=0)))
    data = step_data(cells)
    assert data.features.shape[:2] == (60, N_MAX)
    net, mask, losses = fit_router(data, RouterConfig(), seed=0, steps=5, batch=16)
    assert len(losses) == 5 and all(np.isfinite(losses))
    z = router_scores(net, data)
    picks, act = route(z, data, mask, 0.1, float("inf"))
    assert (picks.sum(1) == budget(data.n, 0.1)).all() and not act.any()
    assert np.isfinite(choose_theta(z, data, mask, 0.1)) or choose_theta(z, data, mask, 0.1) == float("inf")
    with pytest.raises(ValueError, match="loss"):
        RouterConfig(loss="pairwise")


def test_baselines_prefer_what_they_say():
    from neurips26.expansion_utility import baselines as BL
    from neurips26.expansion_utility.allocation import top_b

    chains = sample_chains(sample_problems(BENCHMARKS[1], 20, seed=0), FAMILIES[3], seed=0)
    data = step_data([(chains, utilities(chains, 4, seed=1))])
    first = top_b(BL.first_step_scores(data), data.n, 0.1)
    assert first[:, 0].all()
    low = top_b(BL.lowest_confidence_scores(data), data.n, 0.1)
    conf = np.where(data.valid, data.features[..., feature_names_index("confidence")], np.inf)
    assert low[np.arange(len(data)), np.argmin(conf, 1)].all()  # the least confident step is picked
    best = BL.best_depth_bin(data)
    picks = top_b(BL.depth_bin_scores(data, best), data.n, 0.1)
    assert (data.bins[picks] == best).mean() > 0.5


def feature_names_index(name):
    return feature_names().index(name)
