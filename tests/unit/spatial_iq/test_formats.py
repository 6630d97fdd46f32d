"""Parsing: the released integer cascade, chain-of-thought lines and token traces read by task token."""

import pytest

from neurips26.spatial_iq.formats import chain_text, parse_category, parse_chain, parse_integer, prompt
from neurips26.spatial_iq.tasks import TASKS
from neurips26.spatial_iq.tokens import (
    ANSWER,
    CHAIN,
    EOS,
    TOKEN,
    chain_answer,
    plain_answer,
    read_answer,
    read_chain,
    task_token,
    value_token,
    well_formed,
)

ANSWERS = {
    "S1": "can",
    "S2": 1,
    "S3": 4,
    "S4": 3,
    "S5": 9,
    "S6": 2,
    "S7": 2,
    "S8": 3,
    "S9": 1,
    "hidden": 2,
    "T1": 11,
}


def test_integer_cascade():
    assert parse_integer("12") == 12
    assert parse_integer(" 7 ") == 7
    assert parse_integer("There are 5 blocks.") == 5
    assert parse_integer("3 columns and 4 layers, so 12") == 12
    assert parse_integer("<think>I count 5 then 6</think> 8") == 8
    assert parse_integer("none") is None and parse_integer(None) is None
    with pytest.raises(TypeError, match="text"):
        parse_integer(3)


def test_category_and_prompts():
    assert parse_category("Cans.") == "can" and parse_category("a sphere") is None
    for task in TASKS:
        text = prompt(task)
        assert ("Definitions" in text) == (task != "S1")
    with pytest.raises(ValueError, match="task"):
        prompt("S0")


def test_text_chain_round_trip_and_missing_lines():
    parsed = parse_chain(chain_text(ANSWERS, 11))
    assert parsed == {k: v for k, v in ANSWERS.items()}
    broken = "\n".join(line for line in chain_text(ANSWERS, 11).splitlines() if not line.startswith("6)"))
    assert parse_chain(broken)["S5"] is None
    assert parse_chain("the total is 4 + 3 = 7")["T1"] == 7


def test_token_traces():
    seq = chain_answer(ANSWERS)
    assert len(seq) == 2 * len(CHAIN) + 3 and well_formed(seq)
    assert read_chain(seq) == ANSWERS
    assert read_answer(plain_answer(7), "T1") == 7
    assert read_answer(plain_answer("tin"), "S1") == "tin"
    # a missing entry scores wrong, the total falls back to the last integer
    no_s5 = [
        t
        for i, t in enumerate(seq)
        if i not in (seq.index(task_token("S5")), seq.index(task_token("S5")) + 1)
    ]
    assert read_chain(no_s5)["S5"] == -1
    assert read_answer([value_token(3), value_token(4)], "T1") == 4
    assert read_answer([ANSWER, EOS], "T1") == -1
    assert not well_formed([ANSWER, value_token(3)]) and not well_formed([value_token(3), EOS])
    assert well_formed([ANSWER, value_token(3), EOS, TOKEN["<pad>"]])
    assert value_token(99) == value_token(64)
    with pytest.raises(ValueError, match="value"):
        value_token("sphere")
