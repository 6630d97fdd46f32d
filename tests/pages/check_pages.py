#!/usr/bin/env python
"""Load every page of the built book in headless Chromium and fail on what a reader would see broken.

    python tests/pages/check_pages.py _build/html --screenshots _build/screenshots

The site is served from 127.0.0.1 (a ``http.server`` in this process, on a free port) and each page is
opened in its own tab of a headless Chromium driven over the DevTools protocol through a pipe
(``--remote-debugging-pipe``: standard library only, no websocket client). Outside hosts cannot be
resolved (``--host-resolver-rules``) and every request is recorded twice: per page by the DevTools
``Network`` events and per browser in a ``--log-net-log`` file. A page FAILS when

* it throws an uncaught JavaScript exception, logs a console error, or a request fails / gets HTTP >= 400;
* it requests anything from a host other than 127.0.0.1 / localhost;
* a plotly figure (``div.neurips26-plotly`` or plotly's own ``div.plotly-graph-div``) has no drawn
  ``svg.main-svg`` once scripts have run;
* an ipywidgets view (``script[type=application/vnd.jupyter.widget-view+json]``) was not rendered;
* math is left as raw TeX (a Sphinx ``.math`` element without a MathJax ``mjx-container``) or MathJax
  shows a TeX error (``mjx-merror``).

A screenshot of every chapter page (``chapters/**``) is written under ``--screenshots`` (same folders,
``.png``). Exit status: 0 all pages pass, 1 some page fails, 2 the check could not run.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import fnmatch
import functools
import http.server
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
"""Executables tried, in order, when ``NEURIPS26_CHROMIUM`` does not name one."""

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
NON_NETWORK_SCHEMES = frozenset({"data", "blob", "about", "chrome", "chrome-error", "devtools", "javascript"})
WINDOW_SIZE = (1280, 2000)
SCREENSHOT_GLOB = "chapters/**"
"""Pages whose screenshot is kept (CI uploads the folder as an artifact)."""

# Headless Chromium flags: a fresh profile, no background services, and every outside host unresolvable.
BASE_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    f"--window-size={WINDOW_SIZE[0]},{WINDOW_SIZE[1]}",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost",
    # Fewer requests of the browser's own (sign-in, network time, updates): not the site's, and
    # told apart from the site's in the net log anyway (see site_requests_in_netlog).
    "--disable-client-side-phishing-detection",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--no-pings",
    "--metrics-recording-only",
    "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,"
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater",
)

# Runs in the page once it has loaded: waits (up to the deadline) for MathJax's first typeset, plotly
# figures and widget views, then reports what is still missing. Returns a JSON-able object.
PROBE_JS = r"""
(async (timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const problems = [];
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    try {
      await Promise.race([mj.startup.promise, sleep(timeoutMs)]);
    } catch (err) {
      problems.push("MathJax failed: " + err);
    }
  }
  const figures = () => Array.from(document.querySelectorAll("div.neurips26-plotly, div.plotly-graph-div"));
  const undrawn = () => figures().filter((d) => !d.querySelector("svg.main-svg"));
  const views = () => Array.from(document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]'));
  const unrendered = () => views().filter((s) => {
    const prev = s.previousElementSibling;
    return !(prev && prev.classList.contains("widget-subarea") && prev.childElementCount > 0);
  });
  while (Date.now() < deadline && (undrawn().length || unrendered().length)) {
    await sleep(100);
  }
  for (const d of undrawn()) {
    problems.push("plotly figure did not draw (no svg.main-svg): #" + (d.id || "(no id)"));
  }
  for (const s of unrendered()) {
    let model = "?";
    try { model = JSON.parse(s.textContent).model_id; } catch (err) {}
    problems.push("ipywidgets view not rendered: model " + model);
  }
  const maths = Array.from(document.querySelectorAll(".math"));
  const raw = maths.filter((m) => !m.querySelector("mjx-container"));
  if (raw.length) {
    problems.push(raw.length + " of " + maths.length + " math elements left unrendered, e.g. "
      + JSON.stringify(raw[0].textContent.trim().slice(0, 80)));
  }
  for (const e of Array.from(document.querySelectorAll("mjx-merror")).slice(0, 3)) {
    problems.push("MathJax TeX error: " + JSON.stringify(
      (e.getAttribute("data-mjx-error") || e.textContent).slice(0, 120)));
  }
  return {
    problems: problems,
    figures: figures().length,
    widgets: views().length,
    math: maths.length,
    title: document.title,
  };
})
"""


@dataclass
class PageResult:
    """What one page did in the browser; ``ok`` when ``problems`` is empty."""

    page: str
    problems: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    figures: int = 0
    widgets: int = 0
    math: int = 0
    screenshot: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class SiteReport:
    """All pages' results plus the outside requests found in the browsers' net logs.

    ``netlog_external`` (the site's requests to outside hosts) fails the check; ``browser_background``
    (the browser's own, e.g. sign-in or update pings, all blocked) is reported for information only.
    """

    pages: list[PageResult]
    netlog_external: list[str]
    seconds: float
    browser_background: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.pages) and all(p.ok for p in self.pages) and not self.netlog_external

    def failures(self) -> list[str]:
        """One line per problem, prefixed by its page."""
        lines = [f"{p.page}: {problem}" for p in self.pages for problem in p.problems]
        lines += [f"(net log): request to an outside host: {url}" for url in self.netlog_external]
        if not self.pages:
            lines.append("no HTML pages found")
        return lines


class CheckError(RuntimeError):
    """The check could not run (no browser, no site, browser crashed): not a verdict on the pages."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$NEURIPS26_CHROMIUM`` if set, else the first of CHROMIUM_NAMES on PATH."""
    explicit = os.environ.get("NEURIPS26_CHROMIUM")
    if explicit:
        return explicit if shutil.which(explicit) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def find_pages(site_dir: Path, exclude: Sequence[str] = ()) -> list[str]:
    """Every ``*.html`` under ``site_dir`` (POSIX, relative), skipping Sphinx's ``_*`` and ``.*`` folders."""
    if not site_dir.is_dir():
        raise CheckError(f"site folder {site_dir} does not exist (build the book first)")
    pages = []
    for path in sorted(site_dir.rglob("*.html")):
        rel = path.relative_to(site_dir).as_posix()
        if any(part.startswith(("_", ".")) for part in rel.split("/")[:-1]):
            continue
        if any(fnmatch.fnmatch(rel, pattern) for pattern in exclude):
            continue
        pages.append(rel)
    return pages


def is_external(url: str) -> bool:
    """True when ``url`` would reach a host other than this machine's loopback (``file:`` counts as local)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in NON_NETWORK_SCHEMES or scheme == "file" or not scheme:
        return False
    return (parts.hostname or "").lower() not in LOCAL_HOSTS


def _is_local_origin(text: str) -> bool:
    """True when a net-log origin field (initiator, isolation key, site for cookies) names a local host."""
    return any(f"://{host}" in text for host in LOCAL_HOSTS)


def netlog_requests(path: Path) -> tuple[list[str], list[str]]:
    """(the site's outside URLs, the browser's own outside URLs) from a Chromium ``--log-net-log`` file.

    Chromium writes one event per line, so a file cut short by a crash still parses line by line.
    A request is the site's when its ``initiator``, ``network_isolation_key`` or ``site_for_cookies``
    names 127.0.0.1/localhost (a page, or a frame inside one); the browser's own background
    requests (sign-in, updates) carry ``not an origin`` or another site there.
    """
    site: set[str] = set()
    browser: set[str] = set()
    if not path.is_file():
        return [], []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if '"url"' not in line:
                continue
            try:
                event = json.loads(line.strip().rstrip(","))
            except json.JSONDecodeError:
                continue
            params = event.get("params") if isinstance(event, dict) else None
            if not isinstance(params, dict) or not is_external(str(params.get("url", ""))):
                continue
            origins = " ".join(
                str(params.get(k, "")) for k in ("initiator", "network_isolation_key", "site_for_cookies")
            )
            (site if _is_local_origin(origins) else browser).add(params["url"])
    return sorted(site), sorted(browser)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


@contextmanager
def serve(site_dir: Path) -> Iterator[str]:
    """Serve ``site_dir`` on 127.0.0.1 at a free port for the duration; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _move_fd_above(fd: int, floor: int) -> int:
    """Duplicate ``fd`` onto the lowest free descriptor above ``floor`` and close the original."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, floor + 1)
    os.close(fd)
    return moved


class Browser:
    """One headless Chromium driven over ``--remote-debugging-pipe`` (fd 3 in, fd 4 out, NUL-ended JSON)."""

    def __init__(self, chromium: str, workdir: Path, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.netlog = workdir / "netlog.json"
        self.stderr_path = workdir / "chromium-stderr.log"
        # The child's ends go above fd 9, so that placing them on 3 and 4 cannot clobber one another.
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()
        to_r, from_w = _move_fd_above(to_r, 9), _move_fd_above(from_w, 9)
        flags = [*BASE_FLAGS, f"--user-data-dir={workdir / 'profile'}", f"--log-net-log={self.netlog}"]
        # bash (dash cannot name fds above 9) moves our pipe ends onto fds 3 and 4, where Chromium wants them.
        script = f'exec "$0" "$@" 3<&{to_r} 4>&{from_w} {to_r}<&- {from_w}>&-'
        with open(self.stderr_path, "wb") as err:
            self._proc = subprocess.Popen(
                [
                    shutil.which("bash") or "/bin/bash",
                    "-c",
                    script,
                    chromium,
                    *flags,
                    "--remote-debugging-pipe",
                    "about:blank",
                ],
                pass_fds=(to_r, from_w),
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
            )
        os.close(to_r)
        os.close(from_w)
        self._next_id = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int, dict[str, Any]] = {}
        self._events: dict[str | None, list[dict[str, Any]]] = {}
        self._closed = False
        self._unanswered: set[int] = set()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        try:
            self.send("Browser.getVersion", timeout_s=60)  # fails fast if the browser did not come up
        except CheckError:
            self.close()
            raise

    def _read_loop(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_r, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._cond:
                for raw in messages:
                    try:
                        msg = json.loads(raw)
                    except json.JSONDecodeError:
                        continue
                    if "id" in msg:
                        if msg["id"] not in self._unanswered:
                            self._responses[msg["id"]] = msg
                    else:
                        self._events.setdefault(msg.get("sessionId"), []).append(msg)
                        if msg.get("method") == "Page.javascriptDialogOpening":
                            # A modal alert/confirm would block the page (and this check): dismiss it.
                            self._unanswered.add(
                                self._post(
                                    "Page.handleJavaScriptDialog", {"accept": False}, msg.get("sessionId")
                                )
                            )
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _post(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        """Write one DevTools command; returns its id (the answer arrives later, in ``_responses``)."""
        with self._lock:
            self._next_id += 1
            msg_id = self._next_id
            msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            try:
                os.write(self._to_w, json.dumps(msg).encode() + b"\0")
            except OSError as err:
                raise CheckError(f"Chromium is gone ({err}): {self.stderr_tail()}") from err
        return msg_id

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout_s=None
    ) -> dict[str, Any]:
        """Send one DevTools command and wait for its result (raises CheckError on error or timeout)."""
        msg_id = self._post(method, params, session)
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        with self._cond:
            while msg_id not in self._responses:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    why = (
                        "exited"
                        if self._closed
                        else f"did not answer {method} within {timeout_s or self.timeout_s} s"
                    )
                    raise CheckError(f"Chromium {why}: {self.stderr_tail()}")
                self._cond.wait(left)
            reply = self._responses.pop(msg_id)
        if "error" in reply:
            raise CheckError(f"{method} failed: {reply['error'].get('message')}")
        return reply.get("result", {})

    def stderr_tail(self, n_chars: int = 600) -> str:
        """The end of Chromium's own log, for error messages."""
        try:
            return self.stderr_path.read_text(errors="replace")[-n_chars:].strip() or "(no output)"
        except OSError:
            return "(no output)"

    def wait_event(self, session: str, method: str, timeout_s: float, **params: Any) -> bool:
        """Wait until ``method`` with these ``params`` values is seen on ``session``; False on timeout."""

        def seen() -> bool:
            return any(
                e["method"] == method and all(e.get("params", {}).get(k) == v for k, v in params.items())
                for e in self._events.get(session, [])
            )

        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not seen():
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def events(self, session: str) -> list[dict[str, Any]]:
        """Drop and return everything ``session`` has reported so far."""
        with self._cond:
            return self._events.pop(session, [])

    def close(self) -> None:
        """Close the browser cleanly (so it finishes its net log), killing it if it hangs."""
        try:
            self.send("Browser.close", timeout_s=10)
        except CheckError:
            pass
        try:
            self._proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_w, self._from_r):
            try:
                os.close(fd)
            except OSError:
                pass


def _describe_exception(details: dict[str, Any]) -> str:
    exc = details.get("exception") or {}
    text = exc.get("description") or details.get("text", "exception")
    where = details.get("url", "")
    return f"uncaught JavaScript exception: {text.splitlines()[0] if text else text} ({where})"


def _console_text(params: dict[str, Any]) -> str:
    parts = []
    for arg in params.get("args", []):
        parts.append(str(arg.get("value", arg.get("description", arg.get("type", "")))))
    return " ".join(parts)


def _is_favicon_probe(url: str) -> bool:
    """Chromium asks every site for ``/favicon.ico`` on its own; a 404 there is no fault of the page."""
    return urlsplit(url).path == "/favicon.ico"


def problems_from_events(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(problems, requested URLs) from one tab's DevTools events."""
    problems: list[str] = []
    requests: list[str] = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            problems.append(_describe_exception(params.get("exceptionDetails", {})))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append(f"console.{params['type']}: {_console_text(params)[:300]}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            if _is_favicon_probe(entry.get("url", "")):
                continue
            problems.append(
                f"console error ({entry.get('source')}): {entry.get('text', '')[:300]} {entry.get('url', '')}"
            )
        elif method == "Page.javascriptDialogOpening":
            problems.append(
                f"page opened a JavaScript {params.get('type')} dialog: {params.get('message', '')[:200]}"
            )
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            requests.append(url)
            if is_external(url):
                problems.append(f"request to an outside host: {url}")
        elif method == "Network.responseReceived":
            response = params.get("response", {})
            if response.get("status", 0) >= 400 and not _is_favicon_probe(response.get("url", "")):
                problems.append(f"HTTP {response['status']} for {response.get('url')}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(f"request failed: {params.get('errorText')} ({params.get('type')})")
    # Chromium logs a failed request in the console too; keep one line per cause, in order.
    return list(dict.fromkeys(problems)), requests


def _screenshot(browser: Browser, session: str, path: Path, max_height: int) -> None:
    """Write a PNG of the whole page (up to ``max_height`` CSS px) at the window's width.

    The viewport is stretched to the page's height for the capture (``captureBeyondViewport`` alone
    lays the book theme's fixed-height frame out wrongly), then restored.
    """
    metrics = browser.send("Page.getLayoutMetrics", session=session)
    size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
    height = max(1, min(int(size.get("height", WINDOW_SIZE[1])), max_height))
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": WINDOW_SIZE[0], "height": height, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    try:
        time.sleep(0.2)  # let the resized page lay out (plotly figures are responsive)
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride", session=session)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(base64.b64decode(shot["data"]))


def check_page(
    browser: Browser,
    base_url: str,
    page: str,
    screenshot: Path | None,
    *,
    render_wait_s: float = 15.0,
    settle_s: float = 0.3,
    max_height: int = 8000,
) -> PageResult:
    """Open ``page`` in a fresh tab, wait for load and for figures/widgets/math, collect its problems.

    After the load event, figures and widgets get up to ``render_wait_s`` to draw (MathJax its first
    typeset), then ``settle_s`` more for late errors; a screenshot up to ``max_height`` CSS px follows.
    """
    start = time.monotonic()
    result = PageResult(page=page)
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session)
        nav = browser.send("Page.navigate", {"url": base_url + page}, session=session)
        loaded = nav.get("errorText") or browser.wait_event(
            session, "Page.lifecycleEvent", browser.timeout_s, name="load", loaderId=nav.get("loaderId")
        )
        if nav.get("errorText"):
            result.problems.append(f"navigation failed: {nav['errorText']}")
        elif not loaded:
            result.problems.append(f"page did not finish loading within {browser.timeout_s:.0f} s")
        else:
            probe = _probe(browser, session, render_wait_s)
            if "exceptionDetails" in probe:
                result.problems.append(
                    "page check script failed: " + _describe_exception(probe["exceptionDetails"])
                )
            value = probe.get("result", {}).get("value") or {}
            result.problems.extend(value.get("problems", []))
            result.figures, result.widgets, result.math = (
                value.get(k, 0) for k in ("figures", "widgets", "math")
            )
            time.sleep(settle_s)  # late errors from timers and deferred handlers
            if screenshot is not None:
                _screenshot(browser, session, screenshot, max_height)
                result.screenshot = str(screenshot)
        problems, result.requests = problems_from_events(browser.events(session))
        result.problems = problems + result.problems
    finally:
        try:
            browser.send("Target.closeTarget", {"targetId": target})
        except CheckError:
            pass
    result.seconds = time.monotonic() - start
    return result


#: How often the page probe is retried when the page navigates under it, and the pause between tries.
PROBE_TRIES = 3
PROBE_RETRY_PAUSE_S = 1.0


def _probe(browser: Browser, session: str, render_wait_s: float) -> dict[str, Any]:
    """Run :data:`PROBE_JS` in the page. A page that navigates after its load event (the book's root
    ``index.html`` redirects to ``book/intro.html``) can discard the evaluation ("Inspected target navigated
    or closed"): then wait a moment and probe the page it arrived at, up to :data:`PROBE_TRIES` times."""
    for attempt in range(PROBE_TRIES):
        try:
            return browser.send(
                "Runtime.evaluate",
                {
                    "expression": f"({PROBE_JS})({int(render_wait_s * 1000)})",
                    "awaitPromise": True,
                    "returnByValue": True,
                },
                session=session,
                timeout_s=browser.timeout_s + render_wait_s,
            )
        except CheckError as err:
            if "navigated" not in str(err) or attempt == PROBE_TRIES - 1:
                raise
            time.sleep(PROBE_RETRY_PAUSE_S)
    raise AssertionError("unreachable")


def check_site(
    site_dir: Path | str,
    screenshots: Path | str | None = None,
    *,
    jobs: int = 2,
    chromium: str | None = None,
    timeout_s: float = 30.0,
    render_wait_s: float = 15.0,
    settle_s: float = 0.3,
    screenshot_glob: str = SCREENSHOT_GLOB,
    screenshot_max_height: int = 8000,
    exclude: Sequence[str] = (),
    log=None,
) -> SiteReport:
    """Check every page of ``site_dir`` with ``jobs`` browsers in parallel; screenshot ``screenshot_glob``."""
    start = time.monotonic()
    site_dir = Path(site_dir).resolve()
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive int, got {jobs!r}")
    for name, value in (("timeout_s", timeout_s), ("render_wait_s", render_wait_s), ("settle_s", settle_s)):
        if not isinstance(value, int | float) or value < 0 or (name == "timeout_s" and value == 0):
            raise ValueError(f"{name} must be a non-negative number (timeout_s > 0), got {value!r}")
    chromium = chromium or find_chromium()
    if chromium is None:
        raise CheckError(
            "Chromium not found: install it (apt-get install chromium) or set NEURIPS26_CHROMIUM"
        )
    pages = find_pages(site_dir, exclude)
    shots_dir = Path(screenshots).resolve() if screenshots is not None else None
    todo: queue.Queue[str] = queue.Queue()
    for page in pages:
        todo.put(page)
    results: list[PageResult] = []
    netlog_urls: list[str] = []
    background_urls: list[str] = []
    errors: list[BaseException] = []
    guard = threading.Lock()

    def worker(index: int, base_url: str, workroot: Path) -> None:
        workdir = workroot / f"browser{index}"
        workdir.mkdir()
        try:
            browser = Browser(chromium, workdir, timeout_s)
        except BaseException as err:  # noqa: BLE001 - reported to the caller below
            errors.append(err)
            return
        try:
            while True:
                try:
                    page = todo.get_nowait()
                except queue.Empty:
                    break
                shot = None
                if shots_dir is not None and fnmatch.fnmatch(page, screenshot_glob):
                    shot = shots_dir / Path(page).with_suffix(".png")
                result = check_page(
                    browser,
                    base_url,
                    page,
                    shot,
                    render_wait_s=render_wait_s,
                    settle_s=settle_s,
                    max_height=screenshot_max_height,
                )
                with guard:
                    results.append(result)
                if log is not None:  # one call per page, so the two workers' lines do not interleave
                    status = "ok  " if result.ok else "FAIL"
                    lines = [f"{status} {page} ({result.seconds:.1f} s)"]
                    lines += [f"       {problem}" for problem in result.problems]
                    log("\n".join(lines))
        except BaseException as err:  # noqa: BLE001
            errors.append(err)
        finally:
            browser.close()
            site_urls, own_urls = netlog_requests(browser.netlog)
            with guard:
                netlog_urls.extend(site_urls)
                background_urls.extend(own_urls)

    with tempfile.TemporaryDirectory(prefix="check_pages_") as tmp, serve(site_dir) as base_url:
        threads = [
            threading.Thread(target=worker, args=(i, base_url, Path(tmp)))
            for i in range(min(jobs, max(1, len(pages))))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if errors:
        raise CheckError(f"the browser check could not run: {errors[0]}") from errors[0]
    results.sort(key=lambda r: r.page)
    return SiteReport(
        pages=results,
        netlog_external=sorted(set(netlog_urls)),
        seconds=time.monotonic() - start,
        browser_background=sorted(set(background_urls)),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML site, e.g. _build/html")
    parser.add_argument("--screenshots", type=Path, help=f"folder for screenshots of {SCREENSHOT_GLOB} pages")
    parser.add_argument("--jobs", type=int, default=2, help="browsers in parallel (default 2)")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds a page may take to load (default 30)"
    )
    parser.add_argument(
        "--render-wait",
        type=float,
        default=15.0,
        help="seconds figures and widgets may take to draw after the load event (default 15)",
    )
    parser.add_argument("--exclude", action="append", default=[], help="glob of pages to skip (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON to this file")
    args = parser.parse_args(argv)
    try:
        report = check_site(
            args.site,
            args.screenshots,
            jobs=args.jobs,
            timeout_s=args.timeout,
            render_wait_s=args.render_wait,
            exclude=args.exclude,
            log=print,
        )
    except CheckError as err:
        print(f"check_pages: cannot run: {err}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "ok": report.ok,
                    "seconds": report.seconds,
                    "netlog_external": report.netlog_external,
                    "browser_background": report.browser_background,
                    "pages": [{**vars(p), "ok": p.ok} for p in report.pages],
                },
                indent=2,
            )
        )
    failures = report.failures()
    for url in report.netlog_external:
        print(f"FAIL (net log) request to an outside host: {url}")
    n_fail = sum(not p.ok for p in report.pages)
    print(
        f"{len(report.pages)} pages checked in {report.seconds:.1f} s: "
        f"{len(report.pages) - n_fail} ok, {n_fail} failed"
        + (
            f", {len(report.netlog_external)} outside requests in the net log"
            if report.netlog_external
            else ""
        )
    )
    return 0 if report.ok and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
