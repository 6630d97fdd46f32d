"""The tiny VLM's vocabulary, its question and answer sequences, and how an answer is read back.

A question is one task token after ``BOS`` (the image tokens come before it). An answer is either plain,
``ANSWER v EOS`` (``v`` an integer token, or a category token for S1), or a chain of thought for the total
in the released order: ``S1 c S3 v S4 v S6 v S2 v S5 v S8 v S7 v S9 v HIDDEN v ANSWER t EOS``, each value
right after its task token (the hidden count is the released ``num_hidden_blocks``, the total their sum).
Reading is by task token, as the released evaluator reads numbered lines: a value is the token after the
first occurrence of its task token; a missing or malformed one scores wrong (-1). The total is the token
after ``ANSWER``, else the last integer token (the released fallback).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neurips26.spatial_iq.scenes import CATEGORIES
from neurips26.spatial_iq.tasks import TASKS, check_task

SPECIALS: tuple[str, ...] = ("<pad>", "<bos>", "<eos>", "<answer>")
PAD, BOS, EOS, ANSWER = range(4)
#: Task tokens: the 12 questions and the hidden count of the chain.
TASK_TOKENS: tuple[str, ...] = (*TASKS, "hidden")
MAX_VALUE = 64
VOCAB: tuple[str, ...] = (*SPECIALS, *TASK_TOKENS, *CATEGORIES, *(str(v) for v in range(MAX_VALUE + 1)))
TOKEN = {name: i for i, name in enumerate(VOCAB)}
FIRST_INT = TOKEN["0"]
#: The chain of thought's order (the released one).
CHAIN: tuple[str, ...] = ("S1", "S3", "S4", "S6", "S2", "S5", "S8", "S7", "S9", "hidden")
#: Longest answer: the chain (2 tokens per entry), ANSWER, total, EOS.
MAX_ANSWER = 2 * len(CHAIN) + 3


def task_token(task: str) -> int:
    return TOKEN[task if task == "hidden" else check_task(task)]


def value_token(value: int | str) -> int:
    """The token of an answer value: an integer 0..64 (clipped) or a category name."""
    if isinstance(value, str):
        if value not in CATEGORIES:
            raise ValueError(f"value must be an integer or one of {CATEGORIES}; got {value!r}")
        return TOKEN[value]
    return FIRST_INT + int(np.clip(int(value), 0, MAX_VALUE))


def token_value(token: int) -> int | str | None:
    """The value a token stands for (integer or category), None for any other token."""
    name = VOCAB[int(token)] if 0 <= int(token) < len(VOCAB) else None
    if name is None:
        return None
    if int(token) >= FIRST_INT:
        return int(token) - FIRST_INT
    return name if name in CATEGORIES else None


def question(task: str) -> list[int]:
    return [BOS, task_token(task)]


def plain_answer(value: int | str) -> list[int]:
    return [ANSWER, value_token(value), EOS]


def chain_answer(answers: dict[str, int | str]) -> list[int]:
    """The chain-of-thought target of a view's ground truth (``answers`` from ``ViewLabels.answers``)."""
    out: list[int] = []
    for task in CHAIN:
        out += [task_token(task), value_token(answers[task])]
    return out + [ANSWER, value_token(answers["T1"]), EOS]


def _until_eos(tokens: Sequence[int]) -> list[int]:
    t = [int(x) for x in tokens]
    return t[: t.index(EOS)] if EOS in t else t


def read_answer(tokens: Sequence[int], task: str) -> int | str:
    """The value of a plain reply to ``task``: after ``ANSWER``, else the last value token; -1 if none."""
    t = _until_eos(tokens)
    want_category = task == "S1"
    if ANSWER in t and t.index(ANSWER) + 1 < len(t):
        v = token_value(t[t.index(ANSWER) + 1])
        if v is not None and isinstance(v, str) == want_category:
            return v
    values = [token_value(x) for x in t]
    values = [v for v in values if v is not None and isinstance(v, str) == want_category]
    return values[-1] if values else ("" if want_category else -1)


def read_chain(tokens: Sequence[int]) -> dict[str, int | str]:
    """Every chain value of a reply (module doc) plus ``"T1"``; -1 (or "" for S1) where missing."""
    t = _until_eos(tokens)
    out: dict[str, int | str] = {}
    for task in CHAIN:
        tok = task_token(task)
        v = token_value(t[t.index(tok) + 1]) if tok in t and t.index(tok) + 1 < len(t) else None
        ok = v is not None and isinstance(v, str) == (task == "S1")
        out[task] = v if ok else ("" if task == "S1" else -1)
    out["T1"] = read_answer(t, "T1")
    return out


def well_formed(tokens: Sequence[int]) -> bool:
    """Whether a reply holds ``ANSWER`` followed by an integer and then ``EOS`` (the format gate)."""
    t = [int(x) for x in tokens]
    if EOS not in t:
        return False
    t = t[: t.index(EOS) + 1]
    return len(t) >= 3 and t[-3] == ANSWER and t[-2] >= FIRST_INT


__all__ = [
    "ANSWER",
    "BOS",
    "CHAIN",
    "EOS",
    "MAX_ANSWER",
    "PAD",
    "TASK_TOKENS",
    "TOKEN",
    "VOCAB",
    "chain_answer",
    "plain_answer",
    "question",
    "read_answer",
    "read_chain",
    "task_token",
    "token_value",
    "value_token",
    "well_formed",
]
