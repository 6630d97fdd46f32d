"""The package's modules import one another one way: no cycle, not even through an import made only for
type checking or inside a function (a cycle means two modules share a concept that wants its own home)."""

from __future__ import annotations

import ast
from pathlib import Path

import neurips26.spatialclaw as package
from tests.unit.import_cycles import find_cycle

ROOT = Path(package.__file__).parent
NAME = package.__name__


def _modules(root: Path = ROOT, name: str = NAME) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (``__init__`` is the package)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = [p for p in path.relative_to(root).with_suffix("").parts if p != "__init__"]
        out[".".join([name, *parts])] = path
    return out


def _resolve(module: str, level: int, here: str, is_package: bool) -> str:
    if not level:
        return module
    base = here.split(".")
    base = base[: len(base) - level + (1 if is_package else 0)]
    return ".".join([*base, module] if module else base)


def import_graph(root: Path = ROOT, name: str = NAME) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its AST (top level, ``TYPE_CHECKING``
    blocks, function bodies). ``from pkg import sub`` counts as importing ``pkg.sub`` only."""
    modules = _modules(root, name)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for here, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node.module or "", node.level, here, path.name == "__init__.py")
                subs = [f"{base}.{alias.name}" for alias in node.names]
                targets = [s for s in subs if s in modules] or [base]
            else:
                continue
            graph[here].update(t for t in targets if t in modules and t != here)
    return graph


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert f"{NAME}.per_frame_mask" in graph and f"{NAME}.tools.sam3" in graph  # it walked the package
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_masks_and_reconstructions_share_frame_indexing_one_way():
    graph = import_graph()
    assert f"{NAME}.frame_indexed" in graph[f"{NAME}.per_frame_mask"]
    assert f"{NAME}.reconstruction" not in graph[f"{NAME}.per_frame_mask"]


def test_the_walker_sees_type_checking_and_function_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
    (pkg / "a.py").write_text(guarded)
    (pkg / "b.py").write_text("def f():\n    from . import a\n    return a\n")
    (pkg / "c.py").write_text("from pkg import a\n")
    graph = import_graph(pkg, "pkg")
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a"}}
    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None
