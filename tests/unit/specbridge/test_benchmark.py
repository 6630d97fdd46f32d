"""MiniVerina: determinism, data consistent with the reference code, split sizes, the combination rule."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from neurips26.specbridge.benchmark import (
    FAMILIES,
    HELD_OUT_FAMILIES,
    PATTERNS,
    Split,
    Task,
    TestCase,
    benchmark,
    build_task,
    conforms,
    generate_tasks,
    handwritten_tasks,
    mutate_output,
    novel_combinations,
    parse_signature,
    render_spec,
    spec_shape,
)
from neurips26.specbridge.minispec.ast import INT, Ty


@pytest.fixture(scope="module")
def default() -> Split:
    return benchmark("default")


@pytest.fixture(scope="module")
def smoke() -> Split:
    return benchmark("smoke")


@pytest.fixture(scope="module")
def hand() -> tuple[Task, ...]:
    return handwritten_tasks()


@pytest.fixture(scope="module")
def generated() -> tuple[Task, ...]:
    return generate_tasks(3 * len(FAMILIES), seed=7)


@pytest.fixture(scope="module")
def every(default, generated) -> tuple[Task, ...]:
    return default.pool + default.eval + generated


# ------------------------------------------------------------------------------------------------ determinism


def test_benchmark_is_deterministic(default, smoke):
    assert benchmark("default") == default
    assert benchmark("smoke") == smoke
    assert benchmark("paper") == default


def test_generator_is_deterministic_and_prefix_stable():
    a, b = generate_tasks(12, seed=5), generate_tasks(12, seed=5)
    assert a == b
    assert generate_tasks(5, seed=5) == a[:5]
    assert generate_tasks(12, seed=6) != a
    assert generate_tasks(0, seed=5) == ()


# ---------------------------------------------------------------------------------------------- test data


def test_expected_outputs_come_from_the_reference(every):
    for t in every:
        for case in t.tests:
            assert case.expected == t.reference(**case.inputs), (t.id, case.inputs)


def test_unexpected_outputs_differ_and_are_well_typed(every):
    for t in every:
        for case in t.tests:
            want = 1 if t.ret.name == "Bool" else (2, 3)
            n = len(case.unexpected)
            assert n == want if isinstance(want, int) else n in want, (t.id, case)
            assert len(set(map(repr, case.unexpected))) == n
            for u in case.unexpected:
                assert u != t.reference(**case.inputs)
                assert conforms(t.ret, u)


def test_valid_inputs_pass_and_reject_inputs_fail_the_python_precondition(every):
    for t in every:
        for case in t.tests:
            assert t.reference_pre(**case.inputs) is True, (t.id, case.inputs)
        for r in t.reject:
            assert not t.reference_pre(**r), (t.id, r)
        assert (len(t.reject) == 0) == (t.precondition == "True"), t.id


def test_generated_tasks_have_the_promised_amounts(generated):
    assert {t.id.rsplit("-", 1)[1] for t in generated} == set(FAMILIES)
    for t in generated:
        assert t.source == "generated"
        assert 6 <= len(t.tests) <= 10, t.id
        assert len({repr(sorted(c.inputs.items())) for c in t.tests}) == len(t.tests), t.id
        if t.precondition == "True":
            assert t.reject == ()
        elif re.fullmatch(r"\w+\.size > 0", t.precondition):
            assert len(t.reject) == 1  # the empty array is the only violating input
        else:
            assert 2 <= len(t.reject) <= 4, t.id
        assert len(re.findall(r"[.;]( |$)", t.description)) >= 2  # several sentences, one a distractor


def test_boolean_tasks_see_both_answers(default):
    both = [t for t in default.pool + default.eval if t.ret.name == "Bool"]
    mixed = [t for t in both if len({c.expected for c in t.tests}) == 2]
    assert len(mixed) >= 0.8 * len(both)


def test_hand_checked_values(hand):
    by_id = {t.id: t for t in hand}
    checks = [
        ("hw-count-diff", {"a": [1, 2, 2, 2], "x": 1, "y": 2}, -2),
        ("hw-sign-balance", {"a": [-3, 4, -5, 0, -1]}, -2),
        ("hw-arg-min", {"a": [5, -2, 7, -2]}, 1),
        ("hw-first-negative", {"a": [4, 0, -2, -5]}, 2),
        ("hw-distances", {"a": [-5, 7, 0], "t": -1}, [4, 8, 1]),
        ("hw-clamp-nonneg", {"a": [0, 5, -2]}, [0, 5, 0]),
        ("hw-divides", {"d": 0, "n": 0}, True),
        ("hw-divides", {"d": 0, "n": 5}, False),
        ("hw-divides", {"d": 4, "n": -6}, False),
        ("hw-is-even", {"n": -6}, True),
        ("hw-sum-divisible", {"a": [-5], "k": 3}, False),
        ("hw-spread", {"a": [0, 9, -9, 4]}, 18),
        ("hw-balanced-at", {"l": [3, 1, 2], "k": 1}, True),
        ("hw-is-anagram", {"s": "Ab", "t": "ab"}, False),
        ("hw-count-vowels", {"s": "queue"}, 4),
        ("hw-max-of-prefix", {"a": [1, 9, 2], "k": 1}, 1),
        ("hw-is-prime", {"n": 21}, False),
    ]
    for tid, inputs, value in checks:
        assert by_id[tid].reference(**inputs) == value, tid
        assert any(c.inputs == inputs and c.expected == value for c in by_id[tid].tests), tid


# --------------------------------------------------------------------------------------------- hand-written


def test_handwritten_tasks_cover_the_required_kinds(hand):
    assert 20 <= len(hand) <= 28
    assert all(t.source == "handwritten" for t in hand)
    assert sum(not t.executable for t in hand) >= 4
    assert sum(t.precondition != "True" and len(t.reject) >= 2 for t in hand) >= 4
    traps = {"hw-count-diff", "hw-sign-balance", "hw-distances", "hw-spread", "hw-clamp-nonneg"}
    assert traps <= {t.id for t in hand}
    for t in hand:
        assert len(re.findall(r"\. ", t.description)) >= 1, t.id  # more than one sentence
        assert 6 <= len(t.tests) <= 10, t.id


def test_patterns_are_named_and_all_used(every, hand):
    used = Counter(p for t in every for p in t.patterns)
    assert set(used) == set(PATTERNS)
    for t in every:
        assert 1 <= len(t.patterns) <= 3 and len(set(t.patterns)) == len(t.patterns)
        assert t.executable == ("unbounded_int_exists" not in t.patterns), t.id


def test_specs_use_the_verina_layout(every):
    for t in every:
        name, params, ret = parse_signature(t.signature)
        args = " ".join(p.name for p in params)
        assert f"def {name}_precond " in t.spec
        assert f"(result : {ret}) (h_precond : {name}_precond {args}) : Prop :=" in t.spec
        assert t.postcondition and t.precondition
        assert "result" in t.postcondition and "result" not in t.precondition


# ---------------------------------------------------------------------------------------------------- split


def test_split_sizes_and_disjoint_unique_ids(default, smoke):
    assert (len(default.pool), len(default.eval)) == (40, 40)
    assert (len(smoke.pool), len(smoke.eval)) == (8, 8)
    for split in (default, smoke):
        ids = [t.id for t in split.pool + split.eval]
        assert len(ids) == len(set(ids))
    assert sum(t.source == "handwritten" for t in default.pool + default.eval) == len(handwritten_tasks())


def test_no_task_is_a_renamed_copy_of_another(default, smoke):
    for split in (default, smoke):
        shapes = [spec_shape(t) for t in split.pool + split.eval]
        assert len(shapes) == len(set(shapes))
    t = default.pool[0]
    renamed = t.spec.replace(f"{t.name}_", "g_")
    assert spec_shape(t) != renamed and spec_shape(t).count("def f_") == 2


def test_handwritten_split_rule_is_alternation(default, hand):
    assert [t.id for t in default.pool if t.source == "handwritten"] == [t.id for t in hand[0::2]]
    assert [t.id for t in default.eval if t.source == "handwritten"] == [t.id for t in hand[1::2]]


def test_eval_has_unseen_pattern_combinations(default, smoke):
    for split in (default, smoke):
        novel = novel_combinations(split.pool, split.eval)
        assert 3 * len(novel) >= len(split.eval)
        pool_combos = [t.combination for t in split.pool]
        for t in split.eval:
            if t.id in novel:
                assert not any(t.combination <= c for c in pool_combos)
    held = {f for f in HELD_OUT_FAMILIES}
    assert not any(t.id.rsplit("-", 1)[1] in held for t in default.pool)


def test_novel_combinations_is_subset_based(default):
    pool = default.pool[:1]
    assert novel_combinations(pool, pool) == ()
    other = [t for t in default.eval if not t.combination <= pool[0].combination][0]
    assert novel_combinations(pool, (other,)) == (other.id,)


# ------------------------------------------------------------------------------------------------ mutations


def test_mutations_of_each_kind():
    import numpy as np

    rng = np.random.default_rng(0)
    assert mutate_output(Ty("Bool"), True, {}, rng) == (False,)
    for _ in range(20):
        out = mutate_output(Ty("Nat"), 0, {"a": [0, -1]}, rng)
        assert 2 <= len(out) <= 3 and all(isinstance(v, int) and v > 0 for v in out)
        arr = mutate_output(Ty("Array", "Int"), [1, 2, 3], {}, rng)
        assert all(isinstance(v, list) and v != [1, 2, 3] for v in arr)
    with pytest.raises(ValueError, match="ret"):
        mutate_output(Ty("String"), "x", {}, rng)


# ---------------------------------------------------------------------------------------------- bad input


def _task(**over):
    kw = dict(
        id="t",
        description="Return x. Nothing else.",
        signature="def f (x : Int) : Int",
        pre="True",
        post="result = x",
        patterns=("sum_equals",),
        reference=lambda x: x,
        reference_pre=lambda x: True,
        inputs=[{"x": 1}],
    )
    kw.update(over)
    return build_task(**kw)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="scale"):
        benchmark("huge")
    with pytest.raises(TypeError, match="scale"):
        benchmark(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n must"):
        generate_tasks(-1, seed=0)
    with pytest.raises(TypeError, match="n must"):
        generate_tasks(2.5, seed=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):
        generate_tasks(2, seed=-1)
    with pytest.raises(ValueError, match="families"):
        generate_tasks(2, seed=0, families=("nope",))
    with pytest.raises(TypeError, match="families"):
        generate_tasks(2, seed=0, families=())
    with pytest.raises(ValueError, match="signature"):
        parse_signature("f (x : Int) : Int")
    with pytest.raises(ValueError, match="signature"):
        parse_signature("def f (x : Real) : Int")
    with pytest.raises(TypeError, match="signature"):
        parse_signature(None)  # type: ignore[arg-type]


def test_bad_task_data_is_named():
    assert _task().tests[0].expected == 1
    with pytest.raises(TypeError, match="parameter x"):
        _task(inputs=[{"x": "1"}])
    with pytest.raises(TypeError, match="parameter n"):
        _task(signature="def f (n : Nat) : Int", reference=lambda n: n, inputs=[{"n": -1}])
    with pytest.raises(ValueError, match="inputs"):
        _task(inputs=[{"y": 1}])
    with pytest.raises(ValueError, match="reject"):
        _task(pre="x > 0")
    with pytest.raises(ValueError, match="patterns"):
        _task(patterns=("loops",))
    with pytest.raises(ValueError, match="source"):
        _task(source="scraped")
    with pytest.raises(TypeError, match="expected"):
        _task(reference=lambda x: True)
    with pytest.raises(ValueError, match="unexpected"):
        Task(
            id="t",
            description="d",
            signature="def f (x : Int) : Int",
            spec=render_spec("def f (x : Int) : Int", "True", "result = x"),
            patterns=("sum_equals",),
            tests=(TestCase({"x": 1}, 1, (1,)),),
            reject=(),
            reference=lambda x: x,
            reference_pre=lambda x: True,
        )


def test_records_hash_and_compare_without_callables():
    a = _task()
    b = _task(reference=lambda x: x + 0)
    assert a == b and hash(a) == hash(b)
    split = benchmark("smoke")
    assert len({*split.pool, *split.eval}) == 16  # tasks with reject inputs hash too
    assert "reference" not in repr(a)
    assert conforms(INT, -3) and not conforms(INT, True)


# ----------------------------------------------------------------------- reference specs, parsed and executed

_EXEC_ENTRY_POINTS = (("precondition", "postcondition"),)


def test_every_reference_spec_parses_and_its_obligations_hold(every):
    parser = pytest.importorskip("neurips26.specbridge.minispec.parser")
    specs = {t.id: parser.parse_spec(t.spec) for t in every}
    for t in every:
        sig = specs[t.id].signature
        assert sig.name == t.name and sig.params == t.params and sig.ret == t.ret
    execute = pytest.importorskip("neurips26.specbridge.execute")
    names = next((n for n in _EXEC_ENTRY_POINTS if all(hasattr(execute, m) for m in n)), None)
    if names is None:
        pytest.skip("neurips26.specbridge.execute has no pre/post evaluation entry point known here")
    pre, post = (getattr(execute, m) for m in names)
    for t in every:
        spec = specs[t.id]
        if not t.executable:
            with pytest.raises(execute.NotExecutable):
                post(spec, t.tests[0].inputs, t.tests[0].expected)
            continue
        for case in t.tests:
            assert pre(spec, case.inputs) is True, (t.id, case.inputs)
            assert post(spec, case.inputs, case.expected) is True, (t.id, case.inputs)
            for u in case.unexpected:
                assert post(spec, case.inputs, u) is False, (t.id, case.inputs, u)
        for r in t.reject:
            assert pre(spec, r) is False, (t.id, r)
