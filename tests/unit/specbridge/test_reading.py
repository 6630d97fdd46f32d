"""Tests of the shared prose reading of the offline policies."""

from __future__ import annotations

import dataclasses

import pytest

from neurips26.specbridge.patterns import SEED_LIBRARY, match_cues
from neurips26.specbridge.reading import (
    constants,
    content_words,
    cue_patterns,
    cue_similarity,
    edge_case_phrases,
    element_map,
    element_predicate,
    list_view,
    roles,
    sentences,
    shared_cue_words,
    witness_predicate,
)

SIG = "def f (a : Array Int) (k : Int) : Int"


def test_sentences_keep_inner_punctuation():
    text = (
        "Zero counts (it is obtained from k = 0), and a witness k never exceeds n. "
        "So [1, 1, 2] is sorted. 0 too."
    )
    assert sentences(text) == (
        "Zero counts (it is obtained from k = 0), and a witness k never exceeds n.",
        "So [1, 1, 2] is sorted.",
        "0 too.",
    )


@pytest.mark.parametrize(
    ("phrase", "want"),
    [
        ("the entries that are negative", "x < 0"),
        ("every value is positive", "x > 0"),
        ("an element that is even", "x % 2 = 0"),
        ("an element that is odd", "x % 2 = 1"),
        ("an element that is not divisible by 2", "x % 2 = 1"),
        ("one more than an even number", "x % 2 = 1"),
        ("greater than 3", "x > 3"),
        ("strictly greater than zero", "x > 0"),
        ("no larger than -2", "x ≤ -2"),
        ("at most 0", "x ≤ 0"),
        ("greater than `k`", "x > k"),
        ("equal to k", "x = k"),
        ("a multiple of three", "x % 3 = 0"),
        ("different from zero", "x ≠ 0"),
    ],
)
def test_element_predicate(phrase, want):
    assert element_predicate(phrase, SIG) == want


def test_element_predicate_needs_digits_and_parameters():
    assert element_predicate("at least one element", SIG) is None
    assert element_predicate("greater than m", SIG) is None  # m is no parameter
    assert element_predicate("nothing to read here", SIG) is None


def test_witness_and_map():
    assert witness_predicate("is a perfect square", "def f (n : Nat) : Bool") == "x * x = n"
    assert witness_predicate("equals twice some integer", "def f (n : Int) : Bool") == "n = 2 * x"
    assert witness_predicate("whether `d` divides `n`", "def f (d : Int) (n : Int) : Bool") == "n = d * x"
    assert witness_predicate("is a perfect square", "def f (a : Array Int) : Bool") is None
    assert element_map("doubles every element") == "2 * x"
    assert element_map("adds 3 to every element") == "x + 3"
    assert element_map("keeps them") is None


def test_roles_and_views():
    r = roles("def f (l : List Int) (a : Array Int) (k : Nat) (t : Int) : Int")
    assert r.containers == ("l", "a") and r.main == "l"
    assert r.numbers == ("k", "t") and r.bound == "k" and r.result == "Int"
    sig = "def f (l : List Int) (a : Array Int) (s : String) : Int"
    assert [list_view(sig, n) for n in ("l", "a", "s")] == ["l", "a.toList", "s.toList"]


def test_edge_case_phrases():
    text = (
        "Return the index of the first even element. If no element qualifies, return -1. "
        "When several elements qualify, the smallest index is the answer. An empty array is not allowed."
    )
    kinds = {(e.kind, e.outcome) for e in edge_case_phrases(text)}
    assert ("absent", "-1") in kinds
    assert ("ties", "first") in kinds
    assert ("empty", "invalid") in kinds


def test_cue_patterns_sorted_and_filtered():
    hits = cue_patterns("Return the largest element of the array", SEED_LIBRARY)
    assert hits[0][0].name == "max_characterisation" and hits[0][1] >= 1
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    assert cue_patterns("Return the largest element", SEED_LIBRARY, "def f (n : Nat) : Nat") == ()


def test_content_words_drop_generic_and_predicate_words():
    words = content_words(
        "Write a function that returns the index of the first entries greater than 3 in `nums`."
    )
    assert words == ("index", "first", "entrie", "num")
    assert content_words("Every element is at most 0; some are negative, none is odd.") == (
        "every",
        "element",
        "some",
        "none",
    )


def test_cue_similarity_needs_no_verbatim_phrase():
    # a mined cue is a whole source sentence: it never recurs verbatim, but its words do
    mined = dataclasses.replace(
        SEED_LIBRARY.get("first_index_or_sentinel"),
        name="first_mined",
        cues=("index", "find the index of the first negative number in the array `a`"),
    )
    other = dataclasses.replace(
        SEED_LIBRARY.get("sum_equals"), name="sum_mined", cues=("return the sum of the list `l`",)
    )
    frag = "Return the index of the first element of `values` that is odd."
    assert match_cues(mined, frag) == 1.0  # only the single word "index" occurs as a phrase
    sims = cue_similarity(frag, [mined, other])
    assert sims[0] > 0.5 and sims[1] == 0.0
    assert shared_cue_words(frag, mined) == 2 and shared_cue_words(frag, other) == 0
    assert cue_similarity(frag, []) == ()
    assert cue_similarity("nothing in common here", [mined]) == (0.0,)


def test_constants_for_template_slots():
    desc = "Return the index of the first entry above 3. If none, return -1."
    first = sentences(desc)[0]
    assert constants(first, desc, SIG) == ("-1", "0")  # 3 is the predicate's number
    assert constants("Keep the first 5 entries.", "Keep the first 5 entries.", SIG) == ("5", "0")
    assert constants("no digits here", "no digits here", SIG) == ("0",)


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="fragment"):
        cue_similarity(None, [])
    with pytest.raises(TypeError, match="patterns"):
        cue_similarity("largest", ["max"])
    with pytest.raises(TypeError, match="text"):
        content_words(5)
    with pytest.raises(TypeError, match="pattern"):
        shared_cue_words("largest", "max")
    with pytest.raises(TypeError, match="description"):
        constants("a", None, SIG)
    with pytest.raises(ValueError, match="signature"):
        constants("a", "a", "no signature")
    with pytest.raises(TypeError, match="description"):
        sentences(3)
    with pytest.raises(TypeError, match="phrase"):
        element_predicate(None, SIG)
    with pytest.raises(ValueError, match="signature"):
        element_predicate("negative", "not a signature")
    with pytest.raises(TypeError, match="library"):
        cue_patterns("largest", ["max"])
    with pytest.raises(TypeError, match="sentence"):
        cue_patterns(1, SEED_LIBRARY)
