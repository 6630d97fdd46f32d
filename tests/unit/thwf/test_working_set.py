import numpy as np
import pytest

from neurips26.thwf.metrics import lifted_error
from neurips26.thwf.working_set import WorkingSet


def _set(truth: bool):
    h = np.arange(8.0).reshape(4, 2) + 1j
    x = -np.arange(8.0).reshape(4, 2) + 1.0
    state = {"h": h.copy(), "x": x.copy(), "step": np.ones(4)}
    h0, x0 = (h + 0.5, x) if truth else (None, None)
    return h, x, h0, x0, WorkingSet(state, 5, h0, x0)


def test_finished_instances_keep_their_final_iterate_and_leave_the_state():
    h, x, h0, x0, active = _set(truth=True)
    np.testing.assert_allclose(active.errors[:, 0], lifted_error(h, x, h0, x0))
    assert not active.advance(0, h + 1, x, done=np.array([False, True, False, True]))
    np.testing.assert_array_equal(active.rows, [0, 2])
    assert set(active.state) == {"h", "x", "step", "h0", "x0"} and active.state["step"].shape == (2,)
    h_rest = active.state["h"] + 1
    bad = h_rest.copy()
    bad[1, 0] = np.nan  # instance 2 diverges at the second iteration
    assert active.advance(1, bad, active.state["x"], done=np.array([True, False]))
    h_out, x_out, errors, iterations, converged, diverged = active.outcome()
    np.testing.assert_array_equal(iterations, [2, 1, 2, 1])
    np.testing.assert_array_equal(converged, [True, True, False, True])
    np.testing.assert_array_equal(diverged, [False, False, True, False])
    np.testing.assert_array_equal(h_out[[1, 3]], (h + 1)[[1, 3]])
    np.testing.assert_array_equal(h_out[0], h[0] + 2)
    np.testing.assert_array_equal(x_out, x)
    assert np.isnan(errors[1, 2]) and np.isfinite(errors[0, 2]) and np.isnan(errors[:, 3:]).all()


def test_without_truth_there_are_no_errors():
    h, x, _, _, active = _set(truth=False)
    active.advance(0, h, x, done=np.zeros(4, dtype=bool))
    assert active.errors is None
    np.testing.assert_array_equal(active.outcome()[0], h)


def test_state_must_hold_the_iterates():
    with pytest.raises(ValueError, match="state"):
        WorkingSet({"h": np.zeros((1, 1))}, 3)
