"""The free-response format: the questions as a text responder reads them, and how its answer is parsed.

Each question is the benchmark's definitions block and one question asking for a single integer (the
object category for S1; two images for the rotation tasks), in our words. A reply becomes an integer by
the released three-rule cascade (:func:`parse_integer`): the whole reply is an integer; else the single
integer in it; else the last one (models tend to reason first and answer last); else no answer, which is
scored wrong. Chain-of-thought replies are read line by line (:func:`parse_chain`): each sub-task's value
is the last integer on its numbered line, the total comes from ``<answer>…</answer>``, then from
"the total is a + b = c", then from the cascade. A missing line scores wrong.
"""

from __future__ import annotations

import re

from neurips26.spatial_iq.scenes import CATEGORIES
from neurips26.spatial_iq.tasks import check_task

#: What every integer question is preceded by (the benchmark's definitions, paraphrased).
DEFINITIONS = (
    "Definitions. A column is a vertical stack of one or more objects, each resting on the ground or on "
    "the object right below it. A layer is the set of objects at one height. A visible object shows at "
    "least part of one face. A cluster is a group of objects joined through shared faces, directly or "
    "through other objects; touching only along an edge or corner does not join them. The supporting "
    "objects of an object are those below it in its column; the directly supporting one is right below "
    "it. A hidden object shows no face and must support at least one visible object."
)
#: The question of each task (a single integer answer unless noted).
QUESTIONS: dict[str, str] = {
    "S1": "Which kind of object is the structure made of? Answer with one word.",
    "S2": "How many clusters does the structure have?",
    "S3": "How many columns does the structure have?",
    "S4": "How many layers does the structure have?",
    "S5": "How many objects of the structure are visible?",
    "S6": "How many objects are in the highest layer of the structure?",
    "S7": "How many visible objects directly support the object(s) in the highest layer?",
    "S8": "How many visible objects lie in the columns under the object(s) of the highest layer, not "
    "counting those top objects?",
    "S9": "How many visible objects rest directly on a hidden object?",
    "T1": "How many objects does the structure have in total, counting the hidden ones it needs as support?",
    "T2a": "The two images show one structure from two sides, the second turned a quarter turn further "
    "round. How many objects visible in the first image are not visible in the second?",
    "T2b": "The two images show one structure from opposite sides. How many objects visible in the first "
    "image are not visible in the second?",
}
INSTRUCTION = "This is a precision test. Reply with the value only: no sentences, no explanation."
#: The labelled lines of a chain of thought, in the released order, and the task each one gives.
CHAIN_LINES: tuple[tuple[str, str], ...] = (
    ("S1", "object type"),
    ("S3", "columns"),
    ("S4", "layers"),
    ("S6", "objects in the top layer"),
    ("S2", "clusters"),
    ("S5", "visible objects"),
    ("S8", "visible objects below the top in its columns"),
    ("S7", "visible direct supporters of the top"),
    ("S9", "visible objects resting on a hidden one"),
    ("hidden", "hidden objects"),
)
_INT = re.compile(r"-?\d+")
_ANSWER = re.compile(r"<answer>\s*(-?\d+)\s*</answer>", re.IGNORECASE)
_TOTAL = re.compile(r"the\s+total\s+is\s+-?\d+\s*\+\s*-?\d+\s*=\s*(-?\d+)", re.IGNORECASE)


def prompt(task: str) -> str:
    """The full text of ``task``'s question (instruction, definitions unless S1, question)."""
    task = check_task(task)
    parts = [INSTRUCTION] + ([] if task == "S1" else [DEFINITIONS]) + [QUESTIONS[task]]
    return "\n".join(parts)


def strip_thinking(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks and stray think tags."""
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)
    return text.replace("</think>", "").replace("<think>", "").strip()


def parse_integer(text: object) -> int | None:
    """The released cascade: the reply is an integer → it; one integer in it → that; several → the last;
    none → None."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"text must be a str or None; got {type(text).__name__}")
    t = strip_thinking(text)
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    found = _INT.findall(t)
    return int(found[-1]) if found else None


def parse_category(text: object) -> str | None:
    """The first category name (or its plural) in the reply, case-insensitive; None if there is none."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"text must be a str or None; got {type(text).__name__}")
    words = re.findall(r"[a-z]+", strip_thinking(text).lower())
    for w in words:
        for c in CATEGORIES:
            if w in (c, c + "s"):
                return c
    return None


def chain_text(values: dict[str, int | str], total: int) -> str:
    """A chain of thought with the released structure: one numbered line per sub-task, then the total."""
    lines = [
        f"{n}) The number of {label}: {values[task]}" if task != "S1" else f"{n}) The {label}: {values[task]}"
        for n, (task, label) in enumerate(CHAIN_LINES, start=1)
    ]
    lines.append(f"The total is {values['S5']} + {values['hidden']} = {total}")
    return "<think>\n" + "\n".join(lines) + f"\n</think>\n<answer>{total}</answer>"


def parse_chain(text: object) -> dict[str, int | str | None]:
    """Every sub-task value of a chain-of-thought reply (module doc) plus ``"T1"``; None where missing."""
    if text is None:
        text = ""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str or None; got {type(text).__name__}")
    out: dict[str, int | str | None] = {task: None for task, _ in CHAIN_LINES}
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)\)", line)
        if not m or not 1 <= int(m.group(1)) <= len(CHAIN_LINES):
            continue
        task = CHAIN_LINES[int(m.group(1)) - 1][0]
        if out[task] is not None:
            continue
        if task == "S1":
            out[task] = parse_category(line[m.end() :])
        else:
            found = _INT.findall(line[m.end() :])
            out[task] = int(found[-1]) if found else None
    answer = _ANSWER.search(text) or _TOTAL.search(text)
    out["T1"] = int(answer.group(1)) if answer else parse_integer(text)
    return out


__all__ = [
    "CHAIN_LINES",
    "DEFINITIONS",
    "INSTRUCTION",
    "QUESTIONS",
    "chain_text",
    "parse_category",
    "parse_chain",
    "parse_integer",
    "prompt",
    "strip_thinking",
]
