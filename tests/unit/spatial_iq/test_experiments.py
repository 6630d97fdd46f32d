"""The claims' measurements: the solver is tuned on calibration views only, the exact solver answers every
multiple-choice item, a random chooser sits at chance, and the shortcut's two models differ as documented."""

import numpy as np
import pytest

from neurips26.spatial_iq import metrics
from neurips26.spatial_iq.dataset import build
from neurips26.spatial_iq.experiments import ClaimsConfig, mcq_calibration, solver_sheet, tune_solver
from neurips26.spatial_iq.shortcut import fit_shortcut


@pytest.fixture(scope="module")
def data():
    return build(range(40))


def test_tuning_picks_the_level_closest_to_the_target(data):
    grid = (0.0, 0.2, 0.4)
    accs = [float(np.mean(solver_sheet(data, p, 0)["T1"] == data.truth["T1"])) for p in grid]
    assert accs[0] == 1.0 and accs[0] > accs[1] > accs[2]
    assert tune_solver(data, accs[1] + 0.01, grid, seed=0) == 0.2
    assert tune_solver(data, 1.0, grid, seed=0) == 0.0


def test_mcq_calibration(data):
    out = mcq_calibration(data, ClaimsConfig(mcq_items=150))
    assert all(v == 1.0 for v in out["solver (exact)"].values())
    for k, acc in out["random"].items():
        assert abs(metrics.chance_adjusted(acc, k)) < 0.2  # 150 items: a loose band


def test_the_ridge_shortcut_composes_by_algebra(data):
    """Least squares is linear in the targets: its T1 prediction is the sum of its S5 and hidden ones."""
    ridge = fit_shortcut(data, model="ridge", strength=1e-6)
    w = ridge.models
    np.testing.assert_allclose(w["T1"], w["S5"] + _hidden_weights(data), atol=1e-6)
    logistic = fit_shortcut(data)
    sheet = logistic.answer(data)
    assert set(sheet) >= {"S1", "S5", "T1", "T2a"} and sheet["T1"].dtype == np.int64
    with pytest.raises(ValueError, match="model"):
        fit_shortcut(data, model="tree")


def _hidden_weights(data):
    from neurips26.spatial_iq.shortcut import features

    f = features(data.images, [lab.view for lab in data.labels])
    x = np.hstack([(f - f.mean(0)) / (f.std(0) + 1e-9), np.ones((len(f), 1))])
    reg = 1e-6 * np.eye(x.shape[1])
    reg[-1, -1] = 0.0
    return np.linalg.solve(x.T @ x + reg, x.T @ data.truth["hidden"].astype(float))
