"""The fixed word vocabulary of the chapter's instructions, and their encoding as padded word ids.

The paper conditions its video generator on a umT5 text embedding; our stand-in text encoder reads word
ids instead, so every instruction is a sequence of words from a small closed vocabulary, produced by the
two templates of :mod:`neurips26.sparsevideonav.tasks`:

- BVN (beyond-view navigation): ``find the {colour} object``;
- IFN (instruction following): ``clause , clause , ... , stop at the {colour} object`` with each clause
  ``turn left`` / ``turn right`` / ``turn around`` / ``go straight``.

**Length cap.** A straight run of the route costs one ``go straight`` clause, plus one ``turn ...``
clause when the heading changes before it (always for every run but the first, and for the first too when
the start heading is not the first move's). Each clause is 2 words + a comma, the tail is 5 words, so an
instruction of ``R`` runs has at most ``3 · 2R + 5`` words. The most runs of any self-avoiding walk on a
5 × 5 grid is 20 (exhaustive branch-and-bound search, re-run in the tests), and every such walk is the
route of some perfect maze, so :data:`MAX_WORDS` ``= 6 · 20 + 5 = 125``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The pillar colours of the maze, in the world's palette order.
COLOURS: tuple[str, ...] = ("red", "green", "blue", "yellow")

#: Word id 0 is padding; the rest are every word the two templates can produce.
VOCAB: tuple[str, ...] = (
    "<pad>",
    "find",
    "the",
    *COLOURS,
    "object",
    "go",
    "straight",
    "turn",
    "right",  # (this order keeps the ids the checkpoints were trained with: see tasks.py)
    "left",
    "around",
    "stop",
    "at",
    ",",
)

#: The most runs (maximal straight stretches) of a route in a 5 x 5 maze (module doc).
MAX_RUNS = 20
#: Words of the longest possible instruction: 2 clauses of 3 words per run, plus "stop at the C object".
MAX_WORDS = 3 * 2 * MAX_RUNS + 5

PAD = 0
_IDS = {word: i for i, word in enumerate(VOCAB)}


def encode(words: Sequence[str]) -> np.ndarray:
    """The word ids of ``words`` as int64 of length :data:`MAX_WORDS`, padded with 0 (``<pad>``).

    ``ValueError`` (naming ``instruction``) for a word outside :data:`VOCAB`, the pad word itself, or more
    than :data:`MAX_WORDS` words; ``TypeError`` when ``words`` is a bare string or holds non-strings.
    """
    if isinstance(words, str) or not isinstance(words, Sequence):
        raise TypeError(f"instruction must be a sequence of words (not a str); got {type(words).__name__}")
    if len(words) > MAX_WORDS:
        raise ValueError(f"instruction must have at most {MAX_WORDS} words; got {len(words)}")
    ids = np.zeros(MAX_WORDS, dtype=np.int64)
    for i, word in enumerate(words):
        if not isinstance(word, str):
            raise TypeError(f"instruction[{i}] must be a str; got {type(word).__name__}")
        idx = _IDS.get(word, PAD)
        if idx == PAD:
            raise ValueError(f"instruction word {i} must be in VOCAB; got {word!r}")
        ids[i] = idx
    return ids


def decode(ids: object) -> tuple[str, ...]:
    """The words of a 1-D array of word ids, padding (id 0) dropped.

    ``ValueError`` (naming ``ids``) for a non-1-D array or an id outside ``[0, len(VOCAB))``.
    """
    arr = np.asarray(ids)
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError(f"ids must be a 1-D array of integer word ids; got shape {arr.shape}, {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() >= len(VOCAB)):
        raise ValueError(f"ids must lie in [0, {len(VOCAB)}); got range [{arr.min()}, {arr.max()}]")
    return tuple(VOCAB[int(i)] for i in arr if i != PAD)
