"""Layout checks of rendered pages at a reader's window widths, with first-screen screenshots.

:func:`check_fit` opens pages in headless Chromium (:class:`check_pages.Browser`) at each width, opens every
``<details>``, and reports anything that would be cut off: a page that scrolls sideways, an element that
ends past the text column, or an element that clips its own content. :func:`first_screens` writes what a
reader sees before scrolling (one window of each page, at each width).
"""

from __future__ import annotations

import base64
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from check_pages import Browser, CheckError, find_chromium, serve  # noqa: E402

DESKTOP = (1280, 900)
PHONE = (400, 800)
"""Window sizes (CSS px): a laptop at 1280 px, a phone held upright at 400 px."""

# Opens every <details>, then lists what is cut off inside ``selector`` (the page's article when empty),
# and, with ``wholePage``, whether the page as a whole scrolls sideways.
FIT_JS = r"""
((selector, wholePage) => {
  for (const d of document.querySelectorAll("details")) d.open = true;
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.classList.length ? "." + Array.from(el.classList).slice(0, 2).join(".") : "")
    + ' "' + (el.textContent || "").trim().slice(0, 40) + '"';
  const problems = [];
  const doc = document.documentElement;
  if (wholePage && doc.scrollWidth > doc.clientWidth + 1) {
    problems.push("the page scrolls sideways: " + doc.scrollWidth + " px of content in a "
      + doc.clientWidth + " px window");
  }
  const column = document.querySelector("article.bd-article") || document.querySelector("main")
    || document.body;
  const root = selector ? document.querySelector(selector) : column;
  if (!root) return {problems: ["nothing on the page matches " + selector], checked: 0};
  const limit = column.getBoundingClientRect().right + 1;
  const elements = [root, ...root.querySelectorAll("*")];
  for (const el of elements) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.right > limit) {
      problems.push(describe(el) + " ends at " + Math.round(box.right) + " px, past the text column ("
        + Math.round(limit) + " px)");
    } else if (getComputedStyle(el).overflowX !== "visible" && el.scrollWidth > el.clientWidth + 1) {
      problems.push(describe(el) + " cuts off its content (" + el.scrollWidth + " px in "
        + el.clientWidth + " px)");
    }
    if (problems.length >= 10) break;
  }
  return {problems: problems, checked: elements.length};
})
"""


def _open(browser: Browser, base_url: str, page: str, size: tuple[int, int]) -> str:
    """A new tab showing ``page`` at ``size``, after its load event; returns the session id."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    browser.send("Page.enable", session=session)
    browser.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session)
    width, height = size
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        session=session,
    )
    nav = browser.send("Page.navigate", {"url": base_url + page}, session=session)
    if nav.get("errorText"):
        raise CheckError(f"{page}: navigation failed: {nav['errorText']}")
    if not browser.wait_event(
        session, "Page.lifecycleEvent", browser.timeout_s, name="load", loaderId=nav.get("loaderId")
    ):
        raise CheckError(f"{page}: did not load within {browser.timeout_s:.0f} s")
    time.sleep(1.0)  # fonts, MathJax and the theme's own scripts settle the layout
    return target + "|" + session


def _close(browser: Browser, handle: str) -> None:
    browser.send("Target.closeTarget", {"targetId": handle.split("|")[0]})


def _run(site_dir: Path, work, chromium: str | None, timeout_s: float):
    chromium = chromium or find_chromium()
    if chromium is None:
        raise CheckError("Chromium not found: apt-get install chromium, or set NEURIPS26_CHROMIUM")
    with tempfile.TemporaryDirectory(prefix="layout_") as tmp, serve(Path(site_dir).resolve()) as base_url:
        browser = Browser(chromium, Path(tmp), timeout_s)
        try:
            return work(browser, base_url)
        finally:
            browser.close()


def check_fit(
    site_dir: Path | str,
    pages: Sequence[str],
    sizes: Sequence[tuple[int, int]] = (DESKTOP, PHONE),
    *,
    selector: str = "",
    whole_page: bool = True,
    chromium: str | None = None,
    timeout_s: float = 30.0,
) -> dict[tuple[str, int], list[str]]:
    """What is cut off on each page at each window width (empty lists: everything fits); with
    ``whole_page`` False only inside ``selector`` (the rest of the page is not this check's concern)."""

    def work(browser: Browser, base_url: str) -> dict[tuple[str, int], list[str]]:
        found: dict[tuple[str, int], list[str]] = {}
        for page in pages:
            for size in sizes:
                handle = _open(browser, base_url, page, size)
                try:
                    reply = browser.send(
                        "Runtime.evaluate",
                        {
                            "expression": f"({FIT_JS})({selector!r}, {str(whole_page).lower()})",
                            "returnByValue": True,
                        },
                        session=handle.split("|")[1],
                    )
                finally:
                    _close(browser, handle)
                if "exceptionDetails" in reply:
                    raise CheckError(f"{page}: the layout script failed: {reply['exceptionDetails']}")
                found[(page, size[0])] = list(reply.get("result", {}).get("value", {}).get("problems", []))
        return found

    return _run(Path(site_dir), work, chromium, timeout_s)


def first_screens(
    site_dir: Path | str,
    pages: Sequence[str],
    out_dir: Path | str,
    sizes: Sequence[tuple[int, int]] = (DESKTOP, PHONE),
    *,
    chromium: str | None = None,
    timeout_s: float = 30.0,
) -> list[Path]:
    """PNGs of each page's first window at each size: ``out_dir/<page>-<width>px.png``."""
    out = Path(out_dir)

    def work(browser: Browser, base_url: str) -> list[Path]:
        written = []
        for page in pages:
            for size in sizes:
                handle = _open(browser, base_url, page, size)
                try:
                    session = handle.split("|")[1]
                    shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
                finally:
                    _close(browser, handle)
                path = out / f"{Path(page).with_suffix('')}-{size[0]}px.png"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(base64.b64decode(shot["data"]))
                written.append(path)
        return written

    return _run(Path(site_dir), work, chromium, timeout_s)
