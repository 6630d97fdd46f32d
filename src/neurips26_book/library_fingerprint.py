"""Re-execute a notebook when the library code it can reach changes, and only then.

The execution cache (jupyter-cache, through myst-nb) is keyed by a notebook's code cells alone, so a change
to the library would leave stale outputs behind. Before myst-nb reads a notebook, this extension appends a
hidden code cell holding a fingerprint of the library code the notebook can reach: the ``neurips26``
modules its code cells import, every module those import in turn (the chapter's subpackage and the shared
parts it uses), the parent packages' ``__init__.py``, and the data files beside them (committed verdicts,
checkpoints). A change to ``neurips26.specblock`` changes the fingerprint of chapter 10's notebooks and of
no other; a change to a shared module changes those of the notebooks that import it, directly or not.

Sphinx re-reads only the documents whose file changed; the extension also tells it (``env-get-outdated``)
to re-read every notebook whose fingerprint differs from the one recorded when it was last read, and the
changed cell then makes jupyter-cache execute it again. When the book's own extension (``neurips26_book``,
which renders the pages) changed, every page is read again; the executions still come from the cache.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

PACKAGE = "neurips26"
MARKER = "# neurips26 library fingerprint:"
"""First words of the hidden cell's comment (the cell is tagged ``remove-cell``: never rendered)."""

_CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
_MAGIC = re.compile(r"^(\s*)[%!]")
_DATA_SUFFIXES = {".json", ".pt", ".npz", ".npy", ".txt"}


def _code_of_cell(body: str) -> str:
    """A code cell's Python: its options (``:key:`` lines or a YAML block) and magics removed."""
    lines = body.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((k for k in range(1, len(lines)) if lines[k].strip() == "---"), len(lines) - 1)
        lines = lines[end + 1 :]
    while lines and lines[0].startswith(":"):
        lines = lines[1:]
    return "\n".join(_MAGIC.sub(r"\1pass  # ", line, count=1) for line in lines)


def code_cells(text: str) -> list[str]:
    """The Python of every ``{code-cell}`` of a MyST notebook's text (options removed, magics as ``pass``)."""
    return [_code_of_cell(match.group(2)) for match in _CODE_CELL.finditer(text)]


def _imported(tree: ast.AST, module: str | None, is_package: bool) -> set[str]:
    """Fully qualified names a module's (or a notebook's, ``module=None``) import statements name."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level and module is not None:
                parts = module.split(".")
                base_parts = parts if is_package else parts[:-1]
                base = ".".join(base_parts[: len(base_parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            elif node.level:
                continue
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # maybe submodules
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def _module_file(name: str, src: Path) -> Path | None:
    """The file of module ``name`` under ``src`` (``a/b.py`` or ``a/b/__init__.py``), if it exists."""
    base = src.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=4096)
def _module_imports(path: Path, name: str, mtime_ns: int, size: int) -> list[str]:
    """The ``neurips26`` names module ``name`` (file ``path``) imports (cached by the file's state)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted(_imported(tree, name, path.name == "__init__.py"))


def notebook_imports(text: str) -> set[str]:
    """The ``neurips26`` modules (and names that may be modules) a MyST notebook's code cells import."""
    names: set[str] = set()
    for code in code_cells(text):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        names |= _imported(tree, None, False)
    return names


def reachable_files(roots: Iterable[str], src: Path) -> set[Path]:
    """Every library file reachable from the modules ``roots``: modules, parent ``__init__.py`` files,
    the modules they import in turn, and the data files of every package reached."""
    todo, seen_modules, files = list(roots), set(), set()
    while todo:
        name = todo.pop()
        if name in seen_modules:
            continue
        seen_modules.add(name)
        path = _module_file(name, src)
        if path is None:
            continue  # a class or a function imported from a module, not a module
        parts = name.split(".")
        todo += [".".join(parts[:k]) for k in range(1, len(parts))]  # importing a.b.c runs a, a.b
        files.add(path)
        stat = path.stat()
        todo += _module_imports(path, name, stat.st_mtime_ns, stat.st_size)
    packages = {p.parent for p in files if p.name == "__init__.py" and p.parent != src / PACKAGE}
    for package in packages:
        files |= {
            f
            for f in package.rglob("*")
            if f.is_file() and f.suffix in _DATA_SUFFIXES and "__pycache__" not in f.parts
        }
    return files


@lru_cache(maxsize=4096)
def _file_digest(path: Path, mtime_ns: int, size: int) -> bytes:
    """SHA-256 of a file's bytes (cached by path, modification time and size: checkpoints are large)."""
    return hashlib.sha256(path.read_bytes()).digest()


def fingerprint(text: str, src: Path) -> str:
    """SHA-256 (16 hex digits) of the library files a notebook's text can reach, names and contents."""
    digest = hashlib.sha256()
    for path in sorted(reachable_files(notebook_imports(text), src)):
        stat = path.stat()
        digest.update(path.relative_to(src).as_posix().encode() + b"\0")
        digest.update(_file_digest(path, stat.st_mtime_ns, stat.st_size))
    return digest.hexdigest()[:16]


def fingerprint_cell(text: str, src: Path) -> str:
    """The hidden code cell appended to a notebook: its fingerprint in a comment."""
    return (
        "\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n"
        f"{MARKER} {fingerprint(text, src)} (the cache re-executes this page when it changes)\n```\n"
    )


def _source_dir() -> Path:
    import neurips26

    return Path(neurips26.__file__).resolve().parent.parent


ENV_KEY = "neurips26_fingerprints"
"""Attribute of the Sphinx environment: ``{docname: fingerprint}`` of every notebook when last read."""
EXTENSION_KEY = "neurips26_book_fingerprint"
"""Attribute of the Sphinx environment: the fingerprint of the extension's own source at the last build."""


def extension_fingerprint() -> str:
    """SHA-256 (16 hex digits) of the ``neurips26_book`` package's files (code and static assets)."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        stat = path.stat()
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(_file_digest(path, stat.st_mtime_ns, stat.st_size))
    return digest.hexdigest()[:16]


def _is_notebook(text: str) -> bool:
    return "{code-cell}" in text and "jupytext" in text[:2000]


def _add_fingerprint(app: Any, docname: str, source: list[str]) -> None:
    """``source-read``: append the fingerprint cell to every executed MyST notebook of the book."""
    text = source[0]
    if not _is_notebook(text):
        return
    value = fingerprint(text, _source_dir())
    source[0] = text + fingerprint_cell(text, _source_dir())
    if app is not None:
        if not hasattr(app.env, ENV_KEY):
            setattr(app.env, ENV_KEY, {})
        getattr(app.env, ENV_KEY)[docname] = value


def _outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """``env-get-outdated``: the notebooks whose reachable library code changed since they were read."""
    stored: dict[str, str] = getattr(env, ENV_KEY, {})
    rendering = extension_fingerprint()
    if getattr(env, EXTENSION_KEY, rendering) != rendering:
        setattr(env, EXTENSION_KEY, rendering)
        return sorted(env.found_docs - added - changed - removed)
    setattr(env, EXTENSION_KEY, rendering)
    src, stale = _source_dir(), []
    for docname, value in sorted(stored.items()):
        if docname in added | changed | removed:
            continue
        path = Path(env.doc2path(docname))
        if path.is_file() and fingerprint(path.read_text(encoding="utf-8"), src) != value:
            stale.append(docname)
    if stale:
        from sphinx.util import logging

        logging.getLogger(__name__).info(
            f"[fingerprint] library code changed for {len(stale)} notebook(s): " + ", ".join(stale)
        )
    return stale


def _purge(app: Any, env: Any, docname: str) -> None:
    getattr(env, ENV_KEY, {}).pop(docname, None)


def _merge(app: Any, env: Any, docnames: set[str], other: Any) -> None:
    mine = getattr(env, ENV_KEY, {})
    mine.update({d: v for d, v in getattr(other, ENV_KEY, {}).items() if d in docnames})
    setattr(env, ENV_KEY, mine)


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _add_fingerprint)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
