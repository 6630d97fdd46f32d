"""Claims: what a paper says next to what we measured, with an honest verdict.

A chapter records each claim it reproduces with :class:`ClaimSet.record`: an id,
the paper's statement and number, our measured values for the method and every
baseline, the scale, and a verdict (``reproduced``, ``partly``, ``not reproduced``).

* In the notebook, :meth:`ClaimSet.show` displays the table. Its output also
  carries the claims as JSON under :data:`MIME_TYPE`; the book's Sphinx
  extension reads that output (also from the execution cache) and builds the
  reproduction scoreboard from every chapter.
* At ``scale="default"`` every verdict is compared with the chapter's committed
  expectation (``src/neurips26/<package>/expected_claims.json``): a changed or
  missing verdict raises, so a regression cannot slip into the book. Smoke runs
  record but do not compare; an honest "not reproduced" is a legitimate, stable
  expectation.
"""

from __future__ import annotations

import html
import json
import math
import numbers
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from neurips26.scales import check_scale

VERDICTS: tuple[str, ...] = ("reproduced", "partly", "not reproduced")
MIME_TYPE = "application/vnd.neurips26.claims+json"
CLAIMS_DIR_ENV = "NEURIPS26_CLAIMS_DIR"
EXPECTED_FILE = "expected_claims.json"

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_CHAPTER_RE = re.compile(r"^\d\d-[a-z0-9-]+$")

MeasuredValue = float | int | str | bool


class ClaimVerdictChanged(AssertionError):
    """A default-scale verdict differs from the chapter's committed expectation."""


class ClaimExpectationMissing(AssertionError):
    """A default-scale claim has no committed expectation (add it to expected_claims.json)."""


@dataclass(frozen=True)
class Claim:
    """One paper claim and our measurement of it.

    ``measured`` maps a method or baseline name to its measured value, e.g.
    ``{"ThWF": 1.02, "RGD": 2.31}``; ``detail`` says how the verdict was decided.
    """

    chapter: str
    id: str
    statement: str
    paper: str
    measured: dict[str, MeasuredValue]
    verdict: str
    scale: str
    detail: str = ""
    expected: str | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def verdict_from_checks(checks: Mapping[str, bool]) -> tuple[str, str]:
    """Verdict from named pass/fail criteria: all pass → reproduced, some → partly, none → not reproduced.

    Returns ``(verdict, detail)`` where ``detail`` lists each criterion with ✓/✗ so the
    table shows exactly which part of the claim held.
    """
    if not isinstance(checks, Mapping) or not checks:
        raise ValueError("checks must be a non-empty mapping of criterion name -> bool")
    for name, ok in checks.items():
        if not isinstance(name, str) or not isinstance(ok, bool | np.bool_):
            raise TypeError(f"checks must map str -> bool; got {name!r}: {type(ok).__name__}")
    checks = {name: bool(ok) for name, ok in checks.items()}
    passed = sum(checks.values())
    verdict = VERDICTS[0] if passed == len(checks) else VERDICTS[2] if passed == 0 else VERDICTS[1]
    detail = "; ".join(f"{'✓' if ok else '✗'} {name}" for name, ok in checks.items())
    return verdict, detail


def load_expected(package: str) -> dict[str, str]:
    """The committed expected verdicts of chapter package ``neurips26.<package>`` (empty if none)."""
    if not isinstance(package, str) or not package.isidentifier():
        raise ValueError(f"package must be a chapter subpackage name like 'thwf'; got {package!r}")
    try:
        root = resources.files(f"neurips26.{package}")
    except ModuleNotFoundError as err:
        raise ValueError(
            f"package must name a subpackage of neurips26; 'neurips26.{package}' not found"
        ) from err
    path = root / EXPECTED_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(v in VERDICTS for v in data.values()):
        raise ValueError(f"{EXPECTED_FILE} of neurips26.{package} must map claim ids to one of {VERDICTS}")
    return data


def _check_measured(measured: object) -> dict[str, MeasuredValue]:
    if not isinstance(measured, Mapping) or not measured:
        raise TypeError("measured must be a non-empty mapping of method/baseline name -> value")
    out: dict[str, MeasuredValue] = {}
    for name, value in measured.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"measured keys must be non-empty str; got {name!r}")
        if isinstance(value, bool | np.bool_ | str):
            out[name] = value if isinstance(value, str) else bool(value)
        elif isinstance(value, numbers.Integral):
            out[name] = int(value)
        elif isinstance(value, numbers.Real):
            number = float(value)
            # NaN and inf are not valid JSON, and the notebook output must be: keep them as readable text.
            out[name] = number if math.isfinite(number) else ("n/a" if math.isnan(number) else str(number))
        else:
            raise TypeError(f"measured[{name!r}] must be a number, bool or str; got {type(value).__name__}")
    return out


def format_value(value: MeasuredValue) -> str:
    """Human-readable measured value (4 significant digits for floats)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:.4g}"
    return str(value)


class ClaimSet:
    """The claims of one chapter notebook run.

    >>> claims = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    """

    def __init__(self, chapter: str, package: str, scale: str) -> None:
        if not isinstance(chapter, str) or not _CHAPTER_RE.match(chapter):
            raise ValueError(f"chapter must look like 'NN-slug' (e.g. '01-thwf'); got {chapter!r}")
        self.chapter = chapter
        self.package = package
        self.scale = check_scale(scale)
        self.expected = load_expected(package)
        self.claims: dict[str, Claim] = {}

    def record(
        self,
        *,
        id: str,  # noqa: A002 - the natural name for a claim id
        statement: str,
        paper: str,
        measured: Mapping[str, MeasuredValue],
        verdict: str,
        detail: str = "",
    ) -> Claim:
        """Record one claim; at default scale, fail if the verdict differs from the committed one."""
        if not isinstance(id, str) or not _ID_RE.match(id):
            raise ValueError(f"id must be a lowercase slug like 'boundary-slope'; got {id!r}")
        for name, value in (("statement", statement), ("paper", paper), ("detail", detail)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str; got {type(value).__name__}")
        if not statement.strip():
            raise ValueError("statement must not be empty")
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {verdict!r}")
        claim = Claim(
            chapter=self.chapter,
            id=id,
            statement=statement,
            paper=paper,
            measured=_check_measured(measured),
            verdict=verdict,
            scale=self.scale,
            detail=detail,
            expected=self.expected.get(id),
        )
        self.claims[id] = claim
        self._write()
        if self.scale == "default":
            if id not in self.expected:
                raise ClaimExpectationMissing(
                    f"claim {id!r} of chapter {self.chapter} has no committed expected verdict; add "
                    f'"{id}": "{verdict}" to src/neurips26/{self.package}/{EXPECTED_FILE} after checking it'
                )
            if verdict != self.expected[id]:
                raise ClaimVerdictChanged(
                    f"claim {id!r} of chapter {self.chapter}: measured verdict {verdict!r} differs from the "
                    f"committed {self.expected[id]!r} ({detail}). Investigate; update {EXPECTED_FILE} "
                    "only if the new verdict is the honest one."
                )
        return claim

    # --- display -------------------------------------------------------------------------------
    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.claims.values()]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        claims = list(self.claims.values())
        return {
            MIME_TYPE: {"chapter": self.chapter, "scale": self.scale, "claims": self.to_json()},
            "text/html": claims_html(claims),
            "text/plain": claims_text(claims),
        }

    def show(self) -> None:
        """Display the claims table (HTML in Jupyter; the book's scoreboard reads the JSON part)."""
        from IPython.display import display

        display(self)

    def _write(self) -> None:
        """Also write the claims as JSON under ``$NEURIPS26_CLAIMS_DIR`` when it is set (CI artifacts)."""
        target = os.environ.get(CLAIMS_DIR_ENV)
        if not target:
            return
        path = Path(target) / f"{self.chapter}.{self.scale}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        existing: dict[str, Any] = {}
        if path.is_file():
            try:
                existing = {c["id"]: c for c in json.loads(path.read_text(encoding="utf-8"))}
            except (json.JSONDecodeError, KeyError, TypeError):
                existing = {}
        existing.update({c["id"]: c for c in self.to_json()})
        path.write_text(json.dumps(list(existing.values()), indent=1, ensure_ascii=False), encoding="utf-8")


_VERDICT_STYLE = {
    "reproduced": "background:#d9f0d3;color:#1b4d1b",
    "partly": "background:#fdf0c6;color:#5c4700",
    "not reproduced": "background:#f6d5d5;color:#6b1111",
}


def claims_html(claims: list[Claim], *, with_chapter: bool = False) -> str:
    """An HTML table of claims (used by the notebook display and by the book's scoreboard)."""
    head = ["Chapter"] if with_chapter else []
    head += ["Claim", "Paper", "Measured (ours)", "Verdict", "How decided"]
    rows = []
    for c in claims:
        measured = "<br>".join(
            f"<b>{html.escape(k)}</b>: {html.escape(format_value(v))}" for k, v in c.measured.items()
        )
        verdict = html.escape(c.verdict)
        if c.expected is not None and c.expected != c.verdict:
            verdict += f" <i>(expected {html.escape(c.expected)})</i>"
        cells = [html.escape(c.chapter)] if with_chapter else []
        cells += [
            f"<b>{html.escape(c.id)}</b><br>{html.escape(c.statement)}",
            html.escape(c.paper),
            measured,
            f'<span style="{_VERDICT_STYLE[c.verdict]};padding:0 .3em;border-radius:3px">{verdict}</span>'
            f"<br><small>scale: {html.escape(c.scale)}</small>",
            html.escape(c.detail),
        ]
        # the measured column holds several "name: value" lines: give it room
        widths = ["min-width:14em" if i == len(cells) - 3 else "" for i in range(len(cells))]
        rows.append(
            "<tr>"
            + "".join(
                f'<td style="vertical-align:top;{w}">{x}</td>' for w, x in zip(widths, cells, strict=True)
            )
            + "</tr>"
        )
    header = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
    table = f"<thead>{header}</thead>\n<tbody>{''.join(rows)}</tbody>"
    return (
        '<div style="overflow-x:auto"><table class="neurips26-claims" '
        f'style="font-size:0.85em;border-collapse:collapse">\n{table}\n</table></div>'
    )


def claims_text(claims: list[Claim]) -> str:
    """A plain-text rendering of the claims table."""
    lines = []
    for c in claims:
        measured = ", ".join(f"{k}={format_value(v)}" for k, v in c.measured.items())
        lines.append(f"[{c.verdict}] {c.id}: {c.statement} | paper: {c.paper} | measured: {measured}")
        if c.detail:
            lines.append(f"    {c.detail}")
    return "\n".join(lines) if lines else "(no claims recorded)"
