"""The knowledge router: top-k selection, budget, the Taylor gate score (exact identity, finite differences,
and real token drops), soft/hard router losses, the random / Gumbel / attention top-k baselines, the p_dense
schedule, seeded determinism, and bad input named."""

import pytest
import torch

from neurips26.spark_vla.router import (
    Router,
    attention_topk,
    budget,
    dense_probability,
    gumbel_topk_gates,
    hard_route_loss,
    hard_route_targets,
    random_indices,
    soft_route_loss,
    taylor_scores,
    topk_indices,
)

D64 = torch.float64


def gen(seed):
    return torch.Generator().manual_seed(seed)


class TinyLoss:
    """A small random smooth model of gated tokens x_i = m_i c_i: L_b = |tanh(mean_i x_i W1) W2 - y_b|²."""

    def __init__(self, width=6, hidden=5, out=3, batch=16, seed=0):
        g = gen(seed)
        self.w1 = torch.randn(width, hidden, generator=g, dtype=D64)
        self.w2 = torch.randn(hidden, out, generator=g, dtype=D64)
        self.y = torch.randn(batch, out, generator=g, dtype=D64)

    def per_sample(self, x):
        pooled = x.mean(dim=1)
        return (torch.tanh(pooled @ self.w1) @ self.w2 - self.y).pow(2).sum(-1)

    def __call__(self, x):
        return self.per_sample(x).sum()


def mlp_loss(x, w1, w2, y):
    """A tiny 2-layer MLP applied to every gated token, summed: L = sum_b |sum_i tanh(x_bi W1) W2 - y_b|²."""
    return (torch.tanh(x @ w1) @ w2).sum(dim=1).sub(y).pow(2).sum()


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("k", [1, 18, 72])
def test_topk_returns_k_unique_sorted_indices_of_the_largest(batch, k):
    logits = torch.randn(batch, 72, generator=gen(batch + k))
    idx = topk_indices(logits, k)
    assert idx.shape == (batch, k) and idx.dtype == torch.int64
    for row, values in zip(idx, logits, strict=True):
        assert len(set(row.tolist())) == k
        assert torch.equal(row, row.sort().values)
        chosen = torch.zeros(72, dtype=torch.bool)
        chosen[row] = True
        if k < 72:
            assert values[chosen].min() > values[~chosen].max()


def test_budget():
    assert budget(0.25, 72) == 18
    assert budget(0.125, 72) == 9
    assert budget(1.0, 72) == 72
    assert budget(0.001, 72) == 1
    for rho in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="rho"):
            budget(rho, 72)


def test_taylor_score_is_exactly_minus_the_gate_gradient():
    model = TinyLoss(batch=4, seed=1)
    c = torch.randn(4, 10, 6, generator=gen(2), dtype=D64)
    m = torch.ones(4, 10, 1, dtype=D64, requires_grad=True)
    x = c * m
    grad_x, grad_m = torch.autograd.grad(model(x), [x, m])
    assert torch.equal(taylor_scores(grad_x, c), -grad_m[..., 0])


def test_gate_gradient_matches_central_differences():
    g = gen(3)
    c = torch.randn(2, 5, 4, generator=g, dtype=D64)
    w1 = torch.randn(4, 3, generator=g, dtype=D64)
    w2 = torch.randn(3, 2, generator=g, dtype=D64)
    y = torch.randn(2, 2, generator=g, dtype=D64)
    x = c.clone().requires_grad_(True)
    (grad_x,) = torch.autograd.grad(mlp_loss(x, w1, w2, y), [x])
    dl_dm = -taylor_scores(grad_x, c)
    h = 1e-6
    for b in range(2):
        for i in range(5):
            up = torch.ones(2, 5, 1, dtype=D64)
            down = torch.ones(2, 5, 1, dtype=D64)
            up[b, i] += h
            down[b, i] -= h
            fd = (mlp_loss(c * up, w1, w2, y) - mlp_loss(c * down, w1, w2, y)).item() / (2 * h)
            assert abs(fd - dl_dm[b, i].item()) <= 1e-5 * max(abs(fd), 1e-3)


def test_dropping_the_top_scored_token_hurts_more_than_dropping_the_lowest():
    batch, tokens = 32, 8
    model = TinyLoss(batch=batch, seed=4)
    c = torch.randn(batch, tokens, 6, generator=gen(5), dtype=D64)
    x = c.clone().requires_grad_(True)
    (grad_x,) = torch.autograd.grad(model(x), [x])
    scores = taylor_scores(grad_x, c)
    rows = torch.arange(batch)
    base = model.per_sample(c)
    without_top, without_low = c.clone(), c.clone()
    without_top[rows, scores.argmax(-1)] = 0
    without_low[rows, scores.argmin(-1)] = 0
    rise_top = model.per_sample(without_top) - base
    rise_low = model.per_sample(without_low) - base
    assert rise_top.mean() > rise_low.mean()
    assert rise_top.mean() > 0 > rise_low.mean()


def test_soft_route_loss_is_zero_at_the_target_and_positive_elsewhere():
    scores = torch.randn(6, 72, generator=gen(6), dtype=D64)
    tau = scores.std(dim=-1, unbiased=False, keepdim=True)
    shift = torch.randn(6, 1, generator=gen(7), dtype=D64)
    assert abs(soft_route_loss(scores, scores / tau + shift).item()) < 1e-12
    for seed in range(5):
        logits = torch.randn(6, 72, generator=gen(10 + seed), dtype=D64)
        assert soft_route_loss(scores, logits).item() > 0
    # Gradients reach the logits only.
    s = scores.clone().requires_grad_(True)
    logits = torch.zeros(6, 72, dtype=D64, requires_grad=True)
    soft_route_loss(s, logits).backward()
    assert s.grad is None and logits.grad.abs().sum() > 0


def test_soft_route_loss_respects_the_mask():
    scores = torch.randn(3, 10, generator=gen(8), dtype=D64)
    mask = torch.ones(3, 10, dtype=torch.bool)
    mask[0, 7:] = False
    mask[2, :4] = False
    valid = scores.masked_fill(~mask, float("nan"))
    # tau over the valid candidates only (population std).
    mean = torch.nanmean(valid, dim=-1, keepdim=True)
    tau = torch.nanmean((valid - mean) ** 2, dim=-1, keepdim=True).sqrt()
    logits = (scores / tau).masked_fill(~mask, 0.0) + 1.0
    logits.requires_grad_(True)
    loss = soft_route_loss(scores, logits, mask=mask)
    assert abs(loss.item()) < 1e-12
    # The logits of absent candidates do not matter and get no gradient.
    noisy = logits.detach() + torch.randn(3, 10, generator=gen(9), dtype=D64).masked_fill(mask, 0.0)
    assert soft_route_loss(scores, noisy, mask=mask).item() == pytest.approx(loss.item(), abs=1e-12)
    z = torch.zeros(3, 10, dtype=D64, requires_grad=True)
    soft_route_loss(scores, z, mask=mask).backward()
    assert torch.isfinite(z.grad).all() and (z.grad[~mask] == 0).all()
    # Equal to the unmasked loss on the valid part of a row.
    row = soft_route_loss(scores[:1, :7], torch.randn(1, 7, generator=gen(1), dtype=D64))
    full = torch.cat([torch.randn(1, 7, generator=gen(1), dtype=D64), torch.zeros(1, 3, dtype=D64)], dim=1)
    torch.testing.assert_close(soft_route_loss(scores[:1], full, mask=mask[:1]), row)


def test_hard_route_targets_and_loss():
    scores = torch.randn(5, 72, generator=gen(11))
    targets = hard_route_targets(scores, 18)
    assert torch.equal(targets.sum(-1), torch.full((5,), 18.0))
    assert set(targets.unique().tolist()) == {0.0, 1.0}
    assert torch.equal(targets.nonzero()[:, 1].reshape(5, 18), topk_indices(scores, 18))
    logits = torch.randn(5, 72, generator=gen(12), requires_grad=True)
    s = scores.clone().requires_grad_(True)
    loss = hard_route_loss(s, logits, 18)
    manual = -(
        targets * torch.log(torch.sigmoid(logits)) + (1 - targets) * torch.log(1 - torch.sigmoid(logits))
    )
    torch.testing.assert_close(loss, manual.mean())
    loss.backward()
    assert s.grad is None and logits.grad.abs().sum() > 0


def test_router_scores_are_seeded_and_leave_the_global_rng_alone():
    state = torch.get_rng_state()
    a = Router(seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    b = Router(seed=3)
    c = Router(seed=4)
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert not torch.equal(a.fc1.weight, c.fc1.weight)
    cand = torch.randn(2, 72, 64, generator=gen(0))
    instr = torch.randn(2, 64, generator=gen(1))
    out = a(cand, instr)
    assert out.shape == (2, 72)
    assert torch.equal(out, b(cand, instr))
    # Each token is scored on its own: permuting the candidates permutes the logits.
    perm = torch.randperm(72, generator=gen(2))
    torch.testing.assert_close(a(cand[:, perm], instr), out[:, perm])
    # The instruction matters.
    assert not torch.allclose(a(cand, instr), a(cand, -instr))
    with pytest.raises(ValueError, match="candidates"):
        a(torch.zeros(2, 72, 32), instr)
    with pytest.raises(ValueError, match="instruction"):
        a(cand, torch.zeros(3, 64))


def test_random_indices_are_seeded_sorted_subsets():
    a = random_indices(8, 72, 18, gen(5))
    b = random_indices(8, 72, 18, gen(5))
    c = random_indices(8, 72, 18, gen(6))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.shape == (8, 18) and a.dtype == torch.int64
    for row in a:
        assert len(set(row.tolist())) == 18 and torch.equal(row, row.sort().values)
        assert 0 <= row.min() and row.max() < 72
    # Every candidate is drawn about equally often.
    counts = torch.bincount(random_indices(2000, 72, 18, gen(7)).flatten(), minlength=72).double()
    assert (counts / counts.mean() - 1).abs().max() < 0.15


def test_gumbel_gates_are_hard_forward_and_soft_backward():
    logits = torch.randn(8, 72, generator=gen(8), requires_grad=True)
    gates, idx = gumbel_topk_gates(logits, 18, gen(9), tau=0.5)
    assert set(gates.detach().unique().tolist()) == {0.0, 1.0}
    assert torch.equal(gates.detach().sum(-1), torch.full((8,), 18.0))
    assert torch.equal(gates.detach().nonzero()[:, 1].reshape(8, 18), idx)
    assert torch.equal(idx, idx.sort(dim=-1).values)
    weights = torch.randn(8, 72, generator=gen(10))
    (gates * weights).sum().backward()
    assert logits.grad.abs().sum() > 0
    again, idx_again = gumbel_topk_gates(logits.detach(), 18, gen(9), tau=0.5)
    assert torch.equal(idx, idx_again) and torch.equal(gates.detach(), again)
    # Gumbel-max: with k = 1, candidate i wins with probability softmax(logits)_i, here e^3 / (e^3 + 9).
    biased = torch.zeros(400, 10)
    biased[:, 3] = 3.0
    wins = (gumbel_topk_gates(biased, 1, gen(11))[1][:, 0] == 3).double().mean().item()
    assert abs(wins - 0.6906) < 0.07


def test_attention_topk_picks_the_most_attended_visual_tokens():
    # Layout: 2 instruction tokens, 6 visual tokens (positions 2..7), then 3 query rows (8..10).
    batch, heads, t = 2, 3, 11
    weights = torch.full((batch, heads, t, t), 1e-3)
    weights[0, :, 8:, 2 + 4] = 0.5  # visual token 4 is most attended by the queries in sample 0
    weights[0, :, 8:, 2 + 1] = 0.3
    weights[1, 0, 8:, 2 + 0] = 0.9  # in sample 1 only head 0 cares, about visual token 0 ...
    weights[1, 1:, 9, 2 + 5] = 0.6  # ... and heads 1, 2 of query row 9 about token 5
    weights[:, :, :8, 2 + 2] = 0.99  # earlier rows do not count
    idx = attention_topk(weights, slice(2, 8), slice(8, 11), 2)
    assert idx.tolist() == [[1, 4], [0, 5]]
    assert attention_topk(weights, slice(2, 8), torch.tensor([8, 9, 10]), 1).tolist() == [[4], [0]]
    assert attention_topk(weights, slice(2, 8), [-3, -2, -1], 6).tolist() == [list(range(6))] * 2
    with pytest.raises(ValueError, match="query_rows"):
        attention_topk(weights, slice(2, 8), slice(5, 11), 2)
    with pytest.raises(ValueError, match="query_rows"):
        attention_topk(weights, slice(2, 8), slice(11, 11), 2)
    with pytest.raises(ValueError, match="k"):
        attention_topk(weights, slice(2, 8), slice(8, 11), 7)
    with pytest.raises(ValueError, match="weights"):
        attention_topk(weights[:, :, :5], slice(2, 4), slice(4, 5), 1)


def test_dense_probability_anneals_linearly():
    assert dense_probability(0, 100) == 0.5
    assert dense_probability(99, 100) == pytest.approx(0.2)
    assert dense_probability(33, 67) == pytest.approx(0.35)
    assert dense_probability(0, 1) == 0.5
    with pytest.raises(ValueError, match="step"):
        dense_probability(100, 100)


def test_bad_input_names_the_argument():
    logits = torch.randn(2, 10)
    for k in (0, 11):
        with pytest.raises(ValueError, match="k"):
            topk_indices(logits, k)
        with pytest.raises(ValueError, match="k"):
            random_indices(2, 10, k, gen(0))
        with pytest.raises(ValueError, match="k"):
            gumbel_topk_gates(logits, k, gen(0))
        with pytest.raises(ValueError, match="k"):
            hard_route_loss(logits, logits, k)
    with pytest.raises(TypeError, match="k"):
        topk_indices(logits, 2.0)
    with pytest.raises(ValueError, match="logits"):
        soft_route_loss(logits, torch.randn(2, 9))
    with pytest.raises(ValueError, match="logits"):
        hard_route_loss(logits, torch.randn(3, 10), 2)
    with pytest.raises(ValueError, match="scores"):
        soft_route_loss(torch.randn(2, 10, 1), logits)
    with pytest.raises(ValueError, match="mask"):
        soft_route_loss(logits, logits, mask=torch.zeros(2, 10, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask"):
        soft_route_loss(logits, logits, mask=torch.ones(2, 9, dtype=torch.bool))
    with pytest.raises(ValueError, match="tokens"):
        taylor_scores(torch.randn(2, 10, 4), torch.randn(2, 10, 5))
    with pytest.raises(TypeError, match="generator"):
        random_indices(2, 10, 3, 0)
    with pytest.raises(ValueError, match="tau"):
        gumbel_topk_gates(logits, 3, gen(0), tau=0.0)
