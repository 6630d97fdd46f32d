"""Sphinx extension of the book: every asset served locally, pages that load cleanly, the claims scoreboard.

List ``neurips26_book`` under ``sphinx: extra_extensions`` in ``_config.yml``. Its ``setup``

* loads ``sphinx-mathjax-offline`` (MathJax 3 copied into ``_static/mathjax``, no CDN);
* puts the installed plotly package's own ``plotly.min.js`` and this package's ``static/``
  folder (the vendored ``@jupyter-widgets/html-manager`` bundle, its fonts, a MathJax 3 shim)
  on ``html_static_path``, so Sphinx copies them into ``_static`` before it writes any page;
* points myst-nb's ``nb_ipywidgets_js`` at the vendored bundle (when the book left it at
  myst-nb's CDN default), so pages with widgets load nothing from a CDN;
* removes two console errors every Jupyter Book 1.x page otherwise has (see
  :func:`_clean_page_scripts`), so that the rendered-page check can treat any console error as a defect;
* registers the claims scoreboard (:mod:`neurips26_book.scoreboard`) and the ``{paper}`` role that marks a
  number typed from the paper (:mod:`neurips26_book.paper_role`);
* makes the kernel channels the executing notebooks use wait in short slices
  (:mod:`neurips26_book.kernel_polling`), so a missed wake-up cannot stall the build;
* keys each notebook's execution on the library code it can reach
  (:mod:`neurips26_book.library_fingerprint`), so a library change re-executes only the notebooks it
  can affect.

``plotly.min.js`` is added only to pages that hold a plotly figure: the MIME renderer in
:mod:`neurips26_book.plotly_mime` registers it per page through myst-nb.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

STATIC_DIR = Path(__file__).parent / "static"
"""Vendored browser assets, copied verbatim into the site's ``_static`` folder."""

HTML_MANAGER_VERSION = "1.0.15"
"""npm version of ``@jupyter-widgets/html-manager`` whose ``dist/embed.js`` is vendored (ipywidgets 8.1)."""

WIDGETS_EMBED_JS = f"jupyter-widgets-html-manager-{HTML_MANAGER_VERSION}-embed.js"
"""File name of the vendored non-AMD widget manager, relative to ``_static``."""

WIDGETS_MATHJAX3_SHIM_JS = "ipywidgets-mathjax3-shim.js"
"""Loaded before the widget manager: gives MathJax 3 the ``MathJax.Hub.Queue`` the manager calls."""

PLOTLY_JS = "plotly.min.js"
"""File name of plotly.js inside the plotly package's ``package_data`` and in ``_static``."""

DEFAULT_COLOR_MODE = "auto"
"""pydata-sphinx-theme's ``default_mode`` when the book sets none (light/dark follows the reader's system)."""


def plotly_js_path() -> Path:
    """Path of the ``plotly.min.js`` shipped with the installed plotly package (its own plotly.js)."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not path.is_file():
        raise FileNotFoundError(f"plotly {plotly.__version__} has no {path}; cannot serve plotly.js offline")
    return path


def local_ipywidgets_js() -> dict[str, dict[str, str]]:
    """Value for myst-nb's ``nb_ipywidgets_js``: the MathJax 3 shim, then the vendored widget manager.

    No require.js and no CDN: the non-AMD ``embed.js`` carries the base, controls and output
    widgets itself (third-party widget libraries cannot be loaded offline).
    """
    return {WIDGETS_MATHJAX3_SHIM_JS: {}, WIDGETS_EMBED_JS: {}}


def _add_static_paths(app: Any, config: Any) -> None:
    """``config-inited``: serve vendored assets and plotly.js from ``_static``; keep widgets off the CDN."""
    from myst_nb.core.config import ipywidgets_js_factory

    static_paths = list(config.html_static_path)
    for path in (str(STATIC_DIR), str(plotly_js_path())):
        if path not in static_paths:
            static_paths.append(path)
    config.html_static_path = static_paths
    # Replace only myst-nb's default (require.js + embed-amd.js from cdnjs/jsdelivr); a value the
    # book sets itself in _config.yml is respected.
    if dict(config.nb_ipywidgets_js) == ipywidgets_js_factory():
        config.nb_ipywidgets_js = local_ipywidgets_js()


def _script_key(script: Any) -> tuple[Any, ...]:
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {})
    return (filename, getattr(script, "priority", 500), tuple(sorted(attributes.items())))


def _clean_page_scripts(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context``: drop duplicated inline scripts and give the theme a colour mode.

    * Sphinx 7.4 registers an inline (body-only) script added after the builder started twice
      (once as filename ``None``, once as ``''``); sphinx-thebe's ``const THEBE_JS_URL = ...`` then
      throws "Identifier 'THEBE_JS_URL' has already been declared" on every page. Identical
      scripts are kept once.
    * pydata-sphinx-theme logs "Got invalid theme mode" on a reader's first visit unless the
      ``default_mode`` context value is set; it becomes :data:`DEFAULT_COLOR_MODE` when the book
      leaves it unset (``html_context: {default_mode: ...}`` in ``_config.yml`` wins).
    """
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        seen: set[tuple[Any, ...]] = set()
        unique = []
        for script in scripts:
            key = _script_key(script)
            if key not in seen:
                seen.add(key)
                unique.append(script)
        scripts[:] = unique
    if not context.get("default_mode"):
        context["default_mode"] = DEFAULT_COLOR_MODE


def setup(app: Any) -> dict[str, Any]:
    """Register the book's offline assets, the page clean-ups and the claims scoreboard with Sphinx."""
    app.setup_extension("myst_nb")
    app.setup_extension("sphinx-mathjax-offline")
    # sphinx-mathjax-offline 0.0.2 declares nothing, so a parallel build (-j) would warn (an error
    # under -W). It only sets mathjax_path and copies files when the build finishes: safe.
    mathjax_offline = app.extensions.get("sphinx-mathjax-offline")
    if mathjax_offline is not None and mathjax_offline.parallel_read_safe is None:
        mathjax_offline.parallel_read_safe = True
    # After myst-nb's own config-inited handlers (default priority 500).
    app.connect("config-inited", _add_static_paths, priority=900)
    # After every other handler (myst-nb adds its per-page scripts at the default priority).
    app.connect("html-page-context", _clean_page_scripts, priority=900)

    from neurips26_book.kernel_polling import install as install_sliced_polling
    from neurips26_book.library_fingerprint import setup as setup_library_fingerprint
    from neurips26_book.paper_role import setup as setup_paper_role
    from neurips26_book.scoreboard import setup as setup_scoreboard

    setup_scoreboard(app)
    setup_paper_role(app)
    setup_library_fingerprint(app)
    install_sliced_polling()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
