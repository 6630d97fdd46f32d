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
from discover import chapter_notebooks  # noqa: E402
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
