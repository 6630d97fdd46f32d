"""The diagnostics: the cost decomposition holds exactly, drift is a KL (≥ 0, 0 on the full set), and the
overlap and quadrant counts count what they say."""

import numpy as np
import pytest
import torch

from neurips26.costgrad import diagnostics as DG

from .test_selection import _model, _tokens


def test_the_cost_decomposition_is_exact():
    m = _model()
    z, _ = _tokens(1)
    goal, _ = _tokens(1, seed=3)
    actions = np.random.default_rng(0).uniform(-1, 1, (6, 3, 4))
    d = DG.decomposition(m, z[0], goal[0], np.array([0, 2, 3, 9, 11]), actions)
    np.testing.assert_allclose(d.sparse - d.full, d.sparse_change - d.discarded, atol=1e-10)
    assert (d.discarded >= 0).all()
    everything = DG.decomposition(m, z[0], goal[0], np.arange(16), actions)
    np.testing.assert_allclose(everything.discarded, 0.0, atol=1e-10)
    np.testing.assert_allclose(everything.sparse_change, 0.0, atol=1e-10)


def test_drift_is_a_kl_that_vanishes_on_the_full_set():
    m = _model()
    z, a = _tokens(1)
    assert DG.drift(m, z[0], np.arange(16), a[0]) == pytest.approx(0.0, abs=1e-9)
    rng = np.random.default_rng(1)
    for _ in range(5):
        assert DG.drift(m, z[0], np.sort(rng.choice(16, 6, replace=False)), a[0]) >= 0.0
    _ = torch


def test_overlap_quadrants_and_probe_correlation():
    assert DG.iou(np.array([1, 2, 3]), np.array([2, 3, 4])) == pytest.approx(0.5)
    error = np.arange(16.0)
    assert DG.easy_but_critical(error, -error) == 4  # the easiest are the most critical
    assert DG.easy_but_critical(error, error) == 0
    s = np.arange(10.0)
    assert DG.probe_spearman(s, [s * 2, s + 1]) == pytest.approx(1.0)
