"""A notebook re-executes when the library code it can reach changes, and only then."""

import shutil
from pathlib import Path

import pytest

from neurips26_book.library_fingerprint import (
    MARKER,
    _add_fingerprint,
    fingerprint,
    notebook_imports,
    reachable_files,
)

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(REPO.glob("chapters/*/0*.md")) + sorted(REPO.glob("appendix/*.md"))


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    """A copy of the library's source, to change without touching the real one."""
    copy = tmp_path_factory.mktemp("src")
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "src" / "neurips26", copy / "neurips26", ignore=skip)
    return copy


def _fingerprints(src: Path) -> dict[str, str]:
    texts = {p.relative_to(REPO).as_posix(): p.read_text(encoding="utf-8") for p in NOTEBOOKS}
    return {name: fingerprint(text, src) for name, text in texts.items()}


def _changed_after(src: Path, module: str) -> set[str]:
    before = _fingerprints(src)
    path = src / module
    original = path.read_bytes()
    path.write_bytes(original + b"\n# a one-line change\n")
    try:
        after = _fingerprints(src)
    finally:
        path.write_bytes(original)
    return {nb for nb in before if before[nb] != after[nb]}


def test_a_change_to_one_chapter_re_executes_that_chapter_only(src):
    changed = _changed_after(src, "neurips26/specblock/dynamic_tree.py")
    assert changed and all(nb.startswith("chapters/10-specblock/") for nb in changed)
    changed = _changed_after(src, "neurips26/ssd/masks.py")
    assert changed and all(nb.startswith("chapters/05-ssd/") for nb in changed)


def test_a_shared_module_re_executes_the_notebooks_that_reach_it(src):
    changed = _changed_after(src, "neurips26/claims.py")
    importing = {
        p.relative_to(REPO).as_posix()
        for p in NOTEBOOKS
        if src / "neurips26" / "claims.py" in reachable_files(notebook_imports(p.read_text()), src)
    }
    assert changed == importing and len(importing) >= 5  # every claims notebook, not the others
    assert all("claims" in nb or "reproduc" in nb or "explore" in nb for nb in changed)
    # a committed verdict is data of the chapter's package: it re-executes that chapter
    assert _changed_after(src, "neurips26/thwf/expected_claims.json") <= {
        nb for nb in importing | set(_fingerprints(src)) if nb.startswith("chapters/01-thwf/")
    }


def test_imports_are_followed_through_relative_imports_magics_and_parents(tmp_path):
    pkg = tmp_path / "neurips26" / "chap"
    pkg.mkdir(parents=True)
    (tmp_path / "neurips26" / "__init__.py").write_text("")
    (tmp_path / "neurips26" / "shared.py").write_text("X = 1\n")
    (tmp_path / "neurips26" / "unused.py").write_text("Y = 2\n")
    (pkg / "__init__.py").write_text("from .method import run\n")
    (pkg / "method.py").write_text("from ..shared import X\n\ndef run():\n    import neurips26.chap.late\n")
    (pkg / "late.py").write_text("")
    (pkg / "expected_claims.json").write_text("{}")
    text = (
        "```{code-cell} ipython3\n:tags: [hide-cell]\n\nimport sys\nif sys:\n    %pip install x\n"
        "from neurips26.chap import run\n```\n"
    )
    assert notebook_imports(text) == {"neurips26.chap", "neurips26.chap.run"}
    names = {p.relative_to(tmp_path).as_posix() for p in reachable_files(notebook_imports(text), tmp_path)}
    assert names == {
        "neurips26/__init__.py",
        "neurips26/chap/__init__.py",
        "neurips26/chap/method.py",
        "neurips26/chap/late.py",
        "neurips26/shared.py",
        "neurips26/chap/expected_claims.json",
    }


def test_the_build_appends_a_hidden_fingerprint_cell_to_executed_notebooks():
    source = [(REPO / "chapters/10-specblock/01-idea.md").read_text(encoding="utf-8")]
    _add_fingerprint(None, "chapters/10-specblock/01-idea", source)
    tail = source[0][-300:]
    assert ":tags: [remove-cell]" in tail and MARKER in tail
    page = [(REPO / "book/scoreboard.md").read_text(encoding="utf-8")]
    _add_fingerprint(None, "book/scoreboard", page)
    assert MARKER not in page[0]  # a plain page is left alone


class _Env:
    def __init__(self, docs: dict[str, Path]):
        self.docs = docs
        self.found_docs = set(docs)

    def doc2path(self, docname: str) -> str:
        return str(self.docs[docname])


def test_outdated_notebooks_are_those_whose_reachable_code_or_the_renderer_changed(monkeypatch):
    from neurips26_book import library_fingerprint as lf

    docs = {"ch10": REPO / "chapters/10-specblock/01-idea.md", "ch05": REPO / "chapters/05-ssd/01-idea.md"}
    env = _Env(docs)
    src = REPO / "src"
    setattr(env, lf.ENV_KEY, {d: fingerprint(p.read_text(encoding="utf-8"), src) for d, p in docs.items()})
    assert lf._outdated(None, env, set(), set(), set()) == []  # nothing changed (renderer recorded now)
    getattr(env, lf.ENV_KEY)["ch10"] = "stale"
    assert lf._outdated(None, env, set(), set(), set()) == ["ch10"]
    assert lf._outdated(None, env, set(), {"ch10"}, set()) == []  # Sphinx re-reads it anyway
    setattr(env, lf.EXTENSION_KEY, "an older renderer")
    assert lf._outdated(None, env, set(), set(), set()) == ["ch05", "ch10"]
    assert getattr(env, lf.EXTENSION_KEY) == lf.extension_fingerprint()
