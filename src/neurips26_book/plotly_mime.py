"""myst-nb renderer for plotly figures (``application/vnd.plotly.v1+json``) in the static HTML book.

plotly 7 displays a figure in a notebook as that MIME type only; myst-nb has no renderer for
it. This plugin (entry point group ``myst_nb.mime_renderers``) turns the figure's JSON into a
``<div>`` plus a ``<script>`` that calls ``Plotly.newPlot`` and then ``Plotly.addFrames``, so
sliders and buttons that animate frames keep working without a kernel. The page gets the
locally served ``_static/plotly.min.js`` (copied there by :mod:`neurips26_book`); nothing is
fetched from a CDN.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from docutils import nodes

PLOTLY_MIME_TYPE = "application/vnd.plotly.v1+json"
CSS_CLASS = "neurips26-plotly"
"""Class of every figure ``<div>``; the rendered-page check looks for it."""

DEFAULT_HEIGHT_PX = 450
"""plotly.js's own default figure height, used when the layout sets none."""

_COUNTER_KEY = "neurips26_plotly_count"
_HTML_BUILDERS = ("html", "dirhtml", "singlehtml")


def _script_safe_json(value: Any) -> str:
    """JSON that is safe inside ``<script>``: ``<`` is escaped, so no ``</script>`` or ``<!--`` can end it.

    NaN and Infinity (allowed by nbformat's reader) stay as the JavaScript globals of the same name.
    """
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")


def _size_px(layout: dict[str, Any], key: str) -> int | None:
    value = layout.get(key)
    return (
        int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
    )


def _figure_id(renderer: Any, data: Any) -> str:
    """A deterministic id, unique within the page: hash of the source and output position, plus a counter."""
    document = renderer.renderer.document
    count = document.get(_COUNTER_KEY, 0)
    document[_COUNTER_KEY] = count + 1
    source = str(document.get("source", ""))
    key = f"{source}:{data.cell_index}:{data.output_index}"
    return f"plotly-{hashlib.sha1(key.encode()).hexdigest()[:10]}-{count}"


def figure_html(figure: dict[str, Any], div_id: str) -> str:
    """The ``<div>`` and ``<script>`` that draw ``figure`` (keys data, layout, frames, config) with plotly.js.

    The script waits for ``window.load`` when plotly.js is not there yet, and reports a failure to
    draw through ``console.error`` so the rendered-page check sees it.
    """
    if not isinstance(figure, dict):
        raise TypeError(f"figure must be a dict (plotly's JSON), got {type(figure).__name__}")
    layout = figure.get("layout") or {}
    height = _size_px(layout, "height") or DEFAULT_HEIGHT_PX
    width = _size_px(layout, "width")
    style = f"height:{height}px;width:{f'{width}px' if width else '100%'};max-width:100%;"
    config = {"responsive": True, **(figure.get("config") or {})}
    payload = {
        "data": figure.get("data") or [],
        "layout": layout,
        "frames": figure.get("frames") or [],
        "config": config,
    }
    return (
        f'<div id="{div_id}" class="{CSS_CLASS}" style="{style}"></div>\n'
        '<script type="text/javascript">\n'
        "(function () {\n"
        f'  var id = "{div_id}";\n'
        f"  var fig = {_script_safe_json(payload)};\n"
        "  function draw() {\n"
        "    var gd = document.getElementById(id);\n"
        "    window.Plotly.newPlot(gd, fig.data, fig.layout, fig.config)\n"
        "      .then(function () {\n"
        "        if (fig.frames.length) { return window.Plotly.addFrames(gd, fig.frames); }\n"
        "      })\n"
        '      .catch(function (err) { console.error("plotly figure " + id + " failed to draw:", err); });\n'
        "  }\n"
        '  if (window.Plotly) { draw(); } else { window.addEventListener("load", draw); }\n'
        "})();\n"
        "</script>"
    )


class PlotlyMimeRenderer:
    """myst-nb MIME render plugin for plotly figures (see ``myst_nb.core.render.MimeRenderPlugin``).

    Its priority (1, lower wins) puts the plotly JSON ahead of ``text/html`` and images in the
    HTML builders; other builders (LaTeX, text) keep their fallbacks.
    """

    mime_priority_overrides = [(builder, PLOTLY_MIME_TYPE, 1) for builder in _HTML_BUILDERS]

    @staticmethod
    def handle_mime(renderer: Any, data: Any, inline: bool) -> list[nodes.Element] | None:
        """Render a plotly figure as a raw HTML block; ``None`` for other types and inline (it is a block)."""
        if inline or data.mime_type != PLOTLY_MIME_TYPE:
            return None
        from neurips26_book import PLOTLY_JS

        figure = data.content if isinstance(data.content, dict) else json.loads(data.string)
        # plotly.js goes into this page's <head> only (myst-nb's per-page js files).
        renderer.add_js_file("neurips26_plotly_js", PLOTLY_JS, {})
        html = figure_html(figure, _figure_id(renderer, data))
        return [nodes.raw("", html, format="html", classes=["output", "plotly"])]
