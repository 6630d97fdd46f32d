"""The rendered-page checker itself: it passes working pages and fails each kind of broken page.

A small site of hand-written HTML pages is checked once in headless Chromium. Positive controls
use the book's real assets (a figure from :func:`neurips26_book.plotly_mime.figure_html` with the
installed ``plotly.min.js``, the vendored widget manager with MathJax 3, offline MathJax), so a
regression in them shows up here too. Skipped, loudly, when Chromium is missing (set
``NEURIPS26_REQUIRE_BROWSER=1`` to make that an error instead, e.g. in CI).
"""

from __future__ import annotations

import html
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import check_pages  # noqa: E402

_MISSING = (
    "NOT CHECKED: Chromium was not found (apt-get install chromium, or set NEURIPS26_CHROMIUM); "
    "the rendered-page checker's own tests did not run"
)
if check_pages.find_chromium() is None:
    if os.environ.get("NEURIPS26_REQUIRE_BROWSER") == "1":
        pytest.fail(_MISSING + " and NEURIPS26_REQUIRE_BROWSER=1", pytrace=False)
    pytest.skip(_MISSING, allow_module_level=True)

from neurips26_book import (  # noqa: E402
    STATIC_DIR,
    WIDGETS_EMBED_JS,
    WIDGETS_MATHJAX3_SHIM_JS,
    plotly_js_path,
)
from neurips26_book.plotly_mime import figure_html  # noqa: E402

REMOTE_SCRIPT = "https://cdn.jsdelivr.net/npm/not-a-real-package@1.0.0/index.js"
REMOTE_FETCH = "https://example.org/data.json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MATHJAX_CONFIG = '<script>window.MathJax = {"options": {"processHtmlClass": "math"}}</script>'


def _page(body: str, head: str = "") -> str:
    head = f'<meta charset="utf-8"><title>t</title>{head}'
    return f"<!DOCTYPE html>\n<html><head>{head}</head>\n<body>{body}</body></html>\n"


def _mathjax_dir() -> Path | None:
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax"
    return path if (path / "tex-chtml.js").is_file() else None


def _slider_figure() -> dict:
    """A plotly figure whose slider animates frames: the kind the book's Explore notebooks show."""
    import plotly.graph_objects as go

    x = [i / 10 for i in range(30)]
    fig = go.Figure(
        data=[go.Scatter(x=x, y=[v**1 for v in x])],
        frames=[go.Frame(data=[go.Scatter(x=x, y=[v**p for v in x])], name=str(p)) for p in (1, 2, 3)],
    )
    steps = [
        {"label": str(p), "method": "animate", "args": [[str(p)], {"mode": "immediate"}]} for p in (1, 2, 3)
    ]
    fig.update_layout(
        title="x^p </script><!-- stays inside the JSON -->", height=300, sliders=[{"steps": steps}]
    )
    return json.loads(fig.to_json())


def _widget_page() -> str:
    """An IntSlider saved the way myst-nb saves it, rendered by the vendored manager next to MathJax 3."""
    import ipywidgets
    from ipywidgets.embed import embed_data

    data = embed_data(views=[ipywidgets.IntSlider(value=3, min=0, max=10, description=r"\(n\)")])
    head = (
        MATHJAX_CONFIG
        + '<script defer src="_static/mathjax/tex-chtml.js"></script>'
        + f'<script type="{WIDGET_STATE}">{json.dumps(data["manager_state"])}</script>'
        + f'<script src="_static/{WIDGETS_MATHJAX3_SHIM_JS}"></script>'
        + f'<script src="_static/{WIDGETS_EMBED_JS}"></script>'
    )
    view = json.dumps(data["view_specs"][0])
    body = f'<p><span class="math">\\(n\\)</span></p><script type="{WIDGET_VIEW}">{view}</script>'
    return _page(body, head)


def _write_site(root: Path, mathjax: Path | None) -> None:
    static = root / "_static"
    static.mkdir(parents=True)
    shutil.copy(plotly_js_path(), static / "plotly.min.js")
    for name in (WIDGETS_EMBED_JS, WIDGETS_MATHJAX3_SHIM_JS):
        shutil.copy(STATIC_DIR / name, static / name)
    for font in STATIC_DIR.glob("*.woff2"):
        shutil.copy(font, static / font.name)
    (static / "not_a_page.html").write_text(_page("<script>throw new Error('never loaded')</script>"))
    plotly_head = '<script src="../../_static/plotly.min.js"></script>'
    pages = {
        # Positive controls.
        "good.html": _page("<h1>Fine</h1><p>Nothing to see.</p>"),
        "chapters/demo/figure.html": _page(figure_html(_slider_figure(), "fig-ok"), plotly_head),
        # Broken pages, one fault each.
        "remote_script.html": _page(f'<script src="{REMOTE_SCRIPT}"></script><p>x</p>'),
        "remote_fetch.html": _page(f'<script>fetch("{REMOTE_FETCH}").catch(() => {{}});</script>'),
        "js_error.html": _page("<script>throw new Error('boom from the page');</script>"),
        "console_error.html": _page("<script>console.error('something broke');</script>"),
        "alert.html": _page("<script>alert('hello reader');</script><p>after the dialog</p>"),
        "missing_local.html": _page('<img src="_static/no-such-image.png" alt="x">'),
        "chapters/demo/plotly_not_drawn.html": _page(
            '<div id="fig-bad" class="neurips26-plotly" style="height:300px"></div>', plotly_head
        ),
        "plotly_without_js.html": _page(figure_html(_slider_figure(), "fig-nojs")),
        "widget_without_manager.html": _page(
            '<script type="application/vnd.jupyter.widget-view+json">'
            '{"version_major": 2, "version_minor": 0, "model_id": "0123abcd"}</script>'
        ),
        "math_without_mathjax.html": _page(
            '<p><span class="math notranslate nohighlight">\\(x^2\\)</span></p>'
        ),
    }
    if mathjax is not None:
        (static / "mathjax").symlink_to(mathjax, target_is_directory=True)
        mj = MATHJAX_CONFIG + '<script defer src="_static/mathjax/tex-chtml.js"></script>'
        pages["math.html"] = _page(
            '<p><span class="math">\\(e^{i\\pi} + 1 = 0\\)</span></p>'
            '<div class="math">\\[\\sum_i x_i^2\\]</div>',
            mj,
        )
        pages["math_tex_error.html"] = _page('<p><span class="math">\\(\\frac{1}\\)</span></p>', mj)
        pages["widget.html"] = _widget_page()
    for rel, text in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture(scope="module")
def mathjax() -> Path | None:
    return _mathjax_dir()


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory, mathjax: Path | None):
    site = tmp_path_factory.mktemp("site")
    shots = tmp_path_factory.mktemp("shots")
    _write_site(site, mathjax)
    report = check_pages.check_site(site, shots, jobs=2, timeout_s=30, render_wait_s=3)
    return report, {p.page: p for p in report.pages}, shots


def _problems(by_page: dict, page: str) -> str:
    return "\n".join(by_page[page].problems)


def test_only_pages_are_checked(checked) -> None:
    _, by_page, _ = checked
    assert "_static/not_a_page.html" not in by_page
    assert "good.html" in by_page and "chapters/demo/figure.html" in by_page


def test_working_pages_pass(checked) -> None:
    _, by_page, _ = checked
    for page in ("good.html", "chapters/demo/figure.html"):
        assert by_page[page].ok, f"{page}: {by_page[page].problems}"
    assert by_page["chapters/demo/figure.html"].figures == 1


def test_book_assets_render_offline(checked, mathjax: Path | None) -> None:
    """MathJax typesets, and a saved IntSlider renders with the vendored manager next to MathJax 3."""
    if mathjax is None:
        pytest.skip(
            "NOT CHECKED: sphinx-mathjax-offline is not installed (pip install sphinx-mathjax-offline)"
        )
    _, by_page, _ = checked
    for page in ("math.html", "widget.html"):
        assert by_page[page].ok, f"{page}: {by_page[page].problems}"
    assert by_page["math.html"].math == 2
    assert by_page["widget.html"].widgets == 1


def test_remote_script_fails(checked) -> None:
    report, by_page, _ = checked
    assert not by_page["remote_script.html"].ok
    assert f"request to an outside host: {REMOTE_SCRIPT}" in _problems(by_page, "remote_script.html")
    # The net log of the browser saw it as the site's request too.
    assert REMOTE_SCRIPT in report.netlog_external


def test_remote_fetch_from_script_fails(checked) -> None:
    report, by_page, _ = checked
    assert f"request to an outside host: {REMOTE_FETCH}" in _problems(by_page, "remote_fetch.html")
    assert REMOTE_FETCH in report.netlog_external


def test_javascript_errors_fail(checked) -> None:
    _, by_page, _ = checked
    assert "uncaught JavaScript exception: Error: boom from the page" in _problems(by_page, "js_error.html")
    assert "console.error: something broke" in _problems(by_page, "console_error.html")
    # A modal dialog is dismissed (it would block the check) and reported.
    assert "page opened a JavaScript alert dialog: hello reader" in _problems(by_page, "alert.html")


def test_missing_local_file_fails(checked) -> None:
    _, by_page, _ = checked
    assert "HTTP 404" in _problems(by_page, "missing_local.html")


def test_broken_plotly_figures_fail(checked) -> None:
    _, by_page, _ = checked
    assert "plotly figure did not draw (no svg.main-svg): #fig-bad" in _problems(
        by_page, "chapters/demo/plotly_not_drawn.html"
    )
    # Without plotly.js: the figure does not draw and the draw call throws.
    no_js = _problems(by_page, "plotly_without_js.html")
    assert "plotly figure did not draw (no svg.main-svg): #fig-nojs" in no_js
    assert "uncaught JavaScript exception" in no_js


def test_unrendered_widget_fails(checked) -> None:
    _, by_page, _ = checked
    assert "ipywidgets view not rendered: model 0123abcd" in _problems(by_page, "widget_without_manager.html")


def test_unrendered_or_broken_math_fails(checked, mathjax: Path | None) -> None:
    _, by_page, _ = checked
    assert "1 of 1 math elements left unrendered" in _problems(by_page, "math_without_mathjax.html")
    if mathjax is not None:
        assert "MathJax TeX error" in _problems(by_page, "math_tex_error.html")


def test_site_verdict_and_screenshots(checked) -> None:
    report, by_page, shots = checked
    assert not report.ok
    failing = {line.split(":", 1)[0] for line in report.failures()}
    assert "good.html" not in failing and "remote_script.html" in failing
    # Screenshots are kept for chapter pages only, as PNG files.
    assert by_page["chapters/demo/figure.html"].screenshot is not None
    png = shots / "chapters" / "demo" / "figure.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert by_page["good.html"].screenshot is None
    assert sorted(p.relative_to(shots).as_posix() for p in shots.rglob("*.png")) == [
        "chapters/demo/figure.png",
        "chapters/demo/plotly_not_drawn.png",
    ]


def test_command_line_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "index.html").write_text(_page("<p>ok</p>"))
    (bad / "index.html").write_text(_page(f'<script src="{html.escape(REMOTE_SCRIPT)}"></script>'))
    assert check_pages.main([str(good)]) == 0
    assert check_pages.main([str(bad)]) == 1
    assert check_pages.main([str(tmp_path / "not-built")]) == 2
    out = capsys.readouterr()
    assert "FAIL index.html" in out.out and "cannot run" in out.err
