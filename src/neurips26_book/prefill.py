"""``python -m neurips26_book.prefill --out _build/smoke --jobs 2``: execute the book's notebooks in parallel
into the execution cache of the build that follows, so that the build only renders.

In cache mode (``execute_notebooks: cache``) ``jupyter-book build`` executes every notebook it cannot find in
jupyter-cache, one after another. This command builds each notebook of ``_toc.yml`` exactly as the build
would before executing it: the hidden fingerprint cell (:mod:`neurips26_book.library_fingerprint`), myst-nb's
reader with the book's MyST configuration, the kernel-name aliases and the notebook's own ``mystnb``
settings. It skips the notebooks the cache already holds, executes the others in ``--jobs`` worker
processes and stores each success as myst-nb does, so the build then reports "Using cached notebook" for
every page. ``--out`` is the build's ``--path-output``: the cache is ``<out>/_build/.jupyter_cache``.

The notebooks of one folder (one chapter) run one after another, in the order of the table of contents, as
in the build: a later notebook finds the results an earlier one stored with :mod:`neurips26.cache`. Each
execution inherits this process's environment (``NEURIPS26_SCALE`` and the thread settings). One line per
notebook is printed as it finishes; every failure is then reported with the notebook, the failing cell and
the traceback, and the command exits 1 once all notebooks ran.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import nbformat

if TYPE_CHECKING:
    from myst_nb.core.config import NbParserConfig
    from myst_parser.config.main import MdParserConfig

TAG = "[prefill]"
EXTENSION = "neurips26_book"
"""The book's Sphinx extension: when the book loads it, every notebook gets the fingerprint cell."""

SOURCE_SUFFIXES = (".rst", ".md", ".ipynb")
"""The build's source suffixes (Sphinx's ``.rst`` and myst-nb's), before ``nb_custom_formats``."""


@dataclass(frozen=True)
class Book:
    """What the build's configuration decides about reading and executing the notebooks."""

    root: Path
    sphinx: dict[str, Any]
    """Sphinx configuration as ``jupyter-book build`` makes it (``_config.yml`` over jupyter-book's own)."""
    md: MdParserConfig
    """myst-parser's ``MdParserConfig`` (``myst_*`` values)."""
    nb: NbParserConfig
    """myst-nb's ``NbParserConfig`` (``nb_*`` values)."""


@dataclass
class Job:
    """One notebook to execute: the notebook object the build would execute and how it would run it."""

    path: Path
    """Absolute source path, as Sphinx's ``doc2path`` gives it to myst-nb."""
    name: str
    """Path relative to the book, for messages."""
    notebook: nbformat.NotebookNode
    read_fmt: dict[str, Any] | None
    in_temp: bool
    timeout: int | None
    allow_errors: bool


@dataclass
class Outcome:
    """What a worker sends back: the executed notebook, its run time, and the traceback if it failed."""

    notebook: nbformat.NotebookNode
    seconds: float
    error: str | None = None
    traceback: str | None = None


def load_book(root: Path, toc: Path | None = None) -> Book:
    """The book's Sphinx, MyST and myst-nb configuration, derived as ``jupyter-book build`` derives it.

    myst-parser and myst-nb read each dataclass field from the Sphinx value of the same name
    (``myst_<name>``, ``nb_<name>``), falling back to the field's default.
    """
    from jupyter_book.config import get_final_config
    from myst_nb.core.config import NbParserConfig
    from myst_parser.config.main import MdParserConfig

    root = root.absolute()
    toc = toc or root / "_toc.yml"
    config_path = root / "_config.yml"
    sphinx, _ = get_final_config(
        user_yaml=config_path if config_path.is_file() else None,
        cli_config={"external_toc_path": toc.as_posix(), "latex_individualpages": False},
        sourcedir=root,
        validate=False,
    )
    md_values = {
        name: sphinx[f"myst_{name}"]
        for name, _, field in MdParserConfig().as_triple()
        if "sphinx" not in field.metadata.get("omit", []) and f"myst_{name}" in sphinx
    }
    nb_values = {
        name: sphinx[f"nb_{name}"]
        for name, _, field in NbParserConfig().as_triple()
        if not field.metadata.get("sphinx_exclude") and f"nb_{name}" in sphinx
    }
    return Book(root, sphinx, MdParserConfig(**md_values), NbParserConfig(**nb_values))


def toc_sources(book: Book, toc: Path | None = None) -> list[Path]:
    """The source file of every page of the table of contents, in its order (excluded files skipped)."""
    from sphinx.util.matching import Matcher
    from sphinx_external_toc.parsing import parse_toc_yaml

    site_map = parse_toc_yaml(toc or book.root / "_toc.yml")
    if site_map.globs():
        print(f"{TAG} glob entries of the table of contents are not prefilled: {sorted(site_map.globs())}")
    suffixes = [*SOURCE_SUFFIXES, *book.nb.custom_formats]
    excluded = Matcher(book.sphinx.get("exclude_patterns", []))
    sources = []
    for docname in site_map:
        base = next((docname[: -len(s)] for s in suffixes if docname.endswith(s)), docname)
        for suffix in suffixes:
            if not excluded(base + suffix) and (book.root / (base + suffix)).is_file():
                sources.append(book.root / (base + suffix))
                break
    return sources


def build_job(book: Book, path: Path) -> Job | None:
    """The notebook the build would execute for ``path`` (``None``: the build executes nothing there).

    The steps of myst-nb's Sphinx parser (``myst_nb.sphinx_.Parser.parse``) and of its cache client, in
    order: the text as Sphinx reads it, the ``source-read`` fingerprint cell, the notebook reader, the
    kernel-name aliases, the notebook-level ``mystnb`` configuration, the exclude patterns and the
    execution mode.
    """
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    from neurips26_book.library_fingerprint import _add_fingerprint

    if path.suffix == ".rst":  # Sphinx's own parser, never myst-nb's
        return None
    text = [path.read_text(encoding=book.sphinx.get("source_encoding", "utf-8-sig"))]
    if EXTENSION in book.sphinx.get("extensions", []):
        docname = path.relative_to(book.root).with_suffix("").as_posix()
        _add_fingerprint(None, docname, text)
    reader = create_nb_reader(str(path), book.md, book.nb, text[0])
    if reader is None:
        return None
    notebook = reader.read(text[0])
    nb_config = book.nb
    kernel_name = notebook.metadata.get("kernelspec", {}).get("name", None)
    if kernel_name is not None and nb_config.kernel_rgx_aliases:
        for rgx, alias in nb_config.kernel_rgx_aliases.items():
            if re.fullmatch(rgx, kernel_name):
                notebook.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        try:
            nb_config = nb_config.copy(**overrides)
        except Exception as exc:  # the build warns and keeps the book's configuration
            print(f"{TAG} {path}: notebook configuration ignored, as the build does: {exc}")
    posix_path = PurePosixPath(path.as_posix())
    if any(posix_path.match(pattern) for pattern in nb_config.execution_excludepatterns):
        return None
    if nb_config.execution_mode != "cache":
        return None
    return Job(
        path=path,
        name=path.relative_to(book.root).as_posix(),
        notebook=notebook,
        read_fmt=reader.read_fmt,
        in_temp=nb_config.execution_in_temp,
        timeout=nb_config.execution_timeout,
        allow_errors=nb_config.execution_allow_errors,
    )


def _start_worker(sliced_polling: bool) -> None:
    """Worker initialiser: the kernel channels wait in slices, as in the build (the book's extension)."""
    if sliced_polling:
        from neurips26_book.kernel_polling import install

        install()


def execute(job: Job) -> Outcome:
    """Execute a notebook as myst-nb's cache client does (``single_nb_execution``, in the notebook's folder).

    Runs in a worker process; any other exception (a kernel that died) is a failure too.
    """
    from jupyter_cache.executors.utils import single_nb_execution

    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as temp:
            cwd = temp if job.in_temp else str(job.path.parent)
            result = single_nb_execution(
                job.notebook, cwd=cwd, allow_errors=job.allow_errors, timeout=job.timeout, meta_override=True
            )
    except Exception as exc:
        return Outcome(job.notebook, time.perf_counter() - start, type(exc).__name__, traceback.format_exc())
    if result.err is not None:
        return Outcome(result.nb, result.time, type(result.err).__name__, result.exc_string)
    return Outcome(result.nb, result.time)


def failing_cell(notebook: nbformat.NotebookNode) -> tuple[int, int | None, str] | None:
    """(code cell number from 1, line of its fence in the source file, source) of the cell that failed.

    The execution stops at the failing cell: the last one that started (an error, a timeout, a kernel that
    died), else the last one with an error output.
    """
    code = [(k, c) for k, c in enumerate(notebook.cells) if c.cell_type == "code"]
    started = [kc for kc in code if kc[1].get("execution_count") is not None]
    errors = [kc for kc in code if any(o.get("output_type") == "error" for o in kc[1].outputs)]
    if not started and not errors:
        return None
    found = (started or errors)[-1]
    index, cell = found
    source_map = notebook.metadata.get("source_map")
    line = source_map[index] if source_map and index < len(source_map) else None
    return [k for k, _ in code].index(index) + 1, line, cell.source


def failure_report(job: Job, outcome: Outcome) -> str:
    """The notebook, the failing cell and the traceback of a failed execution."""
    cell = failing_cell(outcome.notebook)
    lines = [f"{TAG} FAILED {job.name} ({outcome.error})"]
    if cell is not None:
        number, line, source = cell
        where = f"{job.name}:{line}" if line is not None else job.name
        lines += [f"{TAG} failing cell: code cell {number} at {where}", source]
    lines += [outcome.traceback or "", ""]
    return "\n".join(lines)


def _next_jobs(queues: dict[Path, list[Job]], busy: set[Path], slots: int) -> list[Job]:
    """Up to ``slots`` jobs, at most one per folder and none from a folder that is executing now."""
    chosen = []
    for folder, queue in queues.items():
        if len(chosen) == slots:
            break
        if queue and folder not in busy:
            chosen.append(queue.pop(0))
            busy.add(folder)
    return chosen


def prefill(root: Path, out: Path, jobs: int, pages: Sequence[str] = ()) -> int:
    """Fill the execution cache of the build ``jupyter-book build <root> --path-output <out>``.

    Returns the exit status: 0 when every notebook is cached, 1 when one failed.
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbProjectRecord

    started = time.perf_counter()
    book = load_book(root)
    if book.nb.execution_mode != "cache":
        print(f"{TAG} the book's execute_notebooks is {book.nb.execution_mode!r}, not 'cache': nothing to do")
        return 0
    sources = toc_sources(book)
    if pages:
        wanted = {(book.root / page).absolute() for page in pages}
        sources = [s for s in sources if s in wanted or s.with_suffix("") in wanted]
    cache_path = book.nb.execution_cache_path or (out / "_build" / ".jupyter_cache").resolve()
    cache = get_cache(str(cache_path))
    todo: list[Job] = []
    cached = 0
    for path in sources:
        job = build_job(book, path)
        if job is None:
            continue
        try:
            cache.match_cache_notebook(job.notebook)
        except KeyError:
            todo.append(job)
        else:
            cached += 1
            print(f"{TAG} {'-':>9}  cached  {job.name}", flush=True)
    print(f"{TAG} {cached} notebook(s) cached, {len(todo)} to execute with {jobs} worker(s) in {cache_path}")

    queues: dict[Path, list[Job]] = {}
    for job in todo:
        queues.setdefault(job.path.parent, []).append(job)
    failures: list[str] = []
    failed: list[str] = []
    sliced = EXTENSION in book.sphinx.get("extensions", [])
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker, initargs=(sliced,)) as pool:
        running: dict[Future[Outcome], Job] = {}
        busy: set[Path] = set()
        while True:
            for job in _next_jobs(queues, busy, jobs - len(running)):
                if job.read_fmt is None:
                    record = cache.add_nb_to_project(str(job.path))
                else:
                    record = cache.add_nb_to_project(str(job.path), read_data=job.read_fmt)
                NbProjectRecord.remove_tracebacks([record.pk], cache.db)
                running[pool.submit(execute, job)] = job
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                job = running.pop(future)
                busy.discard(job.path.parent)
                try:
                    outcome = future.result()
                except Exception as exc:  # the worker process itself failed
                    outcome = Outcome(job.notebook, 0.0, type(exc).__name__, traceback.format_exc())
                uri = str(job.path.absolute())
                if outcome.error is None:
                    cache.cache_notebook_bundle(
                        CacheBundleIn(outcome.notebook, uri, data={"execution_seconds": outcome.seconds}),
                        check_validity=False,
                        overwrite=True,
                    )
                else:
                    NbProjectRecord.set_traceback(uri, outcome.traceback, cache.db)
                    failures.append(failure_report(job, outcome))
                    failed.append(job.name)
                status = "ok" if outcome.error is None else "FAILED"
                print(f"{TAG} {outcome.seconds:7.1f} s  {status:<6}  {job.name}", flush=True)

    for report in failures:
        print(report, flush=True)
    elapsed = time.perf_counter() - started
    print(
        f"{TAG} {len(todo) - len(failures)} executed, {cached} cached, {len(failures)} failed "
        f"in {elapsed:.0f} s" + (": " + ", ".join(failed) if failed else ""),
        flush=True,
    )
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m neurips26_book.prefill",
        description="Execute the book's notebooks in parallel into the execution cache of the next build.",
    )
    parser.add_argument("--book", type=Path, default=Path("."), help="the book's folder (default: .)")
    parser.add_argument("--out", type=Path, default=None, help="the build's --path-output (default: --book)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at the same time")
    parser.add_argument("pages", nargs="*", help="only these pages of the table of contents (default: all)")
    args = parser.parse_args(argv)
    return prefill(args.book, args.out if args.out is not None else args.book, max(1, args.jobs), args.pages)


if __name__ == "__main__":
    sys.exit(main())
