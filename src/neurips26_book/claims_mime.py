"""myst-nb renderer for the claims output of :meth:`neurips26.claims.ClaimSet.show`.

The output carries the claims as JSON under :data:`neurips26.claims.MIME_TYPE`.
This renderer draws the table on the page and stores the claims in the Sphinx
environment (per document), where the scoreboard directive collects them. Because
it reads the notebook's outputs, it works for notebooks served from the execution
cache as well as freshly executed ones.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

from neurips26.claims import MIME_TYPE, Claim, claims_html

ENV_KEY = "neurips26_claims"


class ClaimsMimeRenderer:
    """Render claims JSON to an HTML table and record the claims for the scoreboard."""

    mime_priority_overrides = [
        ("html", MIME_TYPE, 1),
        ("dirhtml", MIME_TYPE, 1),
        ("singlehtml", MIME_TYPE, 1),
    ]

    @staticmethod
    def handle_mime(renderer: Any, data: Any, inline: bool) -> list[nodes.Element] | None:
        if inline or data.mime_type != MIME_TYPE:
            return None
        claims = [Claim.from_dict(c) for c in data.content.get("claims", [])]
        env = getattr(renderer.renderer, "sphinx_env", None)
        if env is not None:
            from myst_nb.sphinx_ import NbMetadataCollector

            store = NbMetadataCollector.get_doc_data(env)[env.docname].setdefault(ENV_KEY, {})
            for claim in claims:
                store[claim.id] = claim.to_dict()
        return [nodes.raw("", claims_html(claims), format="html", classes=["output", "neurips26-claims"])]
