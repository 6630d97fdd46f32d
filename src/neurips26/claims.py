"""Claims: what a paper says next to what we measured, with an honest verdict.

A chapter records each claim it reproduces with :class:`ClaimSet.record`: an id,
the paper's statement and number, our measured values for the method and every
baseline, the scale, and a :class:`~neurips26.criteria.Decision` (the verdict,
``reproduced``, ``partly`` or ``not reproduced``, with each criterion's value,
threshold and margin, on one seed or over several: :mod:`neurips26.criteria`).

* In the notebook, :meth:`ClaimSet.show` displays the table. Its output also
  carries the claims as JSON under :data:`MIME_TYPE`; the book's Sphinx
  extension reads that output (also from the execution cache) and builds the
  reproduction scoreboard from every chapter.
* At ``scale="default"`` every verdict is compared with the chapter's committed
  expectation (``src/neurips26/<package>/expected_claims.json``). A changed or
  missing verdict is *marked* in the table and the scoreboard, and listed at
  the end of the book build, so a reader's build never dies on a verdict;
  ``make verify`` (and :data:`STRICT_ENV` = 1, which makes :meth:`ClaimSet.record`
  raise) fails on it. Smoke runs record but do not compare; an honest "not
  reproduced" is a legitimate, stable expectation.
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

from neurips26.criteria import VERDICTS, Decision
from neurips26.scales import check_scale

MIME_TYPE = "application/vnd.neurips26.claims+json"
CLAIMS_DIR_ENV = "NEURIPS26_CLAIMS_DIR"
STRICT_ENV = "NEURIPS26_STRICT_CLAIMS"
"""When set to 1, a default-scale verdict that differs from the committed one raises (``make verify``)."""
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
    ``{"ThWF": 1.02, "RGD": 2.31}``; ``detail`` says how the verdict was decided; ``criteria`` holds each
    criterion (:meth:`neurips26.criteria.Decision.criteria_dicts`: value, threshold, direction, margin,
    seed, deciding); ``seeds`` the seeds the verdict was decided over (empty or one: a single run);
    ``close_call``: a deciding criterion within 5 % of its threshold; ``expected``: the committed verdict;
    ``headline``: our number in a few words, for the scoreboard's one-line row (empty: the scoreboard shows
    the criterion closest to flipping); ``by_construction``: one sentence on what our offline stand-in fixes
    where the outcome follows from how it was written (empty: the outcome was measured, not built in).
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
    criteria: list[dict[str, Any]] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    close_call: bool = False
    package: str = ""
    headline: str = ""
    by_construction: str = ""

    @property
    def changed(self) -> bool:
        """At default scale: the verdict differs from the committed one (or none is committed)."""
        return self.scale == "default" and self.verdict != self.expected

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


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
        decision: Decision | None = None,
        verdict: str | None = None,
        detail: str = "",
        headline: str = "",
        by_construction: str = "",
    ) -> Claim:
        """Record one claim decided by ``decision`` (or, without margins, a bare ``verdict``).

        ``detail`` adds a note to the decision's own text; ``headline`` is our number in a few words for the
        scoreboard (e.g. ``"τ 5.88 vs 4.15"``); ``by_construction`` flags an outcome that follows from how our
        offline stand-in was written, with one sentence on what the stand-in fixes (shown beside the
        verdict). At default scale a verdict that differs from the committed one is marked
        (:attr:`Claim.changed`); with :data:`STRICT_ENV` = 1 it raises.
        """
        if not isinstance(id, str) or not _ID_RE.match(id):
            raise ValueError(f"id must be a lowercase slug like 'boundary-slope'; got {id!r}")
        texts = (
            ("statement", statement),
            ("paper", paper),
            ("detail", detail),
            ("headline", headline),
            ("by_construction", by_construction),
        )
        for name, value in texts:
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str; got {type(value).__name__}")
        if not statement.strip():
            raise ValueError("statement must not be empty")
        if (decision is None) == (verdict is None):
            raise ValueError("give exactly one of decision (a neurips26.criteria.Decision) and verdict")
        extra: dict[str, Any] = {}
        if decision is not None:
            if not isinstance(decision, Decision):
                raise TypeError(
                    f"decision must be a neurips26.criteria.Decision; got {type(decision).__name__}"
                )
            verdict = decision.verdict
            detail = decision.detail + (f". {detail}" if detail else "")
            extra = {
                "criteria": decision.criteria_dicts(),
                "seeds": list(decision.seeds),
                "close_call": decision.close_call,
            }
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
            package=self.package,
            headline=headline.strip(),
            by_construction=by_construction.strip(),
            **extra,
        )
        self.claims[id] = claim
        self._write()
        if self.scale == "default" and os.environ.get(STRICT_ENV) == "1":
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
    def show_record(self, id: str) -> None:  # noqa: A002 - the claim's id, as in record()
        """Print one recorded claim's verdict and how it was decided, right under the cell that decided it."""
        if id not in self.claims:
            raise KeyError(f"id {id!r} is not recorded; recorded: {sorted(self.claims)}")
        claim = self.claims[id]
        print(f"{id}: {claim.verdict}  [{claim.detail}]")

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
_BADGE = "padding:0 .3em;border-radius:3px;white-space:nowrap"


def seeds_text(claim: Claim) -> str:
    """``decided over seeds 0, 1, 2`` or ``rests on one seed``."""
    if len(claim.seeds) > 1:
        return "decided over seeds " + ", ".join(str(s) for s in claim.seeds)
    return "rests on one seed" + (f" ({claim.seeds[0]})" if claim.seeds else "")


def _criterion_html(c: Mapping[str, Any]) -> str:
    from neurips26.criteria import Criterion

    text = html.escape(Criterion.from_dict(c).text())
    if c.get("deciding") and c.get("close"):
        text = f'<span style="background:#fde2c4">{text}</span> <b>close call</b>'
    return text


def decided_html(claim: Claim) -> str:
    """The "How decided" cell: each criterion with its margin (per seed), or the bare detail."""
    if not claim.criteria:
        note = "<br><i>no margins recorded</i>" if claim.scale == "default" else ""
        return html.escape(claim.detail) + note
    lines: list[str] = []
    several = len(claim.seeds) > 1
    current: object = object()
    for c in claim.criteria:
        if several and c.get("seed") != current:
            current = c.get("seed")
            lines.append(f"<b>seed {html.escape(str(current))}</b>")
        lines.append(_criterion_html(c))
    return "<br>".join(lines)


def construction_html(claim: Claim) -> str:
    """The "by construction" flag with its sentence, or "" for a claim whose outcome was measured."""
    if not claim.by_construction:
        return ""
    return (
        f'<span class="neurips26-by-construction" style="background:#dfe7f5;color:#1d3461;{_BADGE}">'
        f"by construction</span> <small>{html.escape(claim.by_construction)}</small>"
    )


def verdict_html(claim: Claim) -> str:
    """The verdict badge, with the by-construction, close-call, changed-verdict and seed notes."""
    badge = f'<span style="{_VERDICT_STYLE[claim.verdict]};{_BADGE}">{html.escape(claim.verdict)}</span>'
    notes = [construction_html(claim)] if claim.by_construction else []
    if claim.close_call:
        notes.append(f'<span style="background:#fde2c4;{_BADGE}">close call</span>')
    if claim.changed:
        committed = "none" if claim.expected is None else claim.expected
        notes.append(
            f'<span class="neurips26-changed" style="background:#c62828;color:white;{_BADGE}">'
            f"changed: committed {html.escape(committed)}</span>"
        )
    notes.append(f"<small>scale: {html.escape(claim.scale)}; {html.escape(seeds_text(claim))}</small>")
    return badge + "<br>" + "<br>".join(notes)


def claims_html(claims: list[Claim], *, with_chapter: bool = False) -> str:
    """An HTML table of claims (used by the notebook display and by the book's scoreboard)."""
    head = ["Chapter"] if with_chapter else []
    head += [
        "Claim",
        "Paper",
        "Measured (ours)",
        "Verdict",
        "How decided (criterion: value, threshold, margin)",
    ]
    rows = []
    for c in claims:
        measured = "<br>".join(
            f"<b>{html.escape(k)}</b>: {html.escape(format_value(v))}" for k, v in c.measured.items()
        )
        cells = [html.escape(c.chapter)] if with_chapter else []
        cells += [
            f"<b>{html.escape(c.id)}</b><br>{html.escape(c.statement)}",
            html.escape(c.paper),
            measured,
            verdict_html(c),
            decided_html(c),
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
        notes = " (close call)" if c.close_call else ""
        if c.by_construction:
            notes += f" (by construction: {c.by_construction})"
        if c.changed:
            notes += f" (CHANGED: committed {c.expected})"
        lines.append(
            f"[{c.verdict}]{notes} {c.id}: {c.statement} | paper: {c.paper} | measured: {measured}"
            f" | {seeds_text(c)}"
        )
        if c.detail:
            lines.append(f"    {c.detail}")
    return "\n".join(lines) if lines else "(no claims recorded)"
