"""Every page of the built book renders in headless Chromium, offline, without errors.

Runs :func:`check_pages.check_site` on ``$NEURIPS26_HTML_DIR`` (default ``_build/html`` at the
repository root); screenshots of the chapter pages go to ``$NEURIPS26_SCREENSHOTS_DIR`` (or
``$NEURIPS26_SCREENSHOTS``) when set.
Skipped, loudly, when Chromium is missing or the book has not been built; with
``NEURIPS26_REQUIRE_BROWSER=1`` (CI after ``make book``) either of those is an error instead.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import check_pages  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


def _site_dir() -> Path:
    return Path(os.environ.get("NEURIPS26_HTML_DIR") or REPO_ROOT / "_build" / "html")


def _not_checked(reason: str) -> None:
    message = f"NOT CHECKED: {reason}; the rendered book pages were NOT verified"
    if os.environ.get("NEURIPS26_REQUIRE_BROWSER") == "1":
        pytest.fail(message + " (NEURIPS26_REQUIRE_BROWSER=1)", pytrace=False)
    pytest.skip(message)


def test_every_page_renders_offline(tmp_path: Path) -> None:
    chromium = check_pages.find_chromium()
    if chromium is None:
        _not_checked("Chromium was not found (apt-get install chromium, or set NEURIPS26_CHROMIUM)")
    site = _site_dir()
    if not (site / "index.html").is_file():
        _not_checked(f"the book is not built ({site / 'index.html'} is missing; run `make book`)")
    shots_env = os.environ.get("NEURIPS26_SCREENSHOTS_DIR") or os.environ.get("NEURIPS26_SCREENSHOTS")
    shots = Path(shots_env) if shots_env else tmp_path / "screenshots"
    report = check_pages.check_site(site, shots, jobs=2, chromium=chromium)
    assert report.pages, f"no HTML pages found under {site}"
    failures = report.failures()
    assert report.ok and not failures, (
        f"{len(failures)} problems on the rendered pages of {site}:\n" + "\n".join(failures)
    )


_MATPLOTLIB_CALL = re.compile(r"plt\.(subplots|figure|show|imshow|plot)\(|\.subplots\(")


def test_matplotlib_figures_reach_the_pages() -> None:
    """A notebook that draws with matplotlib shows at least one PNG on its page.

    Guards against a non-inline backend (e.g. ``MPLBACKEND=Agg`` exported by the build): the notebooks
    then execute without error but every matplotlib figure silently disappears from the book.
    """
    site = _site_dir()
    if not (site / "index.html").is_file():
        _not_checked(f"the book is not built ({site / 'index.html'} is missing; run `make book`)")
    sources = sorted(REPO_ROOT.glob("chapters/*/[0-9]*.md")) + sorted(REPO_ROOT.glob("appendix/*.md"))
    drawing = [p for p in sources if _MATPLOTLIB_CALL.search(p.read_text(encoding="utf-8"))]
    assert drawing, "no notebook draws with matplotlib: the pattern above is out of date"
    missing = []
    for source in drawing:
        page = site / source.relative_to(REPO_ROOT).with_suffix(".html")
        html = page.read_text(encoding="utf-8") if page.is_file() else ""
        if not re.search(r"<img[^>]+src=\"[^\"]+\.png\"|src=\"data:image/png", html):
            missing.append(str(page.relative_to(site)))
    assert not missing, f"pages without any matplotlib figure (is MPLBACKEND forcing Agg?): {missing}"


FIRST_SCREENS = (
    "book/scoreboard.html",
    "chapters/01-thwf/01-idea.html",
    "chapters/10-specblock/01-idea.html",
    "chapters/16-spatialclaw/01-idea.html",
)
"""Pages whose first window is kept at 1280 and 400 px (CI uploads the screenshots folder)."""


def _built_site_and_browser() -> tuple[Path, str]:
    chromium = check_pages.find_chromium()
    if chromium is None:
        _not_checked("Chromium was not found (apt-get install chromium, or set NEURIPS26_CHROMIUM)")
    site = _site_dir()
    if not (site / "book" / "scoreboard.html").is_file():
        _not_checked(f"the book is not built ({site / 'book' / 'scoreboard.html'} is missing)")
    return site, chromium


def test_the_scoreboard_fits_the_text_column_at_1280_and_400_px() -> None:
    """Nothing on the scoreboard (the book's, and each chapter's on its landing page) is cut off or
    scrolls sideways, on a laptop or a phone, with every row's details open."""
    import layout

    site, chromium = _built_site_and_browser()
    found = layout.check_fit(site, ["book/scoreboard.html"], selector=".n26-board", chromium=chromium)
    landing = [str(p.relative_to(site)) for p in sorted(site.glob("chapters/*/index.html"))]
    found |= layout.check_fit(site, landing, selector=".n26-board", whole_page=False, chromium=chromium)
    problems = [f"{page} at {width} px: {p}" for (page, width), ps in found.items() for p in ps]
    assert not problems, "\n".join(problems)


def test_first_screens_are_kept_for_review(tmp_path: Path) -> None:
    """The first window of the scoreboard and of three notebooks, at 1280 and 400 px, as PNGs."""
    import layout

    site, chromium = _built_site_and_browser()
    shots_env = os.environ.get("NEURIPS26_SCREENSHOTS_DIR") or os.environ.get("NEURIPS26_SCREENSHOTS")
    out = (Path(shots_env) if shots_env else tmp_path) / "first-screens"
    pages = [p for p in FIRST_SCREENS if (site / p).is_file()]
    assert len(pages) == len(FIRST_SCREENS), f"missing pages: {set(FIRST_SCREENS) - set(pages)}"
    written = layout.first_screens(site, pages, out, chromium=chromium)
    assert len(written) == 2 * len(pages) and all(p.stat().st_size > 5000 for p in written)


def _numbered_chapters() -> list[tuple[str, str]]:
    """``(index page, first notebook)`` of every chapter in a numbered part of the toc, in book order."""
    import yaml

    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for chapter in part.get("chapters", []):
            sections = chapter.get("sections") or []
            if sections:
                out.append((chapter["file"], sections[0]["file"]))
    return out


def test_the_first_notebook_of_chapter_n_is_numbered_n_1() -> None:
    """A chapter's landing page has unnumbered headings, so its notebooks are N.1, N.2, ... (not N.8)."""
    site = _site_dir()
    if not (site / "index.html").is_file():
        _not_checked(f"the book is not built ({site / 'index.html'} is missing; run `make book`)")
    wrong = []
    for n, (index, first) in enumerate(_numbered_chapters(), start=1):
        page = (site / first).with_suffix(".html").read_text(encoding="utf-8")
        found = re.search(r'<h1><span class="section-number">([\d.]+) </span>', page)
        number = found.group(1) if found else "(none)"
        if number != f"{n}.1.":
            wrong.append(f"{first}: numbered {number}, expected {n}.1. (headings of {index} take numbers?)")
    assert not wrong, "\n".join(wrong)
