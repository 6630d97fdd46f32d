"""The ``{claims-scoreboard}`` directive: every chapter's claims in one table.

A chapter's ``index.md`` uses ``{claims-scoreboard} 01-thwf`` (one chapter); the
book's scoreboard page uses it with no argument (all chapters). The directive
leaves a placeholder; after every notebook has been read (and executed or loaded
from the cache) a post-transform replaces it with the table built from the claims
that :mod:`neurips26_book.claims_mime` stored in the environment.

The summary above the rows counts the verdicts, the close calls (a deciding criterion
within 5 % of its threshold) and the claims decided over several seeds, and names every
default-scale verdict that differs from the committed one; the book's scoreboard adds a
bar per chapter, and every claim gets one compact row with its measurements folded
beneath (:mod:`neurips26_book.scoreboard_layout`). When the build finishes, the
extension writes every claim to ``claims.json`` in the output folder (read by
:mod:`neurips26_book.verify`, ``make verify``) and lists the changed verdicts in the log:
the book still builds, so a reader always gets it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from neurips26.claims import VERDICTS, Claim
from neurips26_book.claims_mime import ENV_KEY
from neurips26_book.scoreboard_layout import board_html

CLAIMS_JSON = "claims.json"
"""File in the HTML output folder holding every claim of the build (a list of :class:`Claim` dicts)."""

_HAS_SCOREBOARD = "neurips26_has_scoreboard"


class ScoreboardNode(nodes.General, nodes.Element):
    """Placeholder replaced by the claims table once all documents are read."""


class ClaimsScoreboard(SphinxDirective):
    """Insert the claims table of one chapter (argument) or of the whole book (no argument)."""

    optional_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        from myst_nb.sphinx_ import NbMetadataCollector

        NbMetadataCollector.set_doc_data(self.env, self.env.docname, _HAS_SCOREBOARD, True)
        node = ScoreboardNode()
        node["chapter"] = self.arguments[0] if self.arguments else None
        return [node]


def collect_claims(env: Any, chapter: str | None = None) -> list[Claim]:
    """All claims stored in the environment, optionally of one chapter, sorted by chapter then document."""
    from myst_nb.sphinx_ import NbMetadataCollector

    found: list[Claim] = []
    for _docname, data in sorted(NbMetadataCollector.get_doc_data(env).items()):
        for claim in data.get(ENV_KEY, {}).values():
            c = Claim.from_dict(claim)
            if chapter is None or c.chapter == chapter:
                found.append(c)
    return sorted(found, key=lambda c: c.chapter)


def _summary(claims: list[Claim]) -> str:
    counts = Counter(c.verdict for c in claims)
    parts = [f"{counts.get(v, 0)} {v}" for v in VERDICTS]
    scales = sorted({c.scale for c in claims})
    close = [c.id for c in claims if c.close_call]
    seeded = sum(len(c.seeds) > 1 for c in claims)
    text = (
        f"<p><b>{len(claims)} claims</b>: {', '.join(parts)} (scale: {', '.join(scales)}). "
        f"{len(close)} close call{'s' * (len(close) != 1)} (a deciding criterion within 5 % of its threshold)"
        f"; {seeded} decided over several seeds, the others rest on one seed.</p>"
    )
    changed = [c for c in claims if c.changed]
    if changed:
        items = "".join(
            f"<li><b>{c.chapter} / {c.id}</b>: measured <i>{c.verdict}</i>, committed "
            f"<i>{c.expected or 'none'}</i></li>"
            for c in changed
        )
        text += (
            '<div class="admonition warning neurips26-changed-verdicts"><p class="admonition-title">'
            f"{len(changed)} verdict{'s' * (len(changed) != 1)} differ from the committed ones</p>"
            f"<ul>{items}</ul><p>This build measured them on this machine; <code>make verify</code> "
            "fails on them.</p></div>"
        )
    return text


class ScoreboardPostTransform(SphinxPostTransform):
    default_priority = 8

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(ScoreboardNode)):
            claims = collect_claims(self.env, node["chapter"])
            if not claims:
                html = "<p><i>No claims recorded yet (the notebooks have not been executed).</i></p>"
            else:
                html = _summary(claims) + board_html(claims, with_chapter=node["chapter"] is None)
            node.replace_self(nodes.raw("", html, format="html"))


def _update_scoreboards(app: Sphinx, env: Any) -> list[str]:
    """Re-write pages holding a scoreboard whenever anything was re-read (claims may have changed)."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return [doc for doc, data in NbMetadataCollector.get_doc_data(env).items() if data.get(_HAS_SCOREBOARD)]


def _write_claims(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: write ``claims.json`` and list the verdicts that differ from the committed ones."""
    from sphinx.util import logging

    if exception is not None or app.builder.format != "html":
        return
    claims = collect_claims(app.env)
    path = Path(app.outdir) / CLAIMS_JSON
    path.write_text(json.dumps([c.to_dict() for c in claims], indent=1, ensure_ascii=False), encoding="utf-8")
    logger = logging.getLogger(__name__)
    changed = [c for c in claims if c.changed]
    logger.info(f"[claims] {len(claims)} claims written to {path}")
    for c in changed:  # info, not a warning: -W must not turn a measured verdict into a failed build
        logger.info(f"[claims] CHANGED {c.chapter}/{c.id}: measured {c.verdict!r}, committed {c.expected!r}")
    if changed:
        logger.info(f"[claims] {len(changed)} verdict(s) differ from the committed ones (make verify fails)")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(ScoreboardNode)
    app.add_directive("claims-scoreboard", ClaimsScoreboard)
    app.add_post_transform(ScoreboardPostTransform)
    app.connect("env-updated", _update_scoreboards)
    app.connect("build-finished", _write_claims)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
