"""The chapter template, checked: what ``book/contributing.md`` asks of every chapter folder and package.

:func:`chapter_problems` lists what a chapter does differently from the template:

* its notebooks are named for their roles, in order: ``01-idea``, ``02-method``, ``03-claims``,
  ``04-explore`` (two to four of them, numbered from 01 without gaps, roles in this order);
* its landing page ``index.md`` is at most :data:`MAX_INDEX_LINES` lines, has one title, names its library
  package, and its headings are the template's rubrics, in the template's order;
* its library package imports no other chapter's package, and neither do its notebooks;
* every label (``(label)=``, ``$$ (label)``, ``:label:``, ``:name:``) starts with the chapter's slug, so
  two chapters can never define the same one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from neurips26_book.library_fingerprint import code_cells

ROLES = ("idea", "method", "claims", "explore")
MAX_INDEX_LINES = 300
RUBRICS_REQUIRED = ("The problem", "What you will learn", "Prerequisites", "The notebooks", "Scale")
RUBRICS_ORDER = (*RUBRICS_REQUIRED, "What reproduces", "What we changed and why", "References")

_NOTEBOOK = re.compile(r"^(\d\d)-([a-z0-9-]+)\.md$")
_RUBRIC = re.compile(r"^```\{rubric\}\s+(.+?)\s*$", re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.+)$", re.M)
_LABELS = re.compile(r"^\(([^)\s]+)\)=\s*$|^\$\$\s*\(([^)\s]+)\)\s*$|^:label:\s*(\S+)|^:name:\s*(\S+)", re.M)


def chapter_packages(src: Path) -> dict[str, Path]:
    """Every chapter package of the library (a subpackage that commits expected verdicts), by name."""
    return {p.parent.name: p.parent for p in sorted((src / "neurips26").glob("*/expected_claims.json"))}


def package_of(chapter: Path) -> str | None:
    """The library package a chapter's landing page names (``neurips26.<pkg>``)."""
    index = chapter / "index.md"
    found = re.search(r"neurips26\.(\w+)", index.read_text(encoding="utf-8")) if index.is_file() else None
    return found.group(1) if found else None


def _imported_packages(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return {n.split(".")[1] for n in names if n.startswith("neurips26.") and n.count(".") >= 1}


def notebook_names(chapter: Path) -> list[str]:
    """Problems with the names of a chapter's notebooks (roles in order, numbered from 01)."""
    names = sorted(p.name for p in chapter.glob("*.md") if p.name != "index.md")
    problems = []
    if not 2 <= len(names) <= 4:
        problems.append(f"{chapter.name}: {len(names)} notebooks; the template has 2 to 4")
    last_role = -1
    for k, name in enumerate(names, start=1):
        match = _NOTEBOOK.match(name)
        role = match.group(2) if match else None
        if not match or role not in ROLES:
            problems.append(f"{chapter.name}/{name}: name it NN-<role>.md with a role from {ROLES}")
            continue
        if int(match.group(1)) != k:
            problems.append(f"{chapter.name}/{name}: notebooks are numbered 01, 02, ... without gaps")
        if ROLES.index(role) <= last_role:
            problems.append(f"{chapter.name}/{name}: the roles come in the order {ROLES}")
        last_role = ROLES.index(role)
    return problems


def index_shape(chapter: Path) -> list[str]:
    """Problems with a chapter's landing page: length, title, package, rubric headings and their order."""
    index = chapter / "index.md"
    if not index.is_file():
        return [f"{chapter.name}: no index.md"]
    text = index.read_text(encoding="utf-8")
    problems = []
    n_lines = len(text.splitlines())
    if n_lines > MAX_INDEX_LINES:
        problems.append(f"{chapter.name}/index.md: {n_lines} lines; keep it within {MAX_INDEX_LINES}")
    headings = _HEADING.findall(re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))
    if [h for h, _ in headings] != ["#"]:
        problems.append(
            f"{chapter.name}/index.md: one '# ' title and no other heading (use rubrics, so the "
            f"notebooks are numbered N.1, N.2, ...); found {[f'{h} {t}' for h, t in headings]}"
        )
    if package_of(chapter) is None:
        problems.append(f"{chapter.name}/index.md: name the library package (neurips26.<pkg>)")
    rubrics = _RUBRIC.findall(text)
    missing = [r for r in RUBRICS_REQUIRED if r not in rubrics]
    if missing:
        problems.append(f"{chapter.name}/index.md: missing the rubrics {missing}")
    known = [r for r in rubrics if r in RUBRICS_ORDER]
    if known != sorted(known, key=RUBRICS_ORDER.index):
        problems.append(f"{chapter.name}/index.md: rubrics in the order {RUBRICS_ORDER}; found {known}")
    return problems


def imports(chapter: Path, src: Path) -> list[str]:
    """Problems: a chapter's package or notebooks importing another chapter's package."""
    packages = chapter_packages(src)
    own = package_of(chapter)
    others = set(packages) - {own}
    problems = []
    if own in packages:
        for path in sorted(packages[own].rglob("*.py")):
            bad = _imported_packages(ast.parse(path.read_text(encoding="utf-8"))) & others
            if bad:
                problems.append(f"{path.relative_to(src)} imports other chapters: {sorted(bad)}")
    for notebook in sorted(chapter.glob("*.md")):
        try:
            tree = ast.parse("\n".join(code_cells(notebook.read_text(encoding="utf-8"))))
        except SyntaxError as err:
            problems.append(f"{chapter.name}/{notebook.name}: code cells do not parse ({err})")
            continue
        bad = _imported_packages(tree) & others
        if bad:
            problems.append(f"{chapter.name}/{notebook.name} imports other chapters: {sorted(bad)}")
    return problems


def labels(chapter: Path) -> list[str]:
    """Problems: labels that do not start with the chapter's slug (``NN-slug`` without ``NN-``)."""
    slug = chapter.name.split("-", 1)[1]
    problems = []
    for path in sorted(chapter.glob("*.md")):
        for match in _LABELS.finditer(path.read_text(encoding="utf-8")):
            label = next(g for g in match.groups() if g)
            if not label.startswith(slug + "-"):
                problems.append(f"{chapter.name}/{path.name}: label {label!r} must start with '{slug}-'")
    return problems


def chapter_problems(chapter: Path, src: Path) -> list[str]:
    """Everything a chapter does differently from the template (empty: it follows it)."""
    return notebook_names(chapter) + index_shape(chapter) + imports(chapter, src) + labels(chapter)
