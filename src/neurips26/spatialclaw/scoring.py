r"""Scoring answers (paper §5): exact match for multiple choice, mean relative accuracy for numbers.

Mean relative accuracy (MRA) of a prediction :math:`\hat y` for a true value :math:`y \ne 0` is

.. math::  \mathrm{MRA}(\hat y, y) = \frac{1}{|\Theta|} \sum_{\theta \in \Theta}
           \mathbb 1\!\left[\frac{|\hat y - y|}{|y|} \le 1 - \theta\right],
           \qquad \Theta = \{0.50, 0.55, \dots, 0.95\},

so an exact answer scores 1, a relative error above 50 % scores 0, and each 5 % of relative error in
between costs one tenth. A relative error that equals a bound up to floating-point rounding (10 vs 7.5 is
exactly 25 %) counts as within it: the comparison allows :data:`_ROUNDING` of slack.

Choices we made (the paper's scorer is silent or differs): ``truth == 0`` is an error (the relative error
is undefined; the released scorer falls back to exact equality); a prediction that is not a number and
contains none (``None``, ``"Cannot determine"``, ``True``, NaN, inf) scores 0.0, so an agent that gives no
usable answer is simply wrong. Strings are read with :func:`parse_number` (``"about 2.5 m"`` → 2.5).
"""

from __future__ import annotations

import math
import numbers
import re
import string
from collections.abc import Sequence

from neurips26.validation import check_choice, check_float

#: The MRA confidence thresholds 0.50, 0.55, ..., 0.95.
THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.05 * k, 2) for k in range(10))
#: The question kinds :func:`score` dispatches on.
QUESTION_KINDS: tuple[str, ...] = ("mc", "numeric")
_ROUNDING = 1e-9
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
_PUNCTUATION = str.maketrans({c: " " for c in string.punctuation})
_LETTER = re.compile(r"^\s*[\(\[]?([A-Za-z])[\)\]\.:]?(?:\s|$)")


def parse_number(text: object) -> float | None:
    """The first number in ``text`` (``"about 2.5 m"`` → 2.5, ``"-3e2"`` → -300, ``"1,200 cm"`` → 1200), or
    the value itself for a real number; ``None`` if there is no finite number (bools are not numbers)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, numbers.Real):
        value = float(text)
        return value if math.isfinite(value) else None
    if not isinstance(text, str):
        return None
    m = _NUMBER.search(text)
    if m is None:
        return None
    value = float(m.group(0).replace(",", ""))
    return value if math.isfinite(value) else None


def mean_relative_accuracy(pred: object, truth: float, thresholds: Sequence[float] = THRESHOLDS) -> float:
    """MRA of ``pred`` against ``truth`` (module docstring): the share of ``thresholds`` θ for which the
    relative error is at most ``1 - θ``. ``pred`` may be a number or text holding one (else 0.0)."""
    truth = check_float("truth", truth)
    if truth == 0:
        raise ValueError("truth must be non-zero: the relative error |pred - truth| / |truth| is undefined")
    thresholds = tuple(check_float("thresholds", t, minimum=0.0, maximum=1.0) for t in thresholds)
    if not thresholds:
        raise ValueError("thresholds must not be empty")
    value = parse_number(pred)
    if value is None:
        return 0.0
    error = abs(value - truth) / abs(truth)
    return sum(error <= 1.0 - t + _ROUNDING for t in thresholds) / len(thresholds)


def _normalise(text: str) -> str:
    """Lower case, punctuation to spaces, whitespace collapsed: ``" Front-Left. "`` → ``"front left"``."""
    return " ".join(text.lower().translate(_PUNCTUATION).split())


def _choice_index(answer: object, choices: Sequence[str]) -> int | None:
    """Which choice ``answer`` names: its letter (``"B"``, ``"(b)"``, ``"B. the sofa"``) or its text."""
    if not isinstance(answer, str):
        return None
    texts = [_normalise(c) for c in choices]
    norm = _normalise(answer)
    if norm in texts:
        return texts.index(norm)
    m = _LETTER.match(answer)
    if m is not None:
        k = ord(m.group(1).upper()) - ord("A")
        rest = _normalise(answer[m.end() :])
        # a bare letter, or a letter followed by that choice's own text ("B) sofa")
        if k < len(choices) and (rest == "" or rest == texts[k]):
            return k
    return None


def exact_match(pred: object, truth: str, choices: Sequence[str] | None = None) -> float:
    """1.0 if ``pred`` names the same answer as ``truth``, else 0.0.

    Both are compared after lower-casing, turning punctuation into spaces and collapsing whitespace. With
    ``choices`` (the options in order, lettered A, B, C, ...), ``pred`` and ``truth`` may each be a letter or
    a choice's text; a ``pred`` that names no choice scores 0.
    """
    if not isinstance(truth, str):
        raise TypeError(f"truth must be a str; got {type(truth).__name__}")
    if isinstance(pred, bool) or not isinstance(pred, str | numbers.Real):
        return 0.0
    if isinstance(pred, numbers.Real) and float(pred).is_integer():
        pred = str(int(pred))  # ReturnAnswer(3.0) names the choice "3"
    pred = str(pred)
    if choices:
        if isinstance(choices, str) or not all(isinstance(c, str) for c in choices):
            raise TypeError("choices must be a sequence of str")
        if len(choices) > 26:
            raise ValueError(f"choices must have at most 26 options; got {len(choices)}")
        want = _choice_index(truth, choices)
        if want is None:
            raise ValueError(f"truth {truth!r} names none of the choices {tuple(choices)}")
        return float(_choice_index(pred, choices) == want)
    return float(_normalise(pred) == _normalise(truth))


def score(question_kind: str, pred: object, truth: object, choices: Sequence[str] = ()) -> float:
    """A question's score in [0, 1]: :func:`exact_match` for ``"mc"``, :func:`mean_relative_accuracy` for
    ``"numeric"``."""
    check_choice("question_kind", question_kind, QUESTION_KINDS)
    if question_kind == "mc":
        return exact_match(pred, truth, tuple(choices) or None)  # type: ignore[arg-type]
    return mean_relative_accuracy(pred, truth)  # type: ignore[arg-type]
