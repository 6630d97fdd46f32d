"""Verdict criteria with their margins, decided on one seed or over several (the claims' "How decided").

A claim's verdict is decided by criteria fixed before the run. Each :class:`Criterion` carries the measured
value, its threshold and its direction, so a reader sees how far the verdict is from flipping::

    decision = decide([
        at_least("boundary slope ≥ 0.7", slope, 0.7),
        at_most("error of ThWF / error of RGD ≤ 1", ratio, 1.0),
        holds("every decoded sequence equals the target's greedy one", lossless),
    ])
    claims.record(id=..., statement=..., paper=..., measured=..., decision=decision)

:func:`decide` gives ``reproduced`` when every criterion passes, ``not reproduced`` when none does, and
``partly`` otherwise. Two measured values compared (``A > B``) become :func:`higher`, :func:`higher_or_equal`
or :func:`lower`: the difference against 0, relative to the larger of ``|A|`` and ``|B|``.
:func:`decide_over_seeds` decides each seed so, then the claim: ``reproduced`` when
every seed is, ``not reproduced`` when every seed is, ``partly`` otherwise, keeping the per-seed outcome.

A criterion is *deciding* when flipping its outcome alone (on one seed) would change the claim's verdict;
a verdict is a *close call* when a deciding criterion sits within :data:`CLOSE_CALL` (5 %) of its threshold,
relative to the criterion's ``scale`` (by default ``|threshold|``; a threshold of 0 needs an explicit scale,
e.g. the size of the quantities compared). Exact facts (:func:`holds`: losslessness, an identity) have no
margin and are never close.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced")
DIRECTIONS: tuple[str, ...] = (">=", ">", "<=", "<", "==")
CLOSE_CALL = 0.05
"""A deciding criterion within this fraction of its scale from its threshold makes a close call."""


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite; got {number}")
    return number


@dataclass(frozen=True)
class Criterion:
    """One criterion: ``value <direction> threshold`` (``==`` marks an exact fact, value/threshold 1/0).

    ``scale``: what the margin is relative to (default ``|threshold|``; required when the threshold is 0).
    """

    name: str
    value: float
    threshold: float
    direction: str
    scale: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty str; got {self.name!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}; got {self.direction!r}")
        if isinstance(self.value, float) and math.isnan(self.value):
            object.__setattr__(self, "value", float("nan"))  # a failed measurement: the criterion fails
        else:
            object.__setattr__(self, "value", _finite("value", self.value))
        object.__setattr__(self, "threshold", _finite("threshold", self.threshold))
        if self.direction == "==":
            return
        if self.scale is None:
            if self.threshold == 0:
                raise ValueError(
                    f"scale must be given for criterion {self.name!r}: its threshold is 0, so a relative "
                    "margin needs the size of the quantities compared"
                )
        else:
            scale = _finite("scale", self.scale)
            if scale <= 0:
                raise ValueError(f"scale must be > 0; got {scale}")
            object.__setattr__(self, "scale", scale)

    @property
    def exact(self) -> bool:
        """An exact fact (no margin)."""
        return self.direction == "=="

    @property
    def passed(self) -> bool:
        v, t = self.value, self.threshold
        if math.isnan(v):
            return False
        return {">=": v >= t, ">": v > t, "<=": v <= t, "<": v < t, "==": v == t}[self.direction]

    @property
    def margin(self) -> float | None:
        """Signed distance to the threshold, positive on the passing side (None for an exact fact)."""
        if self.exact:
            return None
        if math.isnan(self.value):
            return float("nan")
        return self.value - self.threshold if self.direction in (">=", ">") else self.threshold - self.value

    @property
    def relative_margin(self) -> float | None:
        """:attr:`margin` over ``scale`` (or ``|threshold|``); None for an exact fact."""
        margin = self.margin
        if margin is None:
            return None
        return margin / (self.scale if self.scale is not None else abs(self.threshold))

    @property
    def close(self) -> bool:
        """Within :data:`CLOSE_CALL` of the threshold (either side); a failed measurement is not close."""
        rel = self.relative_margin
        return rel is not None and not math.isnan(rel) and abs(rel) <= CLOSE_CALL

    def text(self) -> str:
        """``✓ name: 0.747 ≥ 0.7 (margin +0.047, +6.7 %)``."""
        mark = "✓" if self.passed else "✗"
        if self.exact:
            return f"{mark} {self.name} (exact)"
        sign = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}[self.direction]
        if math.isnan(self.value):
            return f"{mark} {self.name}: n/a {sign} {self.threshold:.4g}"
        if self.margin == 0 and not self.passed:
            return (
                f"{mark} {self.name}: {self.value:.4g} {sign} {self.threshold:.4g} (at the threshold: fails)"
            )
        return (
            f"{mark} {self.name}: {self.value:.4g} {sign} {self.threshold:.4g} "
            f"(margin {self.margin:+.3g}, {100 * self.relative_margin:+.1f} %)"
        )

    def to_dict(self) -> dict[str, Any]:
        value = None if math.isnan(self.value) else self.value
        return {
            "name": self.name,
            "value": value,
            "threshold": self.threshold,
            "direction": self.direction,
            "scale": self.scale,
            "passed": self.passed,
            "margin": None if self.margin is None or math.isnan(self.margin) else self.margin,
            "relative_margin": None
            if self.relative_margin is None or math.isnan(self.relative_margin)
            else self.relative_margin,
            "close": self.close,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Criterion:
        value = data["value"]
        return cls(
            data["name"],
            float("nan") if value is None else value,
            data["threshold"],
            data["direction"],
            data.get("scale"),
        )


def at_least(name: str, value: float, threshold: float, *, scale: float | None = None) -> Criterion:
    """``value ≥ threshold``."""
    return Criterion(name, value, threshold, ">=", scale)


def above(name: str, value: float, threshold: float, *, scale: float | None = None) -> Criterion:
    """``value > threshold``."""
    return Criterion(name, value, threshold, ">", scale)


def at_most(name: str, value: float, threshold: float, *, scale: float | None = None) -> Criterion:
    """``value ≤ threshold``."""
    return Criterion(name, value, threshold, "<=", scale)


def below(name: str, value: float, threshold: float, *, scale: float | None = None) -> Criterion:
    """``value < threshold``."""
    return Criterion(name, value, threshold, "<", scale)


def holds(name: str, ok: bool) -> Criterion:
    """An exact fact that holds or not (losslessness, an identity): no margin, never a close call."""
    if not isinstance(ok, bool | np.bool_):
        raise TypeError(f"ok must be a bool; got {type(ok).__name__}")
    return Criterion(name, 1.0 if ok else 0.0, 1.0, "==")


def _comparison_scale(value: float, other: float, unit: float) -> float:
    """The scale of a comparison of two measured values: the larger of ``|value|`` and ``|other|``, or the
    natural ``unit`` (> 0) of the quantity when both are 0."""
    if not unit > 0:
        raise ValueError(f"unit must be > 0; got {unit!r}")
    size = max(abs(value), abs(other))
    return size if size > 0 else unit


def higher(name: str, value: float, other: float, *, unit: float) -> Criterion:
    """``value > other`` as ``value − other > 0``, relative to the larger of ``|value|`` and ``|other|``.

    ``unit`` (> 0, a natural unit of the quantity) is the scale only when both are 0 (the margin is 0).
    """
    value, other = float(value), float(other)
    return above(name, value - other, 0.0, scale=_comparison_scale(value, other, unit))


def higher_or_equal(name: str, value: float, other: float, *, unit: float) -> Criterion:
    """``value ≥ other`` as ``value − other ≥ 0``, scaled like :func:`higher`."""
    value, other = float(value), float(other)
    return at_least(name, value - other, 0.0, scale=_comparison_scale(value, other, unit))


def lower(name: str, value: float, other: float, *, unit: float) -> Criterion:
    """``value < other`` as ``value − other < 0``, scaled like :func:`higher`."""
    value, other = float(value), float(other)
    return below(name, value - other, 0.0, scale=_comparison_scale(value, other, unit))


def _verdict(outcomes: Sequence[bool]) -> str:
    passed = sum(outcomes)
    return VERDICTS[0] if passed == len(outcomes) else VERDICTS[2] if passed == 0 else VERDICTS[1]


def _combine(verdicts: Sequence[str]) -> str:
    if all(v == VERDICTS[0] for v in verdicts):
        return VERDICTS[0]
    if all(v == VERDICTS[2] for v in verdicts):
        return VERDICTS[2]
    return VERDICTS[1]


@dataclass(frozen=True)
class Decision:
    """A verdict and the criteria that decided it, per seed (``seeds`` empty: one run, seed not named)."""

    verdict: str
    per_seed: tuple[tuple[Criterion, ...], ...]
    seeds: tuple[int, ...] = field(default=())

    @property
    def criteria(self) -> tuple[Criterion, ...]:
        """Every criterion of every seed, seed by seed."""
        return tuple(c for run in self.per_seed for c in run)

    @property
    def seed_verdicts(self) -> tuple[str, ...]:
        return tuple(_verdict([c.passed for c in run]) for run in self.per_seed)

    def deciding(self) -> set[tuple[int, int]]:
        """``(run, criterion)`` indices of the criteria whose outcome, flipped alone, changes the verdict."""
        out = set()
        for s, run in enumerate(self.per_seed):
            for i in range(len(run)):
                flipped = [c.passed != (j == i) for j, c in enumerate(run)]
                verdicts = list(self.seed_verdicts)
                verdicts[s] = _verdict(flipped)
                if _combine(verdicts) != self.verdict:
                    out.add((s, i))
        return out

    @property
    def close_call(self) -> bool:
        """A deciding criterion lies within :data:`CLOSE_CALL` of its threshold."""
        return any(self.per_seed[s][i].close for s, i in self.deciding())

    def criteria_dicts(self) -> list[dict[str, Any]]:
        """Every criterion as a dict (:meth:`Criterion.to_dict`) with its ``seed`` and ``deciding`` flag."""
        deciding = self.deciding()
        seeds: Sequence[int | None] = self.seeds or [None]
        return [
            {**c.to_dict(), "seed": seed, "deciding": (s, i) in deciding}
            for s, (seed, run) in enumerate(zip(seeds, self.per_seed, strict=True))
            for i, c in enumerate(run)
        ]

    @property
    def detail(self) -> str:
        """The text of "How decided": every criterion with its margin, per seed when there are several."""
        if len(self.per_seed) == 1:
            text = "; ".join(c.text() for c in self.per_seed[0])
            return text + ("" if not self.seeds else f" (seed {self.seeds[0]} only)")
        parts = []
        for seed, run, verdict in zip(self.seeds, self.per_seed, self.seed_verdicts, strict=True):
            parts.append(f"seed {seed} → {verdict}: " + "; ".join(c.text() for c in run))
        return " | ".join(parts)


def _check_criteria(criteria: object, what: str) -> tuple[Criterion, ...]:
    if isinstance(criteria, Mapping):
        criteria = list(criteria.values())
    if isinstance(criteria, str | Criterion) or not isinstance(criteria, Sequence) or not criteria:
        raise ValueError(f"{what} must be a non-empty sequence of Criterion")
    for c in criteria:
        if not isinstance(c, Criterion):
            raise TypeError(f"{what} must hold Criterion objects; got {type(c).__name__}")
    names = [c.name for c in criteria]
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has repeated criterion names: {names}")
    return tuple(criteria)


def decide(criteria: Sequence[Criterion] | Mapping[str, Criterion], *, seed: int | None = None) -> Decision:
    """The verdict of one run: all criteria pass → reproduced, none → not reproduced, else partly.

    ``seed``: name the run's seed, so the table says the claim rests on it alone.
    """
    run = _check_criteria(criteria, "criteria")
    return Decision(_verdict([c.passed for c in run]), (run,), () if seed is None else (int(seed),))


def decide_over_seeds(per_seed: Mapping[int, Sequence[Criterion]]) -> Decision:
    """The verdict over seeds: every seed reproduced → reproduced, every seed not → not, else partly.

    ``per_seed`` maps each seed to its criteria; every seed must have the same criterion names.
    """
    if not isinstance(per_seed, Mapping) or not per_seed:
        raise ValueError("per_seed must be a non-empty mapping of seed -> criteria")
    seeds = tuple(int(s) for s in per_seed)
    runs = tuple(_check_criteria(c, f"per_seed[{s}]") for s, c in per_seed.items())
    names = [c.name for c in runs[0]]
    for seed, run in zip(seeds, runs, strict=True):
        if [c.name for c in run] != names:
            raise ValueError(f"per_seed[{seed}] names other criteria than seed {seeds[0]}: {names}")
    verdicts = [_verdict([c.passed for c in run]) for run in runs]
    return Decision(_combine(verdicts), runs, seeds)
