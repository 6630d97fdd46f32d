"""The scoreboard's HTML: a verdict figure per chapter, then one compact row per claim.

Each row gives the claim, the paper's number, our headline number, the verdict with its flags (by
construction, close call, changed) and the margin of the criterion closest to flipping with the seeds;
the full measurements and every criterion are folded under the row. The layout is a CSS grid that wraps
text instead of scrolling, and stacks each row's cells (with their labels) on a narrow screen, so nothing
is cut off at the text column's edge, at 1280 px or on a phone.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from neurips26.claims import (
    VERDICTS,
    Claim,
    construction_html,
    decided_html,
    format_value,
    seeds_text,
)
from neurips26.criteria import Criterion

NARROW_PX = 640
"""Below this page width each row's cells stack, each with its label."""

_COLORS = {"reproduced": "#4d9221", "partly": "#e6ab02", "not reproduced": "#c51b7d"}
_TEXT = {"reproduced": "white", "partly": "#222", "not reproduced": "white"}

STYLE = f"""<style>
.n26-board {{font-size: .85em; line-height: 1.35;}}
.n26-board * {{box-sizing: border-box;}}
.n26-row {{display: grid; grid-template-columns: minmax(0, 2.3fr) minmax(0, 1.5fr) minmax(0, 1.5fr)
  minmax(0, 1.2fr); gap: .15em .9em; padding: .45em .2em; border-top: 1px solid #d0d7de;}}
.n26-row > * {{min-width: 0; overflow-wrap: anywhere;}}
.n26-row details {{grid-column: 1 / -1;}}
.n26-row details summary {{cursor: pointer; color: #57606a;}}
.n26-head {{font-weight: 600; border-top: none;}}
.n26-label {{display: none; font-weight: 600;}}
.n26-badge {{padding: 0 .3em; border-radius: 3px; white-space: nowrap;}}
.n26-bars {{margin: .6em 0 1em 0;}}
.n26-bar-row {{display: flex; align-items: center; gap: .6em; margin: .15em 0;}}
.n26-bar-label {{flex: 0 0 9.5em; overflow-wrap: anywhere;}}
.n26-bar {{display: flex; flex: 1 1 auto; min-width: 0; height: 1.35em;}}
.n26-bar span {{display: flex; align-items: center; justify-content: center; overflow: hidden;
  font-size: .85em;}}
.n26-legend span {{margin-right: 1em; white-space: nowrap;}}
@media (max-width: {NARROW_PX}px) {{
  .n26-row {{grid-template-columns: minmax(0, 1fr);}}
  .n26-head {{display: none;}}
  .n26-label {{display: inline;}}
  .n26-bar-label {{flex-basis: 6.5em;}}
}}
</style>"""


def _criteria(claim: Claim) -> list[Criterion]:
    return [Criterion.from_dict(c) for c in claim.criteria]


def tightest(claim: Claim) -> tuple[Criterion, Mapping[str, Any]] | None:
    """The criterion closest to flipping: the smallest |relative margin| among the deciding criteria (all
    criteria when none decides alone), over every seed; None when every criterion is an exact fact."""
    rows = [(c, d) for c, d in zip(_criteria(claim), claim.criteria, strict=True) if not c.exact]
    deciding = [(c, d) for c, d in rows if d.get("deciding")]
    pool = deciding or rows
    finite = [(c, d) for c, d in pool if c.relative_margin is not None and math.isfinite(c.relative_margin)]
    if not finite:
        return None
    return min(finite, key=lambda cd: abs(cd[0].relative_margin))  # type: ignore[arg-type]


def headline_text(claim: Claim) -> str:
    """Our number in a few words: the chapter's own headline, else the criterion closest to flipping."""
    if claim.headline:
        return claim.headline
    found = tightest(claim)
    if found is None:
        if not claim.criteria:
            return ""
        held = sum(bool(d.get("passed")) for d in claim.criteria)
        return f"exact facts: {held} of {len(claim.criteria)} hold"
    c, _ = found
    sign = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}[c.direction]
    return f"{c.name}: {c.value:.4g} ({sign} {c.threshold:.4g})"


def margin_text(claim: Claim) -> str:
    """``margin +5.5 %`` of the criterion closest to flipping (with its seed when several), or ``exact``."""
    found = tightest(claim)
    if found is None:
        return "exact criteria" if claim.criteria else "no margins recorded"
    c, d = found
    seed = f" (seed {d['seed']})" if len(claim.seeds) > 1 and d.get("seed") is not None else ""
    return f"margin {100 * c.relative_margin:+.1f} %{seed}"  # type: ignore[operator]


def _badge(text: str, background: str, color: str, cls: str = "") -> str:
    extra = f" {cls}" if cls else ""
    return (
        f'<span class="n26-badge{extra}" style="background:{background};color:{color}">'
        f"{html.escape(text)}</span>"
    )


def verdict_cell(claim: Claim) -> str:
    """The verdict badge and its flags, then the margin and the seeds."""
    parts = [_badge(claim.verdict, _COLORS[claim.verdict], _TEXT[claim.verdict])]
    if claim.close_call:
        parts.append(_badge("close call", "#fde2c4", "#5c3300"))
    if claim.changed:
        committed = "none" if claim.expected is None else claim.expected
        parts.append(_badge(f"changed: committed {committed}", "#c62828", "white", "neurips26-changed"))
    flags = " ".join(parts)
    construction = f"<br>{construction_html(claim)}" if claim.by_construction else ""
    notes = html.escape(f"{margin_text(claim)}; {seeds_text(claim)}")
    return f"{flags}{construction}<br><small>{notes}</small>"


def _cell(label: str, body: str) -> str:
    return f'<div><span class="n26-label">{html.escape(label)}: </span>{body}</div>'


def claim_row(claim: Claim, *, with_chapter: bool) -> str:
    """One claim: four cells, and its measurements and criteria folded beneath."""
    name = f"{html.escape(claim.chapter)} · " if with_chapter else ""
    measured = "<br>".join(
        f"<b>{html.escape(k)}</b>: {html.escape(format_value(v))}" for k, v in claim.measured.items()
    )
    folded = (
        "<details><summary>all measurements and criteria</summary>"
        f'<div style="padding:.3em 0 .2em 1em"><p><b>Measured</b> (scale {html.escape(claim.scale)})'
        f"<br>{measured}</p><p><b>How decided</b><br>{decided_html(claim)}</p></div></details>"
    )
    return (
        f'<div class="n26-row" id="claim-{html.escape(claim.chapter)}-{html.escape(claim.id)}">'
        + _cell("Claim", f"{name}<b>{html.escape(claim.id)}</b><br>{html.escape(claim.statement)}")
        + _cell("Paper", html.escape(claim.paper))
        + _cell("Ours", html.escape(headline_text(claim)))
        + _cell("Verdict", verdict_cell(claim))
        + folded
        + "</div>"
    )


def chapter_bars(claims: list[Claim]) -> str:
    """A small figure: per chapter, a bar of its reproduced / partly / not reproduced claims (one scale)."""
    chapters = sorted({c.chapter for c in claims})
    counts = {ch: Counter(c.verdict for c in claims if c.chapter == ch) for ch in chapters}
    widest = max(sum(n.values()) for n in counts.values())
    legend = "".join(
        f'<span><span class="n26-badge" style="background:{_COLORS[v]}">&nbsp;&nbsp;</span> {v}</span>'
        for v in VERDICTS
    )
    rows = []
    for ch in chapters:
        segments = "".join(
            f'<span style="width:{100 * counts[ch][v] / widest:.2f}%;background:{_COLORS[v]};'
            f'color:{_TEXT[v]}" title="{counts[ch][v]} {v}">{counts[ch][v]}</span>'
            for v in VERDICTS
            if counts[ch][v]
        )
        label = f"{html.escape(ch)} ({sum(counts[ch].values())})"
        rows.append(
            f'<div class="n26-bar-row"><span class="n26-bar-label">{label}</span>'
            f'<div class="n26-bar" role="img" aria-label="{html.escape(ch)}: '
            + ", ".join(f"{counts[ch][v]} {v}" for v in VERDICTS)
            + f'">{segments}</div></div>'
        )
    return f'<div class="n26-bars"><div class="n26-legend">{legend}</div>{"".join(rows)}</div>'


def board_html(claims: list[Claim], *, with_chapter: bool) -> str:
    """The verdict figure (whole book only) and the compact rows, with the layout's stylesheet."""
    head = (
        '<div class="n26-row n26-head"><div>Claim</div><div>Paper</div><div>Ours</div>'
        "<div>Verdict, margin, seeds</div></div>"
    )
    rows = "".join(claim_row(c, with_chapter=with_chapter) for c in claims)
    figure = chapter_bars(claims) if with_chapter else ""
    return f'{STYLE}<div class="n26-board">{figure}{head}{rows}</div>'
