"""The scoreboard's compact layout: a bar per chapter, one row per claim, measurements folded beneath."""

import re

from neurips26.claims import Claim
from neurips26.criteria import at_least, at_most, decide, decide_over_seeds, holds
from neurips26_book.scoreboard_layout import (
    NARROW_PX,
    board_html,
    chapter_bars,
    headline_text,
    margin_text,
    tightest,
)


def _claim(chapter, id, decision, **extra):
    return Claim(
        chapter=chapter,
        id=id,
        statement=f"statement of {id}",
        paper="44–52 % of EAGLE-3's cost",
        measured={"SpecBlock": 1.41, "EAGLE-3": 2.49, "a very long measurement name " * 4: 0.5},
        verdict=decision.verdict,
        scale="default",
        expected=decision.verdict,
        criteria=decision.criteria_dicts(),
        seeds=list(decision.seeds),
        close_call=decision.close_call,
        package="pkg",
        **extra,
    )


def test_the_row_shows_the_criterion_closest_to_flipping_and_its_margin():
    decision = decide([at_least("slope", 0.79, 0.7), at_most("ratio", 0.57, 0.6)], seed=0)
    claim = _claim("10-specblock", "cost", decision)
    c, _ = tightest(claim)
    assert c.name == "ratio"  # +5.0 % beats +12.9 %
    assert headline_text(claim) == "ratio: 0.57 (≤ 0.6)"
    assert margin_text(claim) == "margin +5.0 %"
    own = _claim("10-specblock", "cost", decision, headline="0.57 of EAGLE-3's drafting cost")
    assert headline_text(own) == "0.57 of EAGLE-3's drafting cost"


def test_over_seeds_the_deciding_criterion_names_its_seed_and_exact_facts_have_no_margin():
    decision = decide_over_seeds({0: [at_least("x", 1.2, 1.0)], 1: [at_least("x", 0.9, 1.0)]})
    claim = _claim("02-sparse-cc", "over-seeds", decision)
    assert claim.verdict == "partly" and margin_text(claim) == "margin -10.0 % (seed 1)"
    exact = _claim("10-specblock", "lossless", decide([holds("lossless", True)]))
    assert margin_text(exact) == "exact criteria" and headline_text(exact) == "exact facts: 1 of 1 hold"


def test_the_board_has_one_row_per_claim_a_bar_per_chapter_and_folded_measurements():
    ok = decide([at_least("slope", 0.79, 0.7)], seed=0)
    bad = decide([at_least("slope", 0.5, 0.7)], seed=0)
    claims = [
        _claim("01-thwf", "a", ok),
        _claim("01-thwf", "b", bad),
        _claim("16-spatialclaw", "c", ok, by_construction="The reference policy decides it."),
    ]
    board = board_html(claims, with_chapter=True)
    assert board.count('class="n26-row"') == 3 and board.count("<details>") == 3
    assert board.count('class="n26-bar-row"') == 2
    assert "by construction" in board and "The reference policy decides it." in board
    # every measurement is there, folded; nothing forces a width wider than the column
    assert "a very long measurement name" in board and "min-width:14em" not in board
    assert f"@media (max-width: {NARROW_PX}px)" in board
    assert not re.search(r"white-space:\s*nowrap[^}]*n26-row", board)
    one_chapter = board_html(claims[:2], with_chapter=False)
    assert 'class="n26-bar-row"' not in one_chapter and "01-thwf ·" not in one_chapter


def test_bars_share_one_scale_across_chapters():
    ok = decide([at_least("slope", 0.79, 0.7)], seed=0)
    claims = [_claim("01-thwf", f"a{i}", ok) for i in range(4)] + [_claim("02-sparse-cc", "b", ok)]
    bars = chapter_bars(claims)
    assert "width:100.00%" in bars and "width:25.00%" in bars
