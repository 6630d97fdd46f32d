"""Guards on the book's sources: notebook hygiene, Colab twins, launch targets, pins, claim expectations."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "notebooks"))
from chapter_template import chapter_problems  # noqa: E402
from discover import chapter_notebooks  # noqa: E402
from format_code import WIDTH, formatted, long_code_lines, notebooks  # noqa: E402
from prepare import parameterized  # noqa: E402
from prose_numbers import chapter_prose, typed_numbers  # noqa: E402
from twins import stale_twins  # noqa: E402

NOTEBOOKS = chapter_notebooks()
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
REPO_URL = CONFIG["repository"]["url"]


def _ids(paths):
    return [p.relative_to(ROOT).as_posix() for p in paths]


def _toc_files(node) -> list[str]:
    out = []
    if isinstance(node, dict):
        if "file" in node:
            out.append(node["file"])
        for value in node.values():
            out += _toc_files(value)
    elif isinstance(node, list):
        for item in node:
            out += _toc_files(item)
    return out


def test_there_are_chapter_notebooks():
    assert NOTEBOOKS, "no chapter notebooks found under chapters/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_hygiene(path: Path):
    nb = jupytext.read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, (
        f"{path.name}: exactly one cell must be tagged 'parameters' (found {len(tagged)})"
    )
    params = tagged[0].source
    assert re.search(r'^scale\s*=\s*"default"', params, re.M), 'parameters cell must set scale = "default"'
    assert re.search(r"^seed\s*=\s*\d+", params, re.M), "parameters cell must set seed"
    # a title: the first markdown cell starts with a level-1 heading
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    assert first_md.source.lstrip().startswith("# "), (
        f"{path.name}: the first markdown cell must be the title"
    )
    # the Colab setup cell: the first code cell, hidden, installs the library in Colab and prints versions
    setup = code[0]
    assert "hide-cell" in setup.metadata.get("tags", []), "the setup cell must be tagged hide-cell"
    assert "google.colab" in setup.source and "pip install" in setup.source, (
        "setup cell must install in Colab"
    )
    assert REPO_URL.removeprefix("https://") in setup.source, (
        "setup cell must install from the book's repository"
    )
    assert "report()" in setup.source, "setup cell must print the versions"
    assert code.index(tagged[0]) == 1, "the parameters cell comes right after the setup cell"
    # no outputs are committed in the source
    assert all(not c.get("outputs") for c in code), f"{path.name}: outputs must not be committed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_papermill_injects_the_scale_right_after_the_parameters_cell(path: Path):
    """Readers and teachers change a notebook's scale with papermill (``make nbval`` runs every notebook that
    way); ``make test`` executes the notebooks through ``NEURIPS26_SCALE`` instead, so the injection itself
    is checked here, without running anything."""
    code = [c for c in parameterized(path, {"scale": "smoke"}).cells if c.cell_type == "code"]
    tags = [c.metadata.get("tags", []) for c in code]
    tagged = next(k for k, t in enumerate(tags) if "parameters" in t)
    injected = [k for k, t in enumerate(tags) if "injected-parameters" in t]
    assert injected == [tagged + 1], f"{path.name}: papermill's cell must follow the parameters cell"
    assert re.search(r"^scale = \"smoke\"$", code[tagged + 1].source, re.M), code[tagged + 1].source


def test_ipynb_twins_are_in_sync():
    stale = stale_twins()
    assert not stale, f"run `make twins`: stale or missing .ipynb twins: {_ids(stale)}"


def test_no_stray_ipynb_without_source():
    for twin in [*(ROOT / "chapters").glob("*/*.ipynb"), *(ROOT / "appendix").glob("*.ipynb")]:
        assert twin.with_suffix(".md").is_file(), f"{twin} has no .md source"


def test_toc_entries_exist_and_every_notebook_is_listed():
    files = _toc_files(TOC) + [TOC["root"]]
    for entry in files:
        assert (ROOT / f"{entry}.md").is_file(), f"_toc.yml lists {entry} but {entry}.md does not exist"
    listed = set(files)
    for nb in NOTEBOOKS:
        assert nb.relative_to(ROOT).with_suffix("").as_posix() in listed, f"{nb} is not in _toc.yml"


def test_launch_targets_exist():
    """Colab and Binder open the .ipynb twin of each notebook page: it must exist beside the source."""
    assert CONFIG["launch_buttons"]["colab_url"] and CONFIG["launch_buttons"]["binderhub_url"]
    for nb in NOTEBOOKS:
        assert nb.with_suffix(".ipynb").is_file(), f"launch target missing for {nb}"
    assert (ROOT / "environment.yml").is_file() and (ROOT / "postBuild").is_file()


def test_environment_yml_pins_match_the_lock():
    lock = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            lock[name.lower()] = version
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    pins = [p for p in pip if "==" in p]
    assert pins
    for pin in pins:
        name, version = pin.split("==")
        assert lock.get(name.lower()) == version, (
            f"environment.yml pins {pin}, the lock has {lock.get(name.lower())}"
        )
    assert lock["torch"] == "2.13.0"


def test_every_chapter_commits_its_expected_verdicts():
    for index in sorted((ROOT / "chapters").glob("*/index.md")):
        package = re.search(r"neurips26\.(\w+)", index.read_text())
        assert package, f"{index} must name its library package (neurips26.<pkg>)"
        expected = ROOT / "src" / "neurips26" / package.group(1) / "expected_claims.json"
        assert expected.is_file(), f"{expected} is missing"
        data = json.loads(expected.read_text())
        assert data and all(v in ("reproduced", "partly", "not reproduced") for v in data.values())


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme


CHAPTERS = sorted(p for p in (ROOT / "chapters").iterdir() if p.is_dir())


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.name for c in CHAPTERS])
def test_numbers_in_the_prose_come_from_the_run(chapter: Path):
    """A decimal or a percentage in a chapter's prose is glued from the run, marked {paper}, or math."""
    found = [str(t) for md in chapter_prose(chapter) for t in typed_numbers(md)]
    assert not found, "typed numbers without a source (glue them, or mark the paper's with {paper}):\n" + (
        "\n".join(found)
    )


def test_the_typed_number_check_finds_measured_numbers_and_passes_glued_and_marked_ones(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text(
        "# Heading 3.1 with 2.5\n\n"
        "SpecBlock reaches 2.27× against 1.50×, a lead of +52 %.\n"
        "Glued {glue:text}`tau:.2f`, from elsewhere {glue:text}`03-claims.md::lead:.1%`, the paper's "
        "{paper}`+8–13 %`, math $\\varepsilon = 0.002$, code `x = 0.5`, see §3.4 and Eq. 2.1.\n"
        "```{code-cell} ipython3\nprint(0.75)\n```\n"
        "$$\ny = 0.5 x\n$$\n"
        ":width: 80%\n"
        "[arXiv](https://arxiv.org/abs/2501.01234) and Python 3.11.\n",
        encoding="utf-8",
    )
    found = typed_numbers(page)
    assert [(t.line, t.number) for t in found] == [(3, "2.27"), (3, "1.50"), (3, "52 %")]


def test_the_typed_number_check_reads_directive_bodies_and_labelled_equations(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text(
        "```{note}\nInside a note: 0.31.\n```\n"
        "After the note: 0.32.\n"
        "$$\ny = 0.5 x\n$$ (my-eq)\n"
        "After a labelled equation: 0.33.\n"
        "$$ z = 0.9 $$\n"
        "```{solution-start} ex1\n:class: dropdown\n```\n"
        "```{code-cell} ipython3\nprint(0.75)\n```\n"
        "```{solution-end}\n```\n"
        "```python\nx = 0.8\n```\n"
        "```{math}\n:label: eq2\na = 0.7\n```\n"
        "Last: 0.34.\n",
        encoding="utf-8",
    )
    assert [t.number for t in typed_numbers(page)] == ["0.31", "0.32", "0.33", "0.34"]


ALL_NOTEBOOKS = notebooks()


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=_ids(ALL_NOTEBOOKS))
def test_code_fits_the_page(path: Path):
    """Every code line fits the rendered code cell (WIDTH characters), and ruff keeps the cells formatted
    (``make format-notebooks``)."""
    long = [f"{path.name}:{n}: {len(line)} > {WIDTH}" for n, line in long_code_lines(path)]
    unformatted = formatted(path) != path.read_text(encoding="utf-8")
    assert not unformatted, f"{path.name} is not formatted: run make format-notebooks"
    assert not long, "code lines wider than the page (shorten the strings by hand):\n" + "\n".join(long)


# Reader-facing text cites what a reader can open: the paper, the book's own pages, book/contributing.md.
_INTERNAL = re.compile(r"\bthe issue\b|\bissue's\b|\bdigest §|research digest|\bBOOK_GUIDE\b", re.IGNORECASE)


def _reader_facing_files() -> list[Path]:
    files = []
    for top in ("chapters", "book", "src"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in {".md", ".py"} and path.is_file() and "_build" not in path.parts:
                files.append(path)
    return files


def test_reader_facing_text_cites_what_a_reader_can_open():
    """No "the issue", "digest §" or "BOOK_GUIDE" in chapters/, book/ or src/ (documents a reader lacks)."""
    found = []
    for path in _reader_facing_files():
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _INTERNAL.search(line):
                found.append(f"{rel}:{n}: {line.strip()[:100]}")
    hint = "cite the paper, the chapter's sections or book/contributing.md instead:\n"
    assert not found, hint + "\n".join(found)


_CROSS_PAGE_GLUE = re.compile(r"\{glue(?::text)?\}`([^`]*\.md::[^`:]*)`")


def test_glue_from_another_page_names_its_format():
    """myst-nb splits a role's text at its last colon: ``03-claims.md::key`` would read as the key
    ``03-claims.md:`` with the format ``key``; write ``03-claims.md::key:s`` (or ``:.2f``)."""
    bad = [
        f"{md.relative_to(ROOT)}: {ref}"
        for md in sorted((ROOT / "chapters").glob("*/*.md"))
        for ref in _CROSS_PAGE_GLUE.findall(md.read_text(encoding="utf-8"))
    ]
    assert not bad, "add a format (:s for text):\n" + "\n".join(bad)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.name for c in CHAPTERS])
def test_every_chapter_follows_the_template(chapter: Path):
    """Notebook names by role, the landing page's length and rubrics, no imports across chapters, labels
    with the chapter's slug (``tests/notebooks/chapter_template.py``, ``book/contributing.md``)."""
    problems = chapter_problems(chapter, ROOT / "src")
    assert not problems, "\n".join(problems)


def test_the_template_checks_fail_on_a_broken_copy_of_a_chapter(tmp_path: Path):
    """Break a copy of chapter 10 in every way the template forbids: each break is reported."""
    import shutil

    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "neurips26", src / "neurips26", ignore=shutil.ignore_patterns("*.pt"))
    chapter = tmp_path / "chapters" / "10-specblock"
    shutil.copytree(ROOT / "chapters" / "10-specblock", chapter)
    assert chapter_problems(chapter, src) == []  # the copy itself follows the template
    (chapter / "04-explore.md").rename(chapter / "04-playground.md")
    index = chapter / "index.md"
    text = index.read_text(encoding="utf-8")
    broken = text.replace("```{rubric} Prerequisites", "## Prerequisites\n```{rubric} Gone")
    index.write_text(broken + "\n" * 300, encoding="utf-8")
    method = chapter / "02-method.md"
    method.write_text(
        method.read_text(encoding="utf-8").replace(
            "\nimport sys\n", "\nimport sys\nfrom neurips26.ssd import masks\n", 1
        )
        + "\n$$\nx = 1\n$$ (eq-unprefixed)\n",
        encoding="utf-8",
    )
    (src / "neurips26" / "specblock" / "stray.py").write_text("from neurips26.thwf import thwf\n")
    problems = "\n".join(chapter_problems(chapter, src))
    for expected in (
        "04-playground.md: name it",
        "lines; keep it within",
        "one '# ' title and no other heading",
        "missing the rubrics ['Prerequisites']",
        "02-method.md imports other chapters: ['ssd']",
        "specblock/stray.py imports other chapters: ['thwf']",
        "label 'eq-unprefixed' must start with 'specblock-'",
    ):
        assert expected in problems, f"{expected!r} not reported:\n{problems}"
