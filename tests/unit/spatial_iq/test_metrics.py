"""Hierarchy metrics: a perfect responder scores 1 everywhere, hand-built tables give their hand-computed
values (pooled versus per-edge chain, the NaN rules of each direction, the summation residual, Holm and
BH), chance adjustment is exact and centres a random responder at 0, McNemar is symmetric, the
fixed-effect correlation ignores per-group constants, and bad input names the argument."""

import numpy as np
import pytest
from scipy import stats

from neurips26 import stats as shared_stats
from neurips26.spatial_iq import metrics as M
from neurips26.spatial_iq.scenes import sample_scene
from neurips26.spatial_iq.tasks import TASKS, view_labels

D1, D2 = M.DIRECTIONS


@pytest.fixture(scope="module")
def truth_and_heights():
    """Truth sheet and height maps of 10 scenes x 4 views."""
    answers, heights = [], []
    for seed in range(10):
        scene = sample_scene(seed)
        for k in range(4):
            answers.append(view_labels(scene, scene.view(k)).answers)
            heights.append(scene.heights)
    truth = {
        task: np.array([a[task] for a in answers], dtype=object if task == "S1" else np.int64)
        for task in (*TASKS, "hidden")
    }
    return truth, np.stack(heights)


def _flags(*rows):
    return {task: np.array(values, dtype=bool) for task, values in rows}


# --- perfect responder, correctness -------------------------------------------------------------------------


@pytest.mark.parametrize("direction", M.DIRECTIONS)
def test_a_perfect_sheet_scores_one_on_every_profile_column(truth_and_heights, direction):
    truth, _ = truth_and_heights
    pred = {task: values.copy() for task, values in truth.items()}
    row = M.profile(pred, truth, direction)
    assert tuple(row) == M.PROFILE_COLUMNS
    for column in ("T1", "IRC", "S5", "VisSup", "S9", "HidSup", "SumMech", "rotation"):
        assert row[column] == 1.0, column
    # collapse of a perfect sheet = how often the true sub-answers equal the true total, counted by hand
    equal = pairs = 0
    for v in range(truth["T1"].shape[0]):
        for task in ("S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9"):
            pairs += 1
            equal += int(truth[task][v] == truth["T1"][v])
    assert row["collapse"] == pytest.approx(equal / pairs)
    assert 0 < row["collapse"] < 1


def test_a_perfect_sheet_composes_although_t1_is_not_s5_plus_s9(truth_and_heights):
    truth, _ = truth_and_heights
    # the raw identity fails where hidden blocks stack (S9 < hidden); scoring errors still gives 1
    assert np.all(truth["T1"] == truth["S5"] + truth["hidden"])
    assert np.any(truth["T1"] != truth["S5"] + truth["S9"])
    assert np.all(M.summation_residual(truth, truth) == 0)
    assert M.summation_mechanism(truth, truth) == 1.0


def test_perfect_mcq_verdicts_score_one_after_chance_adjustment(truth_and_heights):
    truth, _ = truth_and_heights
    correct = {task: np.ones(truth["T1"].shape[0], dtype=bool) for task in TASKS}
    row = M.profile_from_correct(correct, D2, k=5)
    assert all(row[c] == 1.0 for c in M.PROFILE_COLUMNS if c != "collapse")
    assert np.isnan(row["collapse"])


def test_correctness_unparsed_and_none_are_never_correct():
    truth = {"T1": np.array([3, 4, 5]), "S1": np.array(["cube", "can", "tin"], dtype=object)}
    pred = {
        "T1": np.array([3, -1, 6]),
        "S1": np.array(["cube", None, "can"], dtype=object),
        "S5": np.array([1, 2, 3]),
    }
    c = M.correctness(pred, truth)
    assert set(c) == {"T1", "S1"}  # S5 is not in truth
    np.testing.assert_array_equal(c["T1"], [True, False, False])
    np.testing.assert_array_equal(c["S1"], [True, False, False])
    assert c["T1"].dtype == bool


# --- relation integrity: hand-built tables ------------------------------------------------------------------

CHAIN = _flags(("S6", [1, 0, 0, 1, 1, 0]), ("S7", [1, 1, 1, 0, 0, 0]), ("S8", [1, 1, 0, 0, 0, 0]))


def test_pooled_chain_differs_from_the_edge_mean_and_matches_the_hand_count():
    # S6 -> S7: S7 right on views 0, 1, 2, S6 right on 1 of them (2 violations of 3 testable);
    # S7 -> S8: S8 right on views 0, 1, S7 right on both (0 of 2). Pooled: 1 - 2/5; edge mean: (1/3 + 1)/2.
    assert M.relation_integrity(CHAIN["S6"], CHAIN["S7"], D1) == pytest.approx(1 / 3)
    assert M.relation_integrity(CHAIN["S7"], CHAIN["S8"], D1) == 1.0
    assert M.chain_integrity(CHAIN, D1) == pytest.approx(0.6)
    # other direction: Pr(S7 | S6) = 1/3 (views 0, 3, 4), Pr(S8 | S7) = 2/3 (views 0, 1, 2); mean 1/2
    assert M.chain_integrity(CHAIN, D2) == pytest.approx(0.5)


def test_chain_nan_rules():
    none_dependent = _flags(("S6", [1, 1, 0]), ("S7", [0, 0, 0]), ("S8", [0, 0, 0]))
    assert np.isnan(M.chain_integrity(none_dependent, D1))  # no view with a dependent right
    # other direction: S6 never right -> edge 1 undefined, edge 2 carries the chain: Pr(S8 | S7) = 1/2
    first_undefined = _flags(("S6", [0, 0, 0, 0]), ("S7", [1, 1, 0, 0]), ("S8", [1, 0, 1, 0]))
    assert M.chain_integrity(first_undefined, D2) == 0.5
    # pooled: edge 1 has 2 testable views with 2 violations, edge 2 one testable view (S8 right at view 0
    # and S7 right there; view 2 has S8 right but S7 wrong): 1 - (2 + 1) / (2 + 2)
    assert M.chain_integrity(first_undefined, D1) == pytest.approx(0.25)
    # a missing task skips its edge in the pooled count, and everything missing is NaN
    assert M.chain_integrity({k: CHAIN[k] for k in ("S6", "S7")}, D1) == pytest.approx(1 / 3)
    assert np.isnan(M.chain_integrity({}, D1)) and np.isnan(M.chain_integrity({}, D2))


SUPPORT = _flags(("S3", [1, 1, 0, 0, 1, 0]), ("S4", [1, 0, 1, 0, 0, 0]), ("S5", [1, 1, 1, 0, 0, 0]))


def test_visible_support_by_hand_in_both_directions():
    # Pr(S3 | S5) = 2/3, Pr(S4 | S5) = 2/3; Pr(S5 | S3) = 2/3 (views 0, 1, 4), Pr(S5 | S4) = 1 (views 0, 2)
    assert M.visible_support(SUPPORT, D1) == pytest.approx(2 / 3)
    assert M.visible_support(SUPPORT, D2) == pytest.approx(5 / 6)


def test_support_with_an_undefined_edge():
    c = {"S3": SUPPORT["S3"], "S9": SUPPORT["S5"]}  # S8 not asked
    assert np.isnan(M.hidden_support(c, D1))  # paper direction: undefined
    assert M.hidden_support(c, D2) == pytest.approx(2 / 3)  # other direction: S3 -> S9 alone
    never_dependent = {"S3": np.ones(4, bool), "S4": np.ones(4, bool), "S5": np.zeros(4, bool)}
    assert np.isnan(M.visible_support(never_dependent, D1))
    assert M.visible_support(never_dependent, D2) == 0.0


def test_relation_integrity_nan_and_pairwise_dropping():
    assert np.isnan(M.relation_integrity(np.array([1, 1]), np.array([0, 0]), D1))
    assert np.isnan(M.relation_integrity(np.array([0, 0]), np.array([1, 1]), D2))
    prereq = np.array([1.0, 0.0, np.nan, 1.0])
    dep = np.array([1.0, 1.0, 1.0, np.nan])
    assert M.relation_integrity(prereq, dep, D1) == 0.5  # views 2 and 3 are not scored on both


# --- summation ----------------------------------------------------------------------------------------------


def test_summation_residual_on_hand_built_errors():
    truth = {"T1": np.array([10, 10, 10, 10]), "S5": np.array([8, 8, 8, 8]), "S9": np.array([1, 1, 1, 1])}
    # view 0: +2 = +1 + +1 (composes); view 1: +1 vs +2 (residual -1); view 2: all right;
    # view 3: S9 unparsed
    pred = {"T1": np.array([12, 11, 10, 10]), "S5": np.array([9, 9, 8, 8]), "S9": np.array([2, 2, 1, -1])}
    np.testing.assert_array_equal(M.summation_residual(pred, truth), [0.0, -1.0, 0.0, np.nan])
    assert M.summation_mechanism(pred, truth) == pytest.approx(2 / 3)  # view 3 left out, as released
    assert M.summation_mechanism(pred, truth, unparsed="fail") == 0.5
    assert np.isnan(M.summation_mechanism({"T1": pred["T1"]}, truth))
    all_unparsed = {task: np.full(4, -1) for task in ("T1", "S5", "S9")}
    assert np.isnan(M.summation_mechanism(all_unparsed, truth))


def test_summation_conditional_and_table_by_hand():
    c = _flags(
        ("S5", [1, 1, 1, 1, 0, 0, 1, 0]),
        ("S9", [1, 1, 1, 0, 1, 0, 0, 0]),
        ("T1", [1, 1, 0, 1, 0, 0, 0, 1]),
    )
    assert M.summation_conditional(c) == pytest.approx(2 / 3)
    acc, counts = M.summation_table(c)
    np.testing.assert_array_equal(counts, [[2, 1], [2, 3]])  # rows S5 wrong/right, columns S9 wrong/right
    np.testing.assert_allclose(acc, [[0.5, 0.0], [0.5, 2 / 3]])
    empty_cell = _flags(("S5", [1, 1]), ("S9", [1, 0]), ("T1", [1, 0]))
    acc, counts = M.summation_table(empty_cell)
    assert np.isnan(acc[0, 0]) and counts[0, 0] == 0
    acc, counts = M.summation_table({"T1": c["T1"]})
    assert np.all(np.isnan(acc)) and np.all(counts == 0)
    assert np.isnan(M.summation_conditional(_flags(("S5", [0, 1]), ("S9", [1, 0]), ("T1", [1, 1]))))


def test_collapse_share_counts_answers_equal_to_the_own_total():
    pred = {
        "T1": np.array([9, 7, -1]),
        "S5": np.array([9, 5, 9]),
        "S9": np.array([9, 7, 3]),
        "S3": np.array([-1, 7, 2]),
    }
    # pairs with both parsed: S5 (2), S9 (2), S3 (1); equal: S5 1, S9 2, S3 1
    assert M.collapse_share(pred) == pytest.approx(4 / 5)
    assert M.collapse_share(pred, tasks=("S5",)) == 0.5
    echo = {task: np.array([4, 6, 8]) for task in ("T1", *M.COLLAPSE_TASKS)}
    assert M.collapse_share(echo) == 1.0
    assert np.isnan(M.collapse_share({"S5": np.array([1])}))


# --- chance adjustment --------------------------------------------------------------------------------------


def test_chance_adjustment_is_exact_at_chance_and_at_one():
    for k in range(2, 50):
        assert M.chance_adjusted(1 / k, k) == 0.0
        assert M.chance_adjusted(1.0, k) == 1.0
    out = M.chance_adjusted(np.array([0.2, 0.6, np.nan]), np.array([5, 5, 5]))
    np.testing.assert_allclose(out, [0.0, 0.5, np.nan])
    assert M.chance_adjusted(np.array([[0.25], [1.0]]), np.array([3, 4])).shape == (2, 2)


@pytest.mark.parametrize("k", [3, 4, 5])
def test_a_uniformly_random_responder_is_at_zero_after_adjustment(k):
    rng = np.random.default_rng(1234 + k)
    answers, picks = rng.integers(0, k, 20_000), rng.integers(0, k, 20_000)
    correct = {"T1": picks == answers}
    assert abs(M.chance_adjusted(M.accuracies(correct)["T1"], k)) < 0.02
    row = M.profile_from_correct(correct, D2, k=k)
    assert abs(row["T1"]) < 0.02


# --- paired tests, corrections ------------------------------------------------------------------------------


def test_mcnemar_symmetric_exact_and_one_without_discordant_pairs():
    a = np.array([1, 1, 1, 1, 1, 0, 0, 1], dtype=bool)
    b = np.array([0, 0, 0, 0, 0, 0, 0, 1], dtype=bool)
    assert M.mcnemar(a, b) == M.mcnemar(b, a) == pytest.approx(2 * 0.5**5)
    assert M.mcnemar(a, a) == 1.0
    rng = np.random.default_rng(0)
    x, y = rng.random(200) < 0.6, rng.random(200) < 0.5
    assert M.mcnemar(x, y) == pytest.approx(M.mcnemar(y, x))


def test_holm_by_hand_monotone_and_capped():
    p = np.array([0.01, 0.04, 0.03, 0.5, np.nan])
    np.testing.assert_allclose(M.holm(p), [0.04, 0.09, 0.09, 0.5, np.nan])
    np.testing.assert_allclose(M.benjamini_hochberg(p), [0.04, 0.16 / 3, 0.16 / 3, 0.5, np.nan])
    rng = np.random.default_rng(7)
    q = rng.random(40) ** 3
    adj = M.holm(q)
    order = np.argsort(q)
    assert np.all(np.diff(adj[order]) >= 0) and np.all(adj >= q) and adj.max() <= 1.0
    np.testing.assert_allclose(M.benjamini_hochberg(q), stats.false_discovery_control(q))
    assert np.all(M.holm(np.array([0.6, 0.7])) == 1.0)


# --- difficulty ---------------------------------------------------------------------------------------------


def test_difficulty_factors_from_real_views(truth_and_heights):
    truth, heights = truth_and_heights
    f = M.difficulty_factors(truth, heights)
    np.testing.assert_array_equal(f["total"], truth["T1"])
    np.testing.assert_array_equal(f["hidden"], truth["hidden"])
    np.testing.assert_array_equal(f["columns"], truth["S3"])
    np.testing.assert_array_equal(f["layers"], truth["S4"])
    np.testing.assert_allclose(f["fill_ratio"], truth["T1"] / (truth["S3"] * truth["S4"]))
    np.testing.assert_allclose(
        f["fill_ratio_heights"], heights.sum(axis=(1, 2)) / (truth["S3"] * truth["S4"])
    )
    assert np.all(f["fill_ratio"] <= f["fill_ratio_heights"] + 1e-12) and np.all(f["fill_ratio_heights"] <= 1)
    with pytest.raises(ValueError, match="heights"):
        M.difficulty_factors(truth, np.roll(heights, 1, axis=0))
    with pytest.raises(ValueError, match="truth"):
        M.difficulty_factors({"T1": truth["T1"]}, heights)


def test_difficulty_bins_are_right_closed_by_hand():
    edges, labels = M.DIFFICULTY_BINS["total"]
    values = np.array([3, 8, 9, 12, 13, 30, 0, 200])
    correct = np.array([1, 0, 1, 1, 0, 1, 1, 1], dtype=bool)
    acc, counts = M.difficulty_bins(values, correct, edges)
    assert len(labels) == len(acc) == 5
    np.testing.assert_array_equal(counts, [2, 2, 1, 0, 1])  # 0 and 200 fall in no bin
    np.testing.assert_array_equal(acc[[0, 1, 2, 4]], [0.5, 1.0, 0.0, 1.0])
    assert np.isnan(acc[3])
    acc, counts = M.difficulty_bins(np.array([0.55, 0.56, np.nan]), np.array([1, 0, 1]), (0.0, 0.55, 1.0))
    np.testing.assert_array_equal(counts, [1, 1])


# --- wrong-answer preference --------------------------------------------------------------------------------


def test_wrong_answer_preference_by_hand():
    picks = np.array(["correct"] * 4 + ["phantom"] * 4 + ["merge"] * 2 + [None], dtype=object)
    out = M.wrong_answer_preference(picks, 5)
    assert list(out) == ["phantom", "merge"]
    count, share, p = out["phantom"]
    assert (count, share) == (4, 0.4)
    assert p == pytest.approx(stats.binom.sf(3, 10, 0.2))
    wrong = M.wrong_answer_preference(picks, 5, among="wrong")
    assert wrong["merge"][:2] == (2, 2 / 6)
    assert wrong["merge"][2] == pytest.approx(stats.binom.sf(1, 6, 0.25))
    assert M.wrong_answer_preference(np.array(["correct"], dtype=object), 3) == {}


# --- correlations -------------------------------------------------------------------------------------------


def test_fixed_effect_correlation_by_hand_and_group_constant_invariance():
    groups = np.array(["a", "a", "b", "b"], dtype=object)
    r, _, n = M.fixed_effect_correlation(np.array([0, 1, 0, 1]), np.array([0, 1, 1, 0]), groups)
    assert n == 4 and r == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(3)
    g = rng.integers(0, 12, 300)
    x = rng.normal(size=300)
    y = 0.5 * x + rng.normal(size=300)
    r0, p0, n0 = M.fixed_effect_correlation(x, y, g)
    shift = rng.normal(scale=10, size=12)
    r1, p1, n1 = M.fixed_effect_correlation(x + shift[g], y - 3 * shift[g], g)
    assert (r1, n1) == (pytest.approx(r0), n0) and p1 == pytest.approx(p0)
    assert 0.2 < r0 < 0.8
    # plain Pearson is not invariant: the shifts dominate it
    assert abs(stats.pearsonr(x + shift[g], y - 3 * shift[g]).statistic - r0) > 0.3


def test_fixed_effect_correlation_nan_cases():
    r, p, n = M.fixed_effect_correlation(np.array([1.0, 0.0]), np.array([1.0, 0.0]), np.array([0, 0]))
    assert np.isnan(r) and np.isnan(p) and n == 2
    singletons = np.arange(5)  # every demeaned value is 0
    assert np.isnan(M.fixed_effect_correlation(np.arange(5.0), np.arange(5.0), singletons)[0])
    x = np.array([1.0, 2.0, np.nan, 4.0, 0.0])
    r, _, n = M.fixed_effect_correlation(x, x, np.array([0, 0, 0, 1, 1]))
    assert n == 4 and r == pytest.approx(1.0)


def _pooled_responders(seed=0, views=300, responders=4):
    """Pooled rows: T1 right iff S5 and S9 right (plus noise); rotation tasks independent of T1."""
    rng = np.random.default_rng(seed)
    rows = views * responders
    ability = np.repeat(np.linspace(0.5, 0.85, responders), views)
    correct = {task: rng.random(rows) < ability for task in ("S3", "S4", "S5", "S6", "S7", "S8", "S9")}
    correct["T1"] = correct["S5"] & correct["S9"] & (rng.random(rows) < 0.9)
    correct["T2a"] = rng.random(rows) < 0.5
    correct["T2b"] = correct["T2a"] ^ (rng.random(rows) < 0.2)
    groups = np.tile(np.arange(views), responders)
    who = np.repeat(np.array([f"r{i}" for i in range(responders)], dtype=object), views)
    return correct, groups, who


def test_bundle_correlations_hierarchy_beats_rotation():
    correct, groups, who = _pooled_responders()
    agg = M.bundle_correlations(correct, groups)
    assert set(agg) == {*M.BUNDLES, M.ROTATION_PAIR}
    assert agg["visible_hidden"][0] > 0.5 > abs(agg["rotation"][0])
    assert agg[M.ROTATION_PAIR][0] > 0.4  # the two rotation tasks align
    assert agg["rotation"][2] == groups.size
    r, p, n = M.fixed_effect_correlation(M.bundle_score(correct, ("S5", "S9")), correct["T1"], groups)
    assert agg["visible_hidden"] == (r, p, n)
    per = M.responder_bundle_correlations(correct, groups, who)
    assert list(per) == ["r0", "r1", "r2", "r3"]
    for name in per:
        assert per[name]["visible_hidden"][0] > abs(per[name]["rotation"][0])
    assert M.bundle_correlations(correct, groups) == agg  # deterministic
    no_rotation = {k: v for k, v in correct.items() if k not in ("T2a", "T2b")}
    out = M.bundle_correlations(no_rotation, groups)
    assert np.isnan(out["rotation"][0]) and out["rotation"][2] == 0 and np.isnan(out[M.ROTATION_PAIR][0])


def test_bundle_score_ignores_unscored_flags():
    c = {"S5": np.array([1.0, 0.0, np.nan, np.nan]), "S9": np.array([1.0, 1.0, 0.0, np.nan])}
    np.testing.assert_array_equal(M.bundle_score(c, ("S5", "S9", "S8")), [1.0, 0.5, 0.0, np.nan])


# --- missing tasks, reuse, bad input ------------------------------------------------------------------------


def test_missing_tasks_give_nan_columns():
    sheet = {"T1": np.array([3, 4]), "S5": np.array([3, 4])}
    row = M.profile(sheet, sheet)
    assert row["T1"] == 1.0 and row["S5"] == 1.0
    for column in ("IRC", "S9", "VisSup", "HidSup", "SumMech", "rotation"):
        assert np.isnan(row[column]), column


def test_wilson_is_the_shared_one():
    assert M.wilson is shared_stats.wilson


def test_released_directions_are_labelled():
    assert M.RELEASED_DIRECTION["text"] == D1 and M.RELEASED_DIRECTION["mcq"] == D2
    assert M.RELEASED_DIRECTION["trained"] == D2


@pytest.mark.parametrize(
    ("call", "exc", "name"),
    [
        (lambda: M.correctness({"T1": np.array([1, 2])}, {"T1": np.array([1, 2, 3])}), ValueError, "pred"),
        (lambda: M.correctness({"T1": np.array([1.0])}, {"T1": np.array([1])}), TypeError, "pred"),
        (lambda: M.correctness({"T1": np.array([-2])}, {"T1": np.array([1])}), ValueError, "pred"),
        (lambda: M.correctness({"T1": np.array([1])}, {"T1": np.array([-1])}), ValueError, "truth"),
        (lambda: M.correctness({"T9": np.array([1])}, {"T1": np.array([1])}), ValueError, "pred"),
        (lambda: M.correctness({"T1": np.array([1]), "S5": np.array([1, 2])}, {}), ValueError, "pred"),
        (lambda: M.relation_integrity(np.ones(3), np.ones(4)), ValueError, "c_dep"),
        (lambda: M.relation_integrity(np.ones(3), np.ones(3), "both"), ValueError, "direction"),
        (lambda: M.relation_integrity(np.array([2, 0]), np.ones(2)), ValueError, "c_prereq"),
        (lambda: M.chain_integrity(CHAIN, "sideways"), ValueError, "direction"),
        (lambda: M.visible_support(SUPPORT, "up"), ValueError, "direction"),
        (lambda: M.profile({"T1": np.array([1])}, {"T1": np.array([1])}, "x"), ValueError, "direction"),
        (lambda: M.chain_integrity({"S6": np.ones(2), "S7": np.ones(3)}), ValueError, "correct"),
        (lambda: M.summation_mechanism({}, {}, unparsed="skip"), ValueError, "unparsed"),
        (lambda: M.summation_residual({"T1": np.array([1])}, {"T1": np.array([1])}), ValueError, "pred"),
        (lambda: M.chance_adjusted(0.5, 1), ValueError, "k"),
        (lambda: M.chance_adjusted(0.5, 2.5), TypeError, "k"),
        (lambda: M.profile_from_correct({}, k=1), ValueError, "k"),
        (lambda: M.collapse_share({"T1": np.array([1])}, tasks=("T1",)), ValueError, "tasks"),
        (lambda: M.mcnemar(np.ones(3, bool), np.ones(2, bool)), ValueError, "c_b"),
        (lambda: M.holm(np.array([0.2, 1.5])), ValueError, "pvalues"),
        (lambda: M.benjamini_hochberg(np.array([[0.2]])), ValueError, "pvalues"),
        (lambda: M.difficulty_bins(np.arange(3), np.ones(4, bool), (0, 1, 2)), ValueError, "correct"),
        (lambda: M.difficulty_bins(np.arange(3), np.ones(3, bool), (0, 2, 1)), ValueError, "edges"),
        (lambda: M.wrong_answer_preference(np.array(["a"], dtype=object), 1), ValueError, "k"),
        (lambda: M.wrong_answer_preference(np.array(["a"], dtype=object), 3, among="x"), ValueError, "among"),
        (lambda: M.fixed_effect_correlation(np.ones(3), np.ones(3), np.ones(4)), ValueError, "groups"),
        (lambda: M.fixed_effect_correlation(np.ones(3), np.ones(2), np.ones(3)), ValueError, "y"),
        (lambda: M.bundle_correlations({"T1": np.ones(3, bool)}, np.arange(2)), ValueError, "groups"),
        (
            lambda: M.bundle_correlations({"T1": np.ones(3, bool)}, np.arange(3), bundles={"b": ()}),
            ValueError,
            "bundles",
        ),
        (
            lambda: M.responder_bundle_correlations({"T1": np.ones(3, bool)}, np.arange(3), np.arange(2)),
            ValueError,
            "responders",
        ),
    ],
)
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name):
        call()
