"""Chapter 19's experiments at smoke: every method graded on the same tasks, deterministic and cached."""

import pytest

from neurips26.specbridge import experiments as X


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("specbridge-runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        yield folder


def test_a_method_is_graded_on_every_eval_task_and_cached(cache):
    a = X.run_method("nlfp", "smoke")
    n_pool, n_eval = X.task_count("smoke")
    assert len(a.generations) == len(a.evaluations) == len(a.smt_proof) == n_eval == 8
    assert n_pool == 8
    b = X.run_method("nlfp", "smoke")
    assert [e.computable for e in a.evaluations] == [e.computable for e in b.evaluations]
    r = X.rates({"nlfp": a})["nlfp"]
    assert set(r) == {"alignment", "computable", "proof", "smt"}
    assert all(0.0 <= v <= 1.0 for v in r.values())
    # a spec that passes computable validation is proved too (lean-auto decides executable goals)
    for e in a.evaluations:
        assert not e.computable or e.proof


def test_summaries(cache):
    res = {m: X.run_method(m, "smoke") for m in ("direct", "nlfp")}
    assert 0 <= X.aligned_failing(res["direct"]) <= 8
    stats = X.unbounded_stats(res)
    assert stats.computable == 0 and stats.proved <= stats.unbounded
    per = X.pattern_rates(res, [t for t in X._split("smoke").eval])
    assert per and all(set(v) == {"direct", "nlfp"} for v in per.values())


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="method"):
        X.run_method("oracle", "smoke")
    with pytest.raises(TypeError, match="backend"):
        X.run_method("nlfp", "smoke", backend="gpt")
    with pytest.raises(ValueError, match="layer"):
        X.MethodResult("nlfp", (), (), (), 0.0).rate("speed")
