"""Chapter 18's experiments at smoke: one scene set for every method, scored on the reference proxies."""

import numpy as np
import pytest

from neurips26.iohp import experiments as X
from neurips26.iohp.metrics import OVERLAP_THRESHOLD, collision_pairs, out_of_bounds
from neurips26.iohp.proxy import default_proxies


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("iohp-runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def scenes():
    return X.scene_set("smoke")


def test_scene_set_is_one_medium_scene_per_room_type_at_smoke(scenes):
    assert [s.room_type for s in scenes] == ["bedroom", "living", "dining", "office"]
    assert {s.density for s in scenes} == {"medium"}
    for s in scenes:
        assert s.proxies == default_proxies(s.layout)
    again = X.scene_set("smoke")
    for a, b in zip(scenes, again, strict=True):
        np.testing.assert_array_equal(a.layout.poses(), b.layout.poses())


def test_default_plan_has_48_scenes_and_the_evaluation_seeds():
    plan = X.plan_for("default")
    assert len(plan.seeds) * len(plan.densities) * 4 == 48
    assert max(plan.seeds) < 100  # the development scenes were seeds 100 and up


@pytest.mark.parametrize("method", ["iohp", "holodeck", "random"])
def test_run_method_is_deterministic_and_keeps_the_scenes(cache, scenes, method):
    a = X.run_method(method, "smoke")
    b = X.run_method(method, "smoke")  # from the cache
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_NO_CACHE", "1")
        c = X.run_method(method, "smoke")  # recomputed
    for run in (b, c):
        for f in X.METRIC_FIELDS:
            np.testing.assert_array_equal(a.metrics[f], run.metrics[f])
    for lay, scene in zip(a.layouts, scenes, strict=True):
        assert lay.room == scene.layout.room and lay.categories == scene.layout.categories


def test_iohp_is_physically_valid_and_beats_layoutvlm_on_conflicts(cache, scenes):
    iohp = X.run_method("iohp", "smoke")
    vlm = X.run_method("layoutvlm", "smoke")
    for lay in iohp.layouts:
        assert len(collision_pairs(lay, threshold=OVERLAP_THRESHOLD)) == 0
        assert not out_of_bounds(lay).any()
    assert iohp.mean("proxy_conflict") < vlm.mean("proxy_conflict")
    assert iohp.work_unit == "E evaluations" and (iohp.work > 0).all()


def test_score_uses_the_reference_proxies_not_a_methods_own(scenes):
    s = scenes[0]
    m = X.score(s.layout, s.proxies)
    assert m.n_proxies == len(s.proxies)
    assert X.score_all([s.layout], [s])["accessibility"][0] == m.accessibility


def test_benchmark_table_has_a_row_per_run_and_masks_scenes(cache, scenes):
    runs = {m: X.run_method(m, "smoke") for m in ("initial", "iohp")}
    text = X.benchmark_table(runs, scenes)
    assert text.count("\n") == 3 and "IOHP" in text and "initial layout" in text
    mask = X.scene_mask(scenes, room_type="office")
    assert mask.tolist() == [False, False, False, True]
    rows = X.benchmark_rows(runs, scenes, room_type="office")
    assert rows[1][4] == f"{100 * runs['iohp'].metrics['accessibility'][3]:.1f}"


def test_noise_curve_starts_at_the_clean_run(cache):
    curve = X.noise_curve((0.0, 0.5), "smoke")
    assert curve.accessibility[0] == pytest.approx(X.run_method("iohp", "smoke").mean("accessibility"))
    assert curve.layoutvlm["accessibility"] == pytest.approx(
        X.run_method("layoutvlm", "smoke").mean("accessibility")
    )


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="method"):
        X.run_method("magic", "smoke")
    with pytest.raises(ValueError, match="noise"):
        X.run_method("noisy", "smoke", noise=1.5)
    with pytest.raises(TypeError, match="backend"):
        X.run_method("iohp", "smoke", backend="gpt")
    with pytest.raises(ValueError, match="field"):
        X.MethodRun("iohp", (), 0.0, np.zeros(0), "none", 0, {}).mean("speed")
    with pytest.raises(ValueError, match="levels"):
        X.noise_curve((), "smoke")
