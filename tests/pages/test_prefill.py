"""The prefill executes the notebooks the build would execute, and the build then executes none.

``make notebooks`` runs :mod:`neurips26_book.prefill` into the smoke build's execution cache, and
``make smoke-book`` only renders. A tiny book (two one-cell notebooks, one of them on a kernel name the
book aliases, and a plain page) is prefilled and then built with ``jupyter-book``: every notebook must come
from the cache. A third notebook with a failing cell must fail the prefill, naming the notebook and the
cell, without executing the cached two again. The last test reads the smoke build's log
(``$NEURIPS26_BUILD_LOG``): a prefill out of step with the build would make CI execute every notebook twice.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
EXECUTED = "Executing notebook"
"""What myst-nb logs for each notebook it executes itself (cache mode)."""

CONFIG = """\
title: Tiny
only_build_toc_files: true
execute:
  execute_notebooks: cache
  timeout: 60
parse:
  myst_enable_extensions: [colon_fence, dollarmath]
sphinx:
  extra_extensions: [neurips26_book]
  config:
    nb_kernel_rgx_aliases: {"tiny-.*": "python3"}
"""

NOTEBOOK = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: {kernel}
---

# {title}

Some prose.

```{{code-cell}} ipython3
{code}
```
"""

FAILING_CODE = 'x = 1\n```\n\nMore prose.\n\n```{code-cell} ipython3\nraise ValueError("broken on purpose")'


def _notebook(title: str, code: str, kernel: str = "python3") -> str:
    return NOTEBOOK.format(title=title, code=code, kernel=kernel)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(REPO_ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("JUPYTER_PATH", str(REPO_ROOT / "book" / "jupyter"))
    return env


def _prefill(book: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "neurips26_book.prefill", "--book", str(book)]
    return subprocess.run(
        [*command, "--out", str(book / "out"), "--jobs", "2"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _write_book(book: Path, pages: list[str]) -> None:
    chapters = "".join(f"  - file: {page}\n" for page in pages)
    (book / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n{chapters}", encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A prefilled tiny book: a plain root page, ``part/a`` and ``part/b.md`` (an aliased kernel name)."""
    book = tmp_path_factory.mktemp("book")
    (book / "part").mkdir()
    (book / "_config.yml").write_text(CONFIG, encoding="utf-8")
    (book / "intro.md").write_text("# Tiny\n\nA plain page.\n", encoding="utf-8")
    (book / "part" / "a.md").write_text(_notebook("A", 'print("a")'), encoding="utf-8")
    (book / "part" / "b.md").write_text(_notebook("B", "y = 2", kernel="tiny-python"), encoding="utf-8")
    _write_book(book, ["part/a", "part/b.md"])
    return book, _prefill(book)


def test_the_prefill_executes_every_notebook_of_the_toc(tiny_book) -> None:
    book, done = tiny_book
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert {line.split()[-1] for line in lines if " ok " in line} == {"part/a.md", "part/b.md"}
    assert "intro.md" not in done.stdout  # a plain page is not a notebook


def test_the_cached_notebooks_are_those_myst_nb_builds_from_the_same_text(tiny_book) -> None:
    from jupyter_cache import get_cache
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    from neurips26_book.library_fingerprint import _source_dir, fingerprint_cell

    book, _ = tiny_book
    cache = get_cache(str(book / "out" / "_build" / ".jupyter_cache"))
    config = MdParserConfig(enable_extensions={"colon_fence", "dollarmath"})
    notebooks = {}
    for name in ("a", "b"):
        path = book / "part" / f"{name}.md"
        text = path.read_text(encoding="utf-8")
        text += fingerprint_cell(text, _source_dir())
        notebooks[name] = read_myst_markdown_notebook(text, config=config, path=str(path))
    cache.match_cache_notebook(notebooks["a"])  # raises KeyError when the hashes differ
    with pytest.raises(KeyError):  # the kernel name is hashed: the book's alias must have been applied
        cache.match_cache_notebook(notebooks["b"])
    notebooks["b"].metadata["kernelspec"]["name"] = "python3"
    cache.match_cache_notebook(notebooks["b"])


def test_the_build_after_the_prefill_executes_no_notebook(tiny_book) -> None:
    book, _ = tiny_book
    build = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", str(book)]
    done = subprocess.run(
        [*build, "--path-output", str(book / "out")], env=_env(), capture_output=True, text=True, timeout=180
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert EXECUTED not in log, log
    assert len(re.findall(r"part/[ab]\.md: Using cached notebook", log)) == 2, log


def test_a_failing_cell_fails_the_prefill_naming_the_notebook_and_the_cell(tiny_book, tmp_path) -> None:
    source, _ = tiny_book
    book = tmp_path / "book"
    shutil.copytree(source, book, ignore=shutil.ignore_patterns("html", ".doctrees", "jupyter_execute"))
    (book / "part" / "c.md").write_text(_notebook("C", FAILING_CODE), encoding="utf-8")
    _write_book(book, ["part/a", "part/b.md", "part/c"])
    done = _prefill(book)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"cached\s+part/a\.md", done.stdout) and re.search(r"cached\s+part/b\.md", done.stdout)
    assert " ok " not in done.stdout  # the cached notebooks were not executed again
    assert re.search(r"FAILED\s+part/c\.md", done.stdout), done.stdout
    lines = (book / "part" / "c.md").read_text(encoding="utf-8").splitlines()
    line = lines.index("```{code-cell} ipython3", lines.index("More prose.")) + 1  # from 1
    report = done.stdout.split("FAILED part/c.md", 1)[-1]
    assert f"code cell 2 at part/c.md:{line}" in report, done.stdout
    assert 'raise ValueError("broken on purpose")' in report
    assert "ValueError" in report and "broken on purpose" in report.split("Traceback", 1)[-1]


def test_the_smoke_build_executed_no_notebook() -> None:
    """``make notebooks`` filled the cache, so ``make smoke-book`` found every notebook there."""
    log = os.environ.get("NEURIPS26_BUILD_LOG")
    if not log or not Path(log).is_file():
        pytest.skip("no build log (make pages sets NEURIPS26_BUILD_LOG after make smoke-book)")
    executed = [line for line in Path(log).read_text(encoding="utf-8").splitlines() if EXECUTED in line]
    assert not executed, (
        f"the smoke build executed {len(executed)} notebook(s) the prefill should have cached "
        f"(neurips26_book.prefill is out of step with the build), e.g. {executed[0]!r}"
    )
