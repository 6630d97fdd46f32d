import numpy as np
import pytest

from neurips26.thwf.working_set import WorkingSet


def test_retired_instances_keep_their_final_iterate_and_leave_the_state():
    h = np.arange(8.0).reshape(4, 2)
    x = -np.arange(8.0).reshape(4, 2)
    active = WorkingSet(
        {"h": h.copy(), "x": x.copy(), "step": np.ones(4)}, np.zeros((4, 2)), np.zeros((4, 2))
    )
    active.state["h"] = active.state["h"] + 100  # one iteration for everybody
    assert not active.retire(np.array([False, True, False, True]))
    np.testing.assert_array_equal(active.rows, [0, 2])
    assert set(active.state) == {"h", "x", "step"} and active.state["step"].shape == (2,)
    active.state["h"] = active.state["h"] + 1  # the remaining two iterate once more
    h_out, x_out = active.outputs()
    np.testing.assert_array_equal(h_out, h + np.array([[101], [100], [101], [100]]))
    np.testing.assert_array_equal(x_out, x)
    assert active.retire(np.array([True, True]))  # nothing left


def test_state_must_hold_the_iterates():
    with pytest.raises(ValueError, match="state"):
        WorkingSet({"h": np.zeros((1, 1))}, np.zeros((1, 1)), np.zeros((1, 1)))
