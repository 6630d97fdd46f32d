"""Reconstruction-guided mining: verbaliser and reader, round trip, normalisation, abstraction, mining,
retrieval."""

from __future__ import annotations

from dataclasses import replace

import pytest

from neurips26.specbridge import mining as M
from neurips26.specbridge.benchmark import benchmark
from neurips26.specbridge.minispec.ast import RESULT, conjuncts
from neurips26.specbridge.minispec.parser import parse_expr, parse_signature, parse_spec
from neurips26.specbridge.patterns import SEED_LIBRARY, Library, fill_clause, instantiate, read_slots


@pytest.fixture(scope="module")
def pool():
    return benchmark("default").pool


@pytest.fixture(scope="module")
def by_id(pool):
    return {t.id: t for t in pool}


@pytest.fixture(scope="module")
def mined(pool):
    return M.mine(pool), M.mine(pool, verify=False)


# ----------------------------------------------------------------------------------------------------------
# Verbaliser and reader
# ----------------------------------------------------------------------------------------------------------


def test_reconstruct_reads_and_parses(pool):
    for task in pool[:3] + pool[12:14]:
        rec = M.reconstruct(task)
        spec = parse_spec(task.spec)
        assert len(rec.pairs) == len(conjuncts(spec.pre)) + len(conjuncts(spec.post))
        assert [c.id for c in rec.plan.clauses] == [cid for cid, _ in rec.pairs]
        for clause in rec.plan.clauses:
            assert "__slot" not in clause.text and "`" not in clause.text
            assert any(w in clause.text for w in (" is ", " holds", "for every", "for some", " if "))
            parse_expr(clause.formal_hint)  # hints parse


def test_verbalise_example_and_exact_reading():
    sig = parse_signature("def f (a : Array Int) : Int")
    e = parse_expr("∀ i, i < a.size → a[i]! ≤ result")
    assert M.verbalise(e) == "for every index i below a.size, a[i]! is at most result"
    assert parse_expr(M.reformalise(M.verbalise(e), sig)) == e
    count = parse_expr("result = (a.toList.filter (fun x => x < 0)).length")
    assert M.verbalise(count) == "result is the number of elements x of a.toList with x < 0"
    assert parse_expr(M.reformalise(M.verbalise(count), sig)) == count


def test_verbaliser_is_lossy_where_documented():
    sig = parse_signature("def f (n : Nat) (k : Nat) : Int")
    up_to = parse_expr("∃ j, j < n + 1 ∧ j * j = n")
    assert "up to n" in M.verbalise(up_to)
    assert parse_expr(M.reformalise(M.verbalise(up_to), sig)) == parse_expr("∃ j, j < n ∧ j * j = n")
    cast = parse_expr("result = ↑(n - k)")  # Nat subtraction, then cast
    back = parse_expr(M.reformalise(M.verbalise(cast), sig))
    assert back == parse_expr("result = n - k")  # elaborated as the Int subtraction ↑n - ↑k
    ite = parse_expr("result = if n < k then 1 else 2")
    assert "2" not in M.verbalise(ite)
    assert parse_expr(M.reformalise(M.verbalise(ite), sig)) == parse_expr("n < k → result = 1")
    # an Int index gets its .toNat back
    sig2 = parse_signature("def f (a : Array Int) : Int")
    idx = parse_expr("a[result.toNat]! < 0")
    assert parse_expr(M.reformalise(M.verbalise(idx), sig2)) == idx


# ----------------------------------------------------------------------------------------------------------
# Round trip
# ----------------------------------------------------------------------------------------------------------


def test_round_trip_accepts_exact_and_rejects_lossy(by_id):
    for tid in ("p19-003-max", "hw-find-max", "hw-first-negative", "hw-is-perfect-square"):
        rec = M.reconstruct(by_id[tid])
        assert M.round_trip(by_id[tid], rec)
        assert all(ok for _, ok in M.clause_round_trips(by_id[tid], rec))
    # the verbaliser's "up to" loses the inclusive bound of a natural task
    pronic = by_id["p19-000-arith"]
    assert not M.round_trip(pronic, M.reconstruct(pronic))
    # a strictness slip written on purpose into an otherwise exact plan
    task = by_id["p19-003-max"]
    rec = M.reconstruct(task)
    g2 = rec.plan.clause("G2")
    wrong = replace(g2, formal_hint="∀ i, i < a.size → a[i]! < result")
    plan = replace(rec.plan, guarantees=tuple(wrong if c.id == "G2" else c for c in rec.plan.guarantees))
    lossy = M.Reconstruction(plan, rec.pairs)
    assert not M.round_trip(task, lossy)
    assert dict(M.clause_round_trips(task, lossy)) == {"A1": True, "G1": True, "G2": False}


# ----------------------------------------------------------------------------------------------------------
# Normalisation and abstraction
# ----------------------------------------------------------------------------------------------------------


def test_normalise_idempotent_and_alpha_invariant(pool):
    for task in pool:
        spec = parse_spec(task.spec)
        for c in conjuncts(spec.pre) + conjuncts(spec.post):
            n = M.normalise(c)
            assert M.normalise(n) == n
    a = parse_expr("(∀ q, q < a.size → a[q]! > 0) ∧ (∃ w, w < a.size ∧ a[w]! = result)")
    b = parse_expr("(∃ i, i < a.size ∧ a[i]! = result) ∧ (∀ k, k < a.size → 0 < a[k]!)")
    assert M.normalise(a) == M.normalise(b)
    # renaming never captures a parameter called like a canonical binder
    c = parse_expr("∀ j, j < i → a[j]! < i")
    n = M.normalise(c)
    assert n.var == "j" and n.bound == parse_expr("i")
    assert M.normalise(parse_expr("a > b")) != M.normalise(parse_expr("a < b"))


def test_abstract_slots_and_key():
    sig = parse_signature("def f (nums : Array Int) : Bool")
    t = M.abstract(parse_expr("result = true ↔ ∀ i, i < nums.size → nums[i]! > 4"), sig)
    assert t.text == "result = true ↔ ⟨cond⟩"
    inner = M.abstract(parse_expr("∀ i, i < nums.size → nums[i]! > 4"), sig)
    assert inner.text == "∀ i, i < ⟨a⟩.size → ⟨p @ ⟨a⟩[i]!⟩"
    assert inner.bindings == {"a": "nums", "p": "4 < x"}
    seed = SEED_LIBRARY.get("all_satisfy")
    assert M.structural_key(inner) == M.structural_key(M._seed_expr(seed))
    sig2 = parse_signature("def g (xs : List Int) (k : Nat) : Int")
    t2 = M.abstract(parse_expr("result = (xs.drop k).sum + 3"), sig2)
    assert {s.kind for s in t2.slots} == {"param", "const"} and RESULT in t2.text
    with pytest.raises(ValueError, match="signature"):
        M.abstract(parse_expr("result = ys.sum"), sig2)


# ----------------------------------------------------------------------------------------------------------
# Mining
# ----------------------------------------------------------------------------------------------------------


def test_mined_library_parses_and_instantiates_back(mined):
    result, _ = mined
    assert isinstance(result.library, Library) and len(result.library) == len(result.patterns)
    for mp in result.patterns:
        p = mp.pattern
        assert mp.support >= 2 and 0.0 <= mp.precision <= 1.0
        for src in mp.sources:
            assert src.round_trip is True
            if src.reproduced:
                values = dict(src.values)
                clause = fill_clause(p, values)
                assert read_slots(p, clause) == values
                instantiate(p, values)
        assert mp.precision == sum(s.reproduced for s in mp.sources) / len(mp.sources)
    names = set(result.library.names)
    assert len(names & set(SEED_LIBRARY.names)) >= 6
    assert "max_characterisation_part2" in names
    assert [t for t, _, _ in result.rejected] == ["p19-000-arith", "p19-026-arith"]


def test_verify_false_gives_more_and_less_precise_patterns(mined):
    verified, unverified = mined
    assert len(unverified.patterns) > len(verified.patterns)
    assert unverified.mean_precision < verified.mean_precision
    assert unverified.rejected == ()
    assert any(s.round_trip is None for mp in unverified.patterns for s in mp.sources)


def test_mining_is_deterministic(pool, mined):
    again = M.mine(pool)
    assert again.library.names == mined[0].library.names
    assert [p.pattern.cues for p in again.patterns] == [p.pattern.cues for p in mined[0].patterns]


# ----------------------------------------------------------------------------------------------------------
# Retrieval
# ----------------------------------------------------------------------------------------------------------


def test_retrieval(mined):
    lib = mined[0].library
    sig = parse_signature("def f (a : Array Int) : Int")
    text = "Return the largest element of the array `a`. The values come from a sensor."
    hits = M.retrieve(lib, text, sig, k=5)
    assert hits == M.retrieve(lib, text, sig, k=5)
    assert hits[0][0].name.startswith("max_characterisation")
    assert len(hits) == 5 and all(p.applies(sig) for p, _ in hits)
    assert "bool_iff" not in {p.name for p, _ in hits}  # needs a Bool result
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True) and all(round(s, 9) == s for s in scores)
    rnd = M.random_hints(lib, sig, 3, seed=0)
    assert rnd == M.random_hints(lib, sig, 3, seed=0) and len({p.name for p, _ in rnd}) == 3
    assert all(p.applies(sig) for p, _ in rnd)


def test_bad_input_is_named(pool, mined):
    lib = mined[0].library
    sig = parse_signature("def f (a : Array Int) : Int")
    with pytest.raises(TypeError, match="task"):
        M.reconstruct("hw-find-max")
    with pytest.raises(TypeError, match="reconstruction"):
        M.round_trip(pool[0], None)
    with pytest.raises(TypeError, match="expr"):
        M.verbalise("a.size > 0")
    with pytest.raises(ValueError, match="text"):
        M.reformalise("the moon is made of cheese and", sig)
    with pytest.raises(ValueError, match="signature"):
        M.reformalise("a.size is greater than 0", "not a signature")
    with pytest.raises(TypeError, match="conjunct"):
        M.abstract("a.size > 0", sig)
    with pytest.raises(TypeError, match="pool"):
        M.mine("pool")
    with pytest.raises(ValueError, match="min_support"):
        M.mine(pool[:2], min_support=0)
    with pytest.raises(ValueError, match="description"):
        M.retrieve(lib, "  ", sig)
    with pytest.raises(ValueError, match="k"):
        M.retrieve(lib, "largest", sig, k=0)
    with pytest.raises(TypeError, match="library"):
        M.random_hints([], sig, 2, 0)
