"""The claims' criteria decide what they say, including the cases that must not pass."""

from neurips26.criteria import decide
from neurips26.sparse_control import verdicts as V


def _passes(criteria) -> bool:
    return all(c.passed for c in criteria)


def test_refusal_is_a_boundary_only_beside_a_task_that_passes():
    assert _passes(V.refusal_criteria(V.NEVER, 4))
    assert _passes(V.refusal_criteria(8, 2))
    assert not _passes(V.refusal_criteria(2, 2))
    assert not _passes(V.refusal_criteria(V.NEVER, V.NEVER))  # nothing passes: refusal is not set apart


def test_small_sets_needs_two_tasks_beating_both_baselines():
    good = {"omp": 0.9, "attribution": 0.8, "random": 0.5}
    weak = {"omp": 0.9, "attribution": 0.88, "random": 0.5}
    assert _passes(V.small_sets_criteria({"a": good, "b": good, "c": weak}))
    assert not _passes(V.small_sets_criteria({"a": good, "b": weak, "c": weak}))
    low = {**good, "omp": 0.7}
    assert not _passes(V.small_sets_criteria({"a": good, "b": low, "c": low}))


def test_scalar_criteria_have_their_thresholds():
    assert _passes(V.dose_criteria(0.95, 0.91)) and not _passes(V.dose_criteria(0.95, 0.85))
    assert _passes(V.feedback_criteria(0.9, 0.5)) and not _passes(V.feedback_criteria(0.6, 0.5))
    assert _passes(V.linearisation_criteria(0.95)) and not _passes(V.linearisation_criteria(0.8))
    kl = {"a": {"sparse": 0.1, "dense": 0.3}, "b": {"sparse": 0.2, "dense": 0.3}}
    assert not _passes(V.preservation_criteria(kl))
    assert _passes(V.preservation_criteria({**kl, "c": {"sparse": 0.0, "dense": 1.0}}))
    assert decide(V.feedback_criteria(0.9, 0.5)).verdict == "reproduced"
