import itertools
import math

import numpy as np
import pytest
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from neurips26.train import FitConfig, History, fit, lr_at, progress_enabled


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run fastest on one thread; two OpenMP threads crawl when another process holds a core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _regression(seed: int = 0, n: int = 256, d: int = 8):
    """A learnable toy task: y = sin(X w) with fixed X, w; batches are seeded draws of rows."""
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.normal(size=(n, d)).astype(np.float32))
    w = torch.from_numpy(rng.normal(size=(d, 1)).astype(np.float32)) / d**0.5  # X w ~ N(0, 1)
    y = torch.sin(x @ w)

    def batches(step: int):
        idx = torch.from_numpy(np.random.default_rng([seed, step]).integers(0, n, size=32))
        return x[idx], y[idx]

    return x, y, batches


def _model(seed: int = 0, dropout: float = 0.1) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Dropout(dropout), nn.Linear(32, 1))


def _mse(model, batch):
    x, y = batch
    return nn.functional.mse_loss(model(x), y)


def test_fit_is_bitwise_deterministic_under_its_seed():
    _, _, batches = _regression()
    runs = []
    for _ in range(2):
        model = _model()
        history = fit(model, _mse, batches, steps=60, seed=5, lr=1e-2, warmup=5, progress=False)
        runs.append((history.loss, history.grad_norm, [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0] and runs[0][1] == runs[1][1]
    assert all(torch.equal(a, b) for a, b in zip(runs[0][2], runs[1][2], strict=True))
    # The seed matters (dropout draws from it), so the check above could fail.
    other = fit(_model(), _mse, batches, steps=60, seed=6, lr=1e-2, warmup=5, progress=False)
    assert other.loss != runs[0][0]


def test_fit_leaves_the_callers_random_state_alone():
    _, _, batches = _regression()
    model = _model()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    fit(model, _mse, batches, steps=5, seed=0, progress=False)
    assert torch.equal(torch.rand(3), expected)


def test_fit_decreases_the_loss_on_a_learnable_task():
    x, y, batches = _regression()
    model = _model(dropout=0.0)
    before = _mse(model, (x, y)).item()
    history = fit(model, _mse, batches, steps=300, seed=0, lr=1e-2, warmup=10, progress=False)
    after = _mse(model, (x, y)).item()
    assert after < 0.1 * before
    assert np.mean(history.loss[-20:]) < 0.1 * np.mean(history.loss[:20])
    assert len(history.step) == len(history.loss) == len(history.wall_time) == 300
    assert history.seen[-1] == 300 * 32 and history.seen_unit == "samples"
    assert all(b >= a for a, b in itertools.pairwise(history.wall_time))


def test_lr_schedule_at_warmup_end_middle_and_end():
    kw = dict(lr=1.0, steps=110, warmup=10, min_lr_ratio=0.1)
    assert lr_at(0, **kw) == pytest.approx(0.1)  # u = 1 of W = 10
    assert lr_at(9, **kw) == pytest.approx(1.0)  # last warm-up update: the peak
    assert lr_at(59, **kw) == pytest.approx(0.55)  # half-way through the decay: (1 + r) / 2
    assert lr_at(109, **kw) == pytest.approx(0.1)  # last update: r * lr
    assert lr_at(34, **kw) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.25)))
    values = [lr_at(s, **kw) for s in range(110)]
    assert all(b > a for a, b in itertools.pairwise(values[:10]))
    assert all(b < a for a, b in itertools.pairwise(values[9:]))
    assert lr_at(0, lr=2.0, steps=1) == pytest.approx(0.2)  # no warm-up: a single update at the end
    with pytest.raises(ValueError, match="step"):
        lr_at(110, **kw)


def test_fit_follows_the_schedule():
    _, _, batches = _regression()
    schedule = dict(lr=0.01, warmup=4, min_lr_ratio=0.2)
    history = fit(_model(), _mse, batches, steps=20, seed=0, progress=False, **schedule)
    expected = [lr_at(s, steps=20, **schedule) for s in range(20)]
    assert history.lr == pytest.approx(expected)


def test_clipping_bounds_the_gradient_norm_the_optimizer_sees():
    _, _, batches = _regression()
    seen_by_step: list[float] = []

    def record(optimizer, args, kwargs):
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        seen_by_step.append(torch.linalg.vector_norm(torch.stack([g.norm() for g in grads])).item())

    def big_loss(model, batch):
        return 1e3 * _mse(model, batch)  # gradients far above the clip

    handle = register_optimizer_step_pre_hook(record)
    try:
        clipped = fit(_model(), big_loss, batches, steps=10, seed=0, grad_clip=0.5, progress=False)
        n_clipped = len(seen_by_step)
        free = fit(_model(), big_loss, batches, steps=10, seed=0, grad_clip=None, progress=False)
    finally:
        handle.remove()
    assert min(clipped.grad_norm) > 0.5  # the clip was active ...
    assert max(seen_by_step[:n_clipped]) <= 0.5 * (1 + 1e-5)  # ... and bounded what AdamW saw
    assert seen_by_step[n_clipped:] == pytest.approx(free.grad_norm, rel=1e-5)  # no clip: untouched
    assert max(free.grad_norm) > 0.5


def test_early_stop_triggers_after_patience_evaluations_without_improvement():
    _, _, batches = _regression()
    scores = iter([1.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.1, 0.1])  # best at the 2nd evaluation

    history = fit(
        _model(), _mse, batches, steps=100, seed=0, eval_fn=lambda m: {"val": next(scores)}, eval_every=5,
        early_stop_patience=3, progress=False,
    )  # fmt: skip
    assert history.stopped_early
    assert history.eval_step == [5, 10, 15, 20, 25]
    assert history.eval["val"] == [1.0, 0.5, 0.6, 0.7, 0.8]
    assert len(history.loss) == 25
    assert (history.best_step, history.best_value) == (10, 0.5)


def test_evaluation_without_early_stop_runs_to_the_end_and_in_eval_mode():
    _, _, batches = _regression()
    modes = []

    def evaluate(model):
        modes.append((model.training, torch.is_grad_enabled()))
        return 1.0

    model = _model()
    history = fit(model, _mse, batches, steps=12, seed=0, eval_fn=evaluate, eval_every=5, progress=False)
    assert not history.stopped_early and history.eval_step == [5, 10, 12]
    assert modes == [(False, False)] * 3 and model.training


def test_max_mode_monitors_the_named_metric():
    _, _, batches = _regression()
    accs = iter([0.1, 0.2, 0.3, 0.3, 0.3])
    history = fit(
        _model(), _mse, batches, steps=50, seed=0, eval_every=10, early_stop_patience=2, monitor="acc",
        mode="max", eval_fn=lambda m: {"loss": 1.0, "acc": next(accs)}, progress=False,
    )  # fmt: skip
    assert history.stopped_early and history.best_value == 0.3 and history.best_step == 30


def test_iterators_are_accepted_and_running_out_is_a_clear_error():
    _, _, batches = _regression()
    data = [batches(s) for s in range(5)]
    assert len(fit(_model(), _mse, iter(data), steps=5, seed=0, progress=False).loss) == 5
    assert len(fit(_model(), _mse, itertools.cycle(data), steps=7, seed=0, progress=False).loss) == 7
    with pytest.raises(ValueError, match="ran out after 5 steps"):
        fit(_model(), _mse, data, steps=6, seed=0, progress=False)


def test_token_batches_count_tokens():
    emb = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10))

    def loss(model, batch):
        x, y = batch
        return nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())

    ids = torch.randint(0, 10, (3, 7), generator=torch.Generator().manual_seed(0))
    history = fit(emb, loss, lambda s: (ids, ids), steps=4, seed=0, progress=False)
    assert history.seen_unit == "tokens" and history.seen == [21, 42, 63, 84]
    assert history.throughput > 0


def test_history_smoothing():
    h = History(loss=[4.0, 2.0, 0.0, 2.0])
    np.testing.assert_allclose(h.smoothed_loss(2), [4.0, 3.0, 1.0, 1.0])


def test_progress_rule():
    assert not progress_enabled(False, {"NEURIPS26_PROGRESS": "1"})
    assert progress_enabled(True, {"NEURIPS26_PROGRESS": "1", "CI": "true"})
    assert not progress_enabled(True, {"NEURIPS26_PROGRESS": "0"})
    assert not progress_enabled(True, {"CI": "true"})
    with pytest.raises(ValueError, match="NEURIPS26_PROGRESS"):
        progress_enabled(True, {"NEURIPS26_PROGRESS": "maybe"})


def test_the_progress_bar_follows_the_environment_override(monkeypatch, capsys):
    _, _, batches = _regression()
    monkeypatch.setenv("NEURIPS26_PROGRESS", "1")
    fit(_model(), _mse, batches, steps=3, seed=0, desc="toy-run")
    assert "toy-run" in capsys.readouterr().err
    monkeypatch.setenv("NEURIPS26_PROGRESS", "0")
    fit(_model(), _mse, batches, steps=3, seed=0, desc="toy-run")
    assert "toy-run" not in capsys.readouterr().err


def test_bad_arguments_name_the_field():
    _, _, batches = _regression()
    with pytest.raises(ValueError, match="steps"):
        fit(_model(), _mse, batches, steps=0, seed=0)
    with pytest.raises(ValueError, match="warmup"):
        fit(_model(), _mse, batches, steps=5, warmup=6, seed=0)
    with pytest.raises(ValueError, match="grad_clip"):
        FitConfig(steps=5, seed=0, grad_clip=-1.0)
    with pytest.raises(ValueError, match="mode"):
        FitConfig(steps=5, seed=0, mode="best")
    with pytest.raises(TypeError, match="model"):
        fit(lambda x: x, _mse, batches, steps=5, seed=0)
    with pytest.raises(ValueError, match="eval_fn"):
        fit(_model(), _mse, batches, steps=5, seed=0, early_stop_patience=2)
    with pytest.raises(FloatingPointError, match="step 0"):
        fit(_model(), lambda m, b: _mse(m, b) * float("nan"), batches, steps=5, seed=0, progress=False)


# --- per-parameter options: lr_scale (name prefix -> factor) and no_decay (name prefixes) ---------------


def _groups_seen(run) -> list[list[tuple[float, float, list[int]]]]:
    """Run ``run()`` and record, at every optimizer step, each group's (lr, weight_decay, param ids)."""
    seen: list[list[tuple[float, float, list[int]]]] = []

    def record(optimizer, args, kwargs):
        groups = optimizer.param_groups
        seen.append([(g["lr"], g["weight_decay"], [id(p) for p in g["params"]]) for g in groups])

    handle = register_optimizer_step_pre_hook(record)
    try:
        run()
    finally:
        handle.remove()
    return seen


def test_without_the_options_the_groups_are_the_historical_two():
    _, _, batches = _regression()
    model = _model()
    seen = _groups_seen(lambda: fit(model, _mse, batches, steps=3, seed=0, weight_decay=0.1, progress=False))
    matrices = [id(p) for p in model.parameters() if p.ndim >= 2]
    vectors = [id(p) for p in model.parameters() if p.ndim < 2]
    for step in seen:
        assert [(wd, ids) for _, wd, ids in step] == [(0.1, matrices), (0.0, vectors)]


def test_factor_one_everywhere_is_bitwise_the_default_training():
    _, _, batches = _regression()
    runs = []
    for options in ({}, {"lr_scale": {"0": 1.0, "3": 1.0}, "no_decay": ()}):
        model = _model()
        kw = dict(steps=30, seed=3, lr=1e-2, warmup=3, weight_decay=0.1, progress=False)
        history = fit(model, _mse, batches, **kw, **options)
        runs.append((history.loss, [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0]
    assert all(torch.equal(a, b) for a, b in zip(runs[0][1], runs[1][1], strict=True))


def test_a_prefix_gets_its_factor_and_the_longest_prefix_wins():
    _, _, batches = _regression()
    model = _model()
    scale = {"0": 0.1, "0.weight": 0.5}
    schedule = dict(lr=1e-2, warmup=2, min_lr_ratio=0.1)
    seen = _groups_seen(
        lambda: fit(model, _mse, batches, steps=6, seed=0, lr_scale=scale, progress=False, **schedule)
    )
    factor_of = {id(p): scale.get(n, 0.1 if n.startswith("0.") else 1.0) for n, p in model.named_parameters()}
    assert {factor_of[id(model[0].weight)], factor_of[id(model[0].bias)]} == {0.5, 0.1}
    for s, step in enumerate(seen):
        rate = lr_at(s, steps=6, **schedule)
        covered = []
        for lr, _, ids in step:
            assert all(lr == pytest.approx(rate * factor_of[i], rel=1e-12) for i in ids)
            covered += ids
        assert sorted(covered) == sorted(factor_of)  # every parameter in exactly one group


def test_the_scaled_rate_scales_the_first_adam_step():
    # Adam's first update moves each weight by lr * g / (|g| + eps), i.e. by ~lr: the factor shows up in it.
    _, _, batches = _regression()
    model = _model(dropout=0.0)
    before = [p.detach().clone() for p in model.parameters()]
    fit(model, _mse, batches, steps=1, seed=0, lr=1e-3, grad_clip=None, lr_scale={"3": 0.1}, progress=False)
    moves = [(p.detach() - b).abs().max().item() for p, b in zip(model.parameters(), before, strict=True)]
    first, last = moves[:2], moves[2:]  # layer 0 (weight, bias), layer 3 (weight, bias)
    rate = lr_at(0, lr=1e-3, steps=1)  # one update: min_lr_ratio * lr = 1e-4
    assert all(m == pytest.approx(rate, rel=1e-2) for m in first)
    assert all(m == pytest.approx(0.1 * rate, rel=1e-2) for m in last)


def test_no_decay_params_are_untouched_by_decay():
    # A loss with zero gradient: Adam's update is 0, so only AdamW's decay p <- p (1 - lr wd) moves weights.
    _, _, batches = _regression()
    model = _model(dropout=0.0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}

    def flat(model, batch):
        return 0.0 * _mse(model, batch)

    kw = dict(steps=5, seed=0, lr=0.1, weight_decay=0.5, progress=False)
    history = fit(model, flat, batches, no_decay=("0",), **kw)
    after = dict(model.named_parameters())
    for name in ("0.weight", "0.bias", "3.bias"):  # excluded by prefix; biases are never decayed
        assert torch.equal(after[name].detach(), before[name])
    shrink = math.prod(1.0 - lr * 0.5 for lr in history.lr)
    torch.testing.assert_close(after["3.weight"].detach(), before["3.weight"] * shrink, rtol=1e-6, atol=0)
    assert shrink < 0.9  # the decay was large enough to see


def test_unknown_prefixes_name_their_option():
    _, _, batches = _regression()
    with pytest.raises(ValueError, match="lr_scale prefix 'K'"):
        fit(_model(), _mse, batches, steps=2, seed=0, lr_scale={"K": 0.1}, progress=False)
    with pytest.raises(ValueError, match="no_decay prefix 'K'"):
        fit(_model(), _mse, batches, steps=2, seed=0, no_decay=("K",), progress=False)
    # A prefix covers whole name components: "0.w" is not a prefix of "0.weight".
    with pytest.raises(ValueError, match="lr_scale prefix '0.w'"):
        fit(_model(), _mse, batches, steps=2, seed=0, lr_scale={"0.w": 0.1}, progress=False)
    frozen = _model()
    frozen[0].requires_grad_(False)  # a prefix that names only frozen parameters matches nothing trainable
    with pytest.raises(ValueError, match="no_decay prefix '0'"):
        fit(frozen, _mse, batches, steps=2, seed=0, no_decay=("0",), progress=False)


@pytest.mark.parametrize("factor", [0.0, -0.1, float("nan"), float("inf")])
def test_bad_factors_are_rejected(factor):
    with pytest.raises(ValueError, match="lr_scale"):
        FitConfig(steps=5, seed=0, lr_scale={"0": factor})


def test_bad_option_types_are_rejected():
    with pytest.raises(TypeError, match="lr_scale"):
        FitConfig(steps=5, seed=0, lr_scale={"0": "fast"})
    with pytest.raises(TypeError, match="lr_scale"):
        FitConfig(steps=5, seed=0, lr_scale=[("0", 0.1)])
    with pytest.raises(TypeError, match="no_decay"):
        FitConfig(steps=5, seed=0, no_decay="K")  # one str, not a sequence of prefixes
    with pytest.raises(ValueError, match="no_decay"):
        FitConfig(steps=5, seed=0, no_decay=("",))
    with pytest.raises(ValueError, match="lr_scale"):
        FitConfig(steps=5, seed=0, lr_scale={"K.": 0.1})
    config = FitConfig(steps=5, seed=0, lr_scale={"K": 1}, no_decay=["K"])
    assert config.lr_scale == {"K": 1.0} and config.no_decay == ("K",)
