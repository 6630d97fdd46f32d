"""The compositional solver: exact at p = 0, its total errors are the sum of its part errors, determinism."""

import numpy as np
import pytest

from neurips26.spatial_iq.dataset import build
from neurips26.spatial_iq.solver import Perception, solve
from neurips26.spatial_iq.tasks import NUMERIC


@pytest.fixture(scope="module")
def data():
    return build(range(30))


def test_exact_without_noise(data):
    sheet = solve(data.labels, data.partner_labels(), Perception(0.0), seed=0)
    for task in (*NUMERIC, "hidden", "S1"):
        np.testing.assert_array_equal(sheet[task], data.truth[task], err_msg=task)


def test_noise_costs_accuracy_and_errors_compose(data):
    sheet = solve(data.labels, data.partner_labels(), Perception(0.3), seed=1)
    t1 = np.mean(sheet["T1"] == data.truth["T1"])
    assert t1 < 0.9
    # the total is composed: visible + hidden, so its error is the sum of those errors
    err = lambda t: sheet[t] - data.truth[t]  # noqa: E731
    np.testing.assert_array_equal(err("T1"), err("S5") + err("hidden"))


def test_deterministic_and_bad_input(data):
    a = solve(data.labels, data.partner_labels(), Perception(0.2), seed=5)
    b = solve(data.labels, data.partner_labels(), Perception(0.2), seed=5)
    for t in a:
        np.testing.assert_array_equal(a[t], b[t])
    with pytest.raises(ValueError, match="p"):
        Perception(1.5)
    with pytest.raises(TypeError, match="perception"):
        solve(data.labels, data.partner_labels(), 0.2, seed=0)
