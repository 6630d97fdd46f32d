"""Which object a text names: the two vocabularies of the perception stand-ins.

The segmentation stand-in (``tools.SAM3``) knows a strict lexicon: a prompt is ``"<category>"``,
``"<colour> <category>"`` or their plurals (``"chairs"``, ``"red boxes"``), optionally after an article,
with categories from :data:`~neurips26.spatialclaw.scene_types.CATEGORIES` and colours from
:data:`neurips26.world.PALETTE`. Anything else, a synonym like ``"couch"`` included, matches nothing: this
is its lexicon-miss failure mode. The grounding VLM stand-in (``vlm``) reads free text and also knows the
synonyms of :data:`~neurips26.spatialclaw.scene_types.SYNONYMS`.
"""

from __future__ import annotations

import re

from neurips26.spatialclaw.scene_types import CATEGORIES, SYNONYMS
from neurips26.world import PALETTE

COLOURS: tuple[str, ...] = tuple(PALETTE)
_ARTICLES = ("a ", "an ", "the ")


def plural(word: str) -> str:
    """English plural of a (last) noun: ``box`` → ``boxes``, ``chair`` → ``chairs``."""
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


#: Every surface form the grounding VLM knows (canonical, synonyms, plurals) → its category.
_VLM_WORDS: dict[str, str] = {}
for _category in CATEGORIES:
    for _word in (_category, *SYNONYMS.get(_category, ())):
        _VLM_WORDS[_word] = _category
        _VLM_WORDS[plural(_word)] = _category
_SAM3_WORDS: dict[str, str] = {w: c for c in CATEGORIES for w in (c, plural(c))}

# Longest forms first so that "floor lamp" wins over "lamp" and "boxes" over "box".
_VLM_PATTERN = re.compile(
    r"\b(?:("
    + "|".join(COLOURS)
    + r")\s+)?("
    + "|".join(re.escape(w) for w in sorted(_VLM_WORDS, key=len, reverse=True))
    + r")\b"
)


def parse_prompt(prompt: str) -> tuple[str | None, str] | None:
    """``(colour or None, category)`` for a prompt in SAM3's strict lexicon (module docstring), else
    ``None``."""
    text = _normalise(prompt)
    for article in _ARTICLES:
        if text.startswith(article):
            text = text[len(article) :]
            break
    words = text.split(" ")
    if len(words) == 1 and words[0] in _SAM3_WORDS:
        return None, _SAM3_WORDS[words[0]]
    if len(words) == 2 and words[0] in COLOURS and words[1] in _SAM3_WORDS:
        return words[0], _SAM3_WORDS[words[1]]
    return None


def find_mentions(text: str) -> list[tuple[str | None, str]]:
    """Objects named in free ``text``, in order of first mention, without repeats: ``(colour or None,
    category)`` pairs; synonyms count (the grounding VLM's vocabulary)."""
    out: list[tuple[str | None, str]] = []
    for match in _VLM_PATTERN.finditer(_normalise(text)):
        item = (match.group(1), _VLM_WORDS[match.group(2)])
        if item not in out:
            out.append(item)
    return out
