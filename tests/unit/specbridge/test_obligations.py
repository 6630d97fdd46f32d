"""VERINA's obligations: kinds, order, counts, freezing, summaries and the signature check."""

from __future__ import annotations

from dataclasses import replace

import pytest

from neurips26.specbridge.benchmark import benchmark, generate_tasks
from neurips26.specbridge.minispec.ast import INT, NAT, Param, Signature, Ty
from neurips26.specbridge.minispec.parser import parse_spec
from neurips26.specbridge.obligations import (
    KINDS,
    Obligation,
    by_kind,
    check_signature,
    freeze,
    obligations,
    summarise,
    thaw,
)


@pytest.fixture(scope="module")
def tasks():
    split = benchmark("smoke")
    return split.pool + split.eval + generate_tasks(1, 20, families=("minprefix",))


def _task(tasks, task_id):
    return next(t for t in tasks if t.id == task_id)


def test_counts_and_order_follow_the_test_data(tasks):
    for t in tasks:
        obs = obligations(t)
        n_unexpected = sum(len(c.unexpected) for c in t.tests)
        assert len(obs) == 2 * len(t.tests) + len(t.reject) + n_unexpected
        kinds = [ob.kind for ob in obs]
        assert kinds == sorted(kinds, key=KINDS.index)  # grouped in the order of KINDS
        assert sum(k == "pre-complete" for k in kinds) == len(t.reject)
        assert len(set(obs)) == len(obs)  # hashable and pairwise distinct


def test_each_kind_carries_the_right_values(tasks):
    t = _task(tasks, "hw-find-max")
    names = [p.name for p in t.params]
    for ob in obligations(t):
        assert [n for n, _ in ob.inputs] == names
        if ob.kind == "pre-sound":
            assert ob.result is None and not ob.negate
            assert ob.input_dict == t.tests[ob.test_index].inputs
        elif ob.kind == "pre-complete":
            assert ob.result is None and ob.negate
            assert ob.input_dict == t.reject[ob.test_index]
        elif ob.kind == "post-complete":
            assert not ob.negate and ob.result_value == t.tests[ob.test_index].expected
        else:
            assert ob.negate and ob.result_value in t.tests[ob.test_index].unexpected
        assert ob.which == ob.kind.split("-")[0]


def test_lists_are_frozen_and_thawed_back(tasks):
    t = _task(tasks, "p19-002-sort")
    ob = next(o for o in obligations(t) if o.kind == "post-complete")
    assert isinstance(ob.inputs[0][1], tuple) and isinstance(ob.result, tuple)
    assert isinstance(ob.result_value, list) and ob.result_value == t.tests[ob.test_index].expected
    hash(ob)
    a = Obligation("post-sound", 0, {"a": [1, [2]]}, [3], negate=True)
    b = Obligation("post-sound", 0, (("a", (1, (2,))),), (3,), negate=True)
    assert a == b and hash(a) == hash(b)
    assert freeze([1, [2, 3]]) == (1, (2, 3)) and thaw((1, (2, 3))) == [1, [2, 3]]


def test_summarise_never_counts_unknown_as_pass():
    assert summarise([]) == "pass"
    assert summarise(["pass", "pass"]) == "pass"
    assert summarise(["pass", "unknown"]) == "unknown"
    assert summarise(["unknown", "fail", "pass"]) == "fail"
    assert summarise(iter(["pass"])) == "pass"
    with pytest.raises(ValueError, match=r"outcomes\[1\]"):
        summarise(["pass", "ok"])
    with pytest.raises(TypeError, match="outcomes"):
        summarise("pass")


def test_by_kind_gives_verinas_four_verdicts(tasks):
    t = _task(tasks, "hw-find-max")
    obs = obligations(t)
    outcomes = ["pass"] * len(obs)
    outcomes[[ob.kind for ob in obs].index("post-sound")] = "unknown"
    verdicts = by_kind(obs, outcomes)
    assert verdicts == {"pre-sound": "pass", "pre-complete": "pass", "post-complete": "pass",
                        "post-sound": "unknown"}  # fmt: skip
    with pytest.raises(ValueError, match="outcomes"):
        by_kind(obs, outcomes[:-1])


def test_bad_obligations_are_named():
    with pytest.raises(ValueError, match="kind"):
        Obligation("post-correct", 0, {"a": 1})
    with pytest.raises(ValueError, match="test_index"):
        Obligation("pre-sound", -1, {"a": 1})
    with pytest.raises(ValueError, match="negate"):
        Obligation("post-sound", 0, {"a": 1}, 2)
    with pytest.raises(ValueError, match="result"):
        Obligation("pre-sound", 0, {"a": 1}, 2)
    with pytest.raises(ValueError, match="result"):
        Obligation("post-complete", 0, {"a": 1})
    with pytest.raises(TypeError, match="inputs"):
        Obligation("pre-sound", 0, 5)
    with pytest.raises(TypeError, match="task"):
        obligations("hw-find-max")


def test_check_signature_accepts_the_reference_and_names_mismatches(tasks):
    t = _task(tasks, "g20-000-minprefix")
    spec = parse_spec(t.spec)
    check_signature(spec, t)
    sig = spec.signature
    wrong = [
        Signature("minPrefix", sig.params, sig.ret),
        Signature(sig.name, (sig.params[0], Param("n", NAT)), sig.ret),
        Signature(sig.name, (sig.params[0], Param("k", INT)), sig.ret),
        Signature(sig.name, sig.params[:1], sig.ret),
        Signature(sig.name, sig.params, Ty("Nat")),
    ]
    for s in wrong:
        with pytest.raises(ValueError, match="signature"):
            check_signature(replace(spec, signature=s), t)
    with pytest.raises(TypeError, match="spec"):
        check_signature(t.spec, t)
    with pytest.raises(TypeError, match="task"):
        check_signature(spec, t.id)
