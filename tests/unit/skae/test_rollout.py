"""Rollouts (no / every-step / periodic re-encoding), the paper's MSE reducer and the two cadence rules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.skae.model import KAE
from neurips26.skae.rollout import (
    best_periodic,
    cadence_table,
    frozen_cadence,
    mse_through,
    rollout,
    rollout_periods,
    step_errors,
)


@pytest.fixture(scope="module")
def model() -> KAE:
    m = KAE("lista", "dense", 16, seed=2).double()
    with torch.no_grad():  # a K that is not the identity, so re-encoding matters
        noise = torch.randn(16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        m.transition.K.copy_(torch.eye(16, dtype=torch.float64) + 0.05 * noise)
    return m


X0 = np.random.default_rng(0).normal(size=(5, 2))


def manual(model: KAE, x0: np.ndarray, horizon: int, reencode_at: set[int]) -> np.ndarray:
    """The paper's eq. (reencode) written step by step: advance, decode, re-encode at the given steps."""
    with torch.no_grad():
        z = model.encode(torch.as_tensor(x0))
        k = model.transition_matrix()
        out = []
        for t in range(1, horizon + 1):
            z = z @ k.T
            x = model.decode(z)
            out.append(x)
            if t in reencode_at:
                z = model.encode(x)
    return torch.stack(out, dim=1).numpy()


def test_period_one_is_every_step_reencoding(model: KAE) -> None:
    got = rollout(model, X0, 12, period=1)
    assert got.shape == (5, 12, 2)
    np.testing.assert_array_equal(got, manual(model, X0, 12, set(range(1, 13))))
    with torch.no_grad():  # every step: x̂_{t+1} = D(K E(x̂_t))
        x = torch.as_tensor(X0)
        for t in range(12):
            x = model.decode(model.step(model.encode(x)))
            np.testing.assert_allclose(got[:, t], x.numpy(), rtol=0, atol=1e-12)


def test_periodic_reencodes_at_multiples_of_the_period(model: KAE) -> None:
    np.testing.assert_array_equal(rollout(model, X0, 20, period=6), manual(model, X0, 20, {6, 12, 18}))


def test_no_reencoding_is_open_loop_and_a_long_period_equals_none(model: KAE) -> None:
    none = rollout(model, X0, 15)
    with torch.no_grad():
        z0 = model.encode(torch.as_tensor(X0))
        k = model.transition_matrix()
        for t in (1, 7, 15):
            open_loop = model.decode(z0 @ torch.linalg.matrix_power(k, t).T).numpy()
            np.testing.assert_allclose(none[:, t - 1], open_loop, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(rollout(model, X0, 15, period=16), none)
    np.testing.assert_array_equal(rollout(model, X0, 15, period=1000), none)
    assert not np.allclose(rollout(model, X0, 15, period=1), none)


def test_custom_step_replaces_k(model: KAE) -> None:
    same = rollout(model, X0, 6, period=2, step=model.step)
    np.testing.assert_array_equal(same, rollout(model, X0, 6, period=2))
    frozen = rollout(model, X0, 4, step=lambda z: z)
    with torch.no_grad():
        x_rec = model.decode(model.encode(torch.as_tensor(X0))).numpy()
    np.testing.assert_array_equal(frozen, np.repeat(x_rec[:, None], 4, axis=1))


def test_all_periods_in_one_batch_equal_one_rollout_per_period(model: KAE) -> None:
    periods = (1, 3, 7, None, 40)
    got = rollout_periods(model, X0, 20, periods)
    assert list(got) == list(periods)
    for m in periods:
        np.testing.assert_allclose(got[m], rollout(model, X0, 20, period=m), rtol=1e-12, atol=1e-12)
    step = lambda z: 0.5 * model.step(z)  # noqa: E731  (a custom latent step, as a routed one)
    np.testing.assert_allclose(
        rollout_periods(model, X0, 9, (2,), step=step)[2], rollout(model, X0, 9, period=2, step=step)
    )
    with pytest.raises(ValueError, match="periods"):
        rollout_periods(model, X0, 9, (2, 2))
    with pytest.raises(ValueError, match="period"):
        rollout_periods(model, X0, 9, (0,))


def test_forecast_table_rolls_a_period_free_baseline_once() -> None:
    from neurips26.skae.baselines.base import forecast_table

    class Counting:
        state_dim, relifts, calls = 2, False, 0

        def predict(self, x0, horizon, *, period=None):
            self.calls += 1
            return np.zeros((len(x0), horizon, 2))

    counting = Counting()
    table = forecast_table(counting, X0, np.ones((5, 10, 2)), horizons=(5, 10), periods=(1, 2, 5))
    assert counting.calls == 1 and len(table) == 6 and table[(2, 10)].mse == pytest.approx(2.0)


def test_mse_through_skips_non_finite_steps_and_nan_futures() -> None:
    truth = np.zeros((3, 4, 2))
    pred = np.ones((3, 4, 2))  # e = 2 at every finite step
    pred[0, 2:] = np.inf  # start 0 diverges after a finite prefix: its mean stays 2
    truth[1, 1] = np.nan  # a missing future state is skipped, not counted as an error
    pred[2] = np.nan  # start 2 never finite: left out of the mean
    e = step_errors(pred, truth)
    assert e[0].tolist()[:2] == [2.0, 2.0] and not np.isfinite(e[0, 2:]).any()
    f = mse_through(pred, truth, 4)
    assert f.mse == 2.0 and f.diverged == 3
    np.testing.assert_array_equal(f.per_start[:2], [2.0, 2.0])
    assert np.isnan(f.per_start[2])
    g = mse_through(pred, truth, 1)  # through H = 1 only start 2 is non-finite
    assert g.mse == 2.0 and g.diverged == 1
    pred2 = pred.copy()
    pred2[1, 3, 0] = 6.0  # e = 36 + 1 at step 4 of start 1
    assert mse_through(pred2, truth, 4).per_start[1] == pytest.approx((2 + 2 + 37) / 3)
    assert np.isnan(mse_through(np.full((1, 2, 2), np.nan), np.zeros((1, 2, 2)), 2).mse)


def test_best_periodic_is_the_grid_minimum_on_the_same_starts(model: KAE) -> None:
    gen = np.random.default_rng(1)
    truth = gen.normal(size=(5, 30, 2))
    result = best_periodic(model, X0, truth, horizons=(10, 30), periods=(1, 5, 40))
    for h in (10, 30):
        values = {m: result.table[(m, h)] for m in (1, 5, 40)}
        assert result.mse[h] == min(values.values())
        assert result.period[h] == min(values, key=values.get)
    pred = rollout(model, X0, 30, period=5)
    assert result.table[(5, 30)] == mse_through(pred, truth, 30).mse


def test_frozen_cadence_picks_on_validation(model: KAE) -> None:
    gen = np.random.default_rng(2)
    truth = gen.normal(size=(5, 20, 2))
    same = frozen_cadence(model, X0, truth, X0, truth, horizons=(20,), periods=(1, 3, 50))
    assert same == best_periodic(model, X0, truth, horizons=(20,), periods=(1, 3, 50))
    # validation truth that is exactly the period-50 (open-loop) forecast makes 50 the frozen choice
    val_truth = rollout(model, X0, 20, period=50)
    frozen = frozen_cadence(model, X0, val_truth, X0, truth, horizons=(20,), periods=(1, 3, 50))
    assert frozen.period[20] == 50
    assert frozen.mse[20] == frozen.table[(50, 20)]
    assert frozen.mse[20] >= same.mse[20]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"horizon": 0}, ValueError, "horizon must be >= 1"),
        ({"horizon": 3, "period": 0}, ValueError, "period must be >= 1"),
        ({"horizon": 3, "period": 2.5}, TypeError, "period must be an int"),
        ({"horizon": 3, "x0": np.zeros((4, 3))}, ValueError, r"x0 must have shape \(N, state_dim=2\)"),
        ({"horizon": 3, "x0": np.array([[0.0, np.nan]])}, ValueError, "x0 must contain only finite"),
    ],
)
def test_bad_rollout_inputs(model: KAE, kwargs: dict, error: type, match: str) -> None:
    args = {"x0": X0, **kwargs}
    with pytest.raises(error, match=match):
        rollout(model, args.pop("x0"), **args)


def test_bad_metric_inputs(model: KAE) -> None:
    with pytest.raises(ValueError, match="truth must have the shape"):
        mse_through(np.zeros((2, 3, 2)), np.zeros((2, 4, 2)), 3)
    with pytest.raises(ValueError, match="horizon must be <= 3"):
        mse_through(np.zeros((2, 3, 2)), np.zeros((2, 3, 2)), 4)
    with pytest.raises(ValueError, match=r"truth must have shape \(N, H >= 30"):
        cadence_table(model, X0, np.zeros((5, 20, 2)), horizons=(10, 30), periods=(1,))
    with pytest.raises(ValueError, match="horizons must be strictly increasing"):
        cadence_table(model, X0, np.zeros((5, 20, 2)), horizons=(20, 10), periods=(1,))
    with pytest.raises(ValueError, match=r"periods\[0\] must be >= 1"):
        cadence_table(model, X0, np.zeros((5, 20, 2)), horizons=(10,), periods=(0,))
