"""The predictor and the selectors: the sparse forward equals the masked full forward, COSTGRAD's scores
are the cost's gradient norms (= central differences), top-K minimises the linearised bound, K = P is Full,
the cost does not depend on how many times a token is listed, ToMe is a partition, AdaLN-Zero starts
action-independent."""

import itertools

import numpy as np
import pytest
import torch

from neurips26.costgrad import select as SEL
from neurips26.costgrad.cem import CEMConfig, cem
from neurips26.costgrad.planner import rollout_cost
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor

P, D, A = 16, 6, 4


def _model(cond="adaln", dtype=torch.float64, seed=0, perturb=True):
    m = TokenPredictor(
        PredictorSpec(cond=cond, tokens=P, token_dim=D, action_dim=A, width=8, heads=2, seed=seed)
    )
    if perturb:  # give the zero-initialised parts (AdaLN modulation, residual head) some weight
        g = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            for name, p in m.named_parameters():
                if "modulation" in name or name.startswith("head"):
                    p.add_(0.3 * torch.randn(p.shape, generator=g))
    return m.to(dtype).eval()


def _tokens(b=3, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, P, D, generator=g, dtype=dtype), torch.randn(b, A, generator=g, dtype=dtype)


@pytest.mark.parametrize("cond", ["adaln", "concat", "incontext"])
def test_sparse_forward_equals_the_masked_full_forward(cond):
    m = _model(cond)
    z, a = _tokens()
    S = torch.tensor([1, 4, 5, 9, 14])
    mask = torch.zeros(P, P, dtype=torch.bool)
    mask[:, S] = True
    full = m(z, a, mask=mask)[:, S]
    sparse = m(z[:, S], a, S)
    torch.testing.assert_close(full, sparse, rtol=0, atol=1e-12)
    assert not torch.allclose(m(z, a)[:, S], sparse)  # the mask matters


def test_costgrad_scores_are_gradient_norms():
    m = _model()
    z, _ = _tokens(2)
    goal, _ = _tokens(2, seed=1)
    s = SEL.costgrad_scores(m, z, goal)
    probe = torch.zeros(2, A, dtype=torch.float64)

    def loss(zz):
        return ((m(zz, probe) - goal) ** 2).sum(dim=(1, 2))

    h = 1e-6
    grad = torch.zeros_like(z)
    for j, d in itertools.product(range(P), range(D)):
        e = torch.zeros_like(z)
        e[:, j, d] = h
        grad[:, j, d] = (loss(z + e) - loss(z - e)) / (2 * h)
    torch.testing.assert_close(s, grad.norm(dim=-1), rtol=1e-5, atol=1e-9)


def test_top_k_minimises_the_linearised_bound():
    g = np.random.default_rng(0).random((1, 8))
    for k in range(1, 8):
        chosen = set(SEL.top_k(torch.tensor(g), k)[0])
        best = min(sum(g[0, j] for j in range(8) if j not in c) for c in itertools.combinations(range(8), k))
        assert sum(g[0, j] for j in range(8) if j not in chosen) == pytest.approx(best)
    assert set(SEL.bottom_k(torch.tensor(g), 3)[0]) == set(np.argsort(g[0])[:3])


def test_k_equal_p_is_full_and_duplicates_do_not_change_the_cost():
    m = _model()
    z, _ = _tokens(2)
    goal, _ = _tokens(2, seed=2)
    actions = np.random.default_rng(0).uniform(-1, 1, (2, 5, 3, A))
    full = rollout_cost(m, z, goal, np.tile(np.arange(P), (2, 1)), actions)
    via_topk = rollout_cost(m, z, goal, SEL.top_k(SEL.costgrad_scores(m, z, goal), P), actions)
    np.testing.assert_array_equal(full, via_topk)
    cfg = CEMConfig(samples=8, horizon=3, iterations=2, elites=2)
    one = cem(
        lambda x: rollout_cost(m, z, goal, np.tile(np.arange(P), (2, 1)), x),
        2,
        A,
        cfg,
        np.random.default_rng(1),
    )
    two = cem(
        lambda x: rollout_cost(m, z, goal, SEL.top_k(torch.ones(2, P), P), x),
        2,
        A,
        cfg,
        np.random.default_rng(1),
    )
    np.testing.assert_array_equal(one.plan, two.plan)
    S = np.array([[0, 3, 7, 8], [2, 5, 6, 15]])
    twice = np.concatenate([S, S], axis=1)  # every kept token listed twice, at the same position
    np.testing.assert_allclose(
        rollout_cost(m, z, goal, S, actions), rollout_cost(m, z, goal, twice, actions), rtol=1e-10
    )


def test_adaln_zero_starts_action_independent():
    m = _model("adaln", perturb=False)
    z, a = _tokens()
    torch.testing.assert_close(m(z, a), m(z, torch.zeros_like(a)), rtol=0, atol=0)
    torch.testing.assert_close(m(z, a), z, rtol=0, atol=0)  # the residual head starts at "nothing moves"


def test_tome_keeps_k_tokens_as_a_partition():
    z, _ = _tokens(2, dtype=torch.float32)
    merge = SEL.tome(z, 10)
    assert merge.index.shape == (2, 10) and merge.tokens.shape == (2, 10, D)
    src, dst = SEL.checkerboard(P)
    assert set(dst) <= set(merge.index[0])  # destinations always survive
    # equal groups: duplicated tokens merge into themselves and keep the grid's mean feature
    same = z[:, :1].expand(-1, P, -1).clone()
    m2 = SEL.tome(same, P // 2)
    torch.testing.assert_close(m2.tokens.mean(1), same.mean(1))
    with pytest.raises(ValueError, match="k"):
        SEL.tome(z, 3)


def test_predattn_is_a_distribution_over_keys_and_anchors_mix():
    m = _model()
    z, _ = _tokens(2)
    s = SEL.predattn_scores(m, z)
    torch.testing.assert_close(
        s.sum(1), torch.full((2,), float(P), dtype=s.dtype)
    )  # P queries, rows sum to 1
    rng = np.random.default_rng(0)
    mixed = SEL.with_anchors(torch.arange(P, dtype=torch.float64)[None].repeat(2, 1), 8, 0.5, rng)
    assert mixed.shape == (2, 8) and set(range(12, 16)) <= set(mixed[0])
    with pytest.raises(ValueError, match="alpha"):
        SEL.with_anchors(s, 8, 1.5, rng)
    with pytest.raises(ValueError, match="k"):
        SEL.top_k(s, 0)
