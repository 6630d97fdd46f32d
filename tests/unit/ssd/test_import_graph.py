"""The claim experiments of chapter 05 live one family per module, and the package imports one way.

Each family (D1–D2, D3, D4–D5, D6, D7) may use what the families share (``claim_runs``) but no other family,
the verdicts read the families' results, and no module imports one that imports it back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import neurips26.ssd as package
from tests.unit.import_cycles import find_cycle

ROOT = Path(package.__file__).parent
NAME = package.__name__
FAMILIES = ("covariance_checks", "sample_quality", "small_data", "field_score", "twin_consistency")


def import_graph(root: Path = ROOT, name: str = NAME) -> dict[str, set[str]]:
    """Module (without the package prefix) -> the package's modules it imports anywhere in its AST
    (top level, ``TYPE_CHECKING`` blocks, function bodies); ``from pkg import sub`` counts as ``sub``."""
    modules = {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for here in modules:
        tree = ast.parse((root / f"{here}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.ImportFrom):  # relative: the package's own modules
                targets = [f"{name}.{node.module or alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target.startswith(f"{name}."):
                    sub = target[len(name) + 1 :].split(".")[0]
                    graph[here].update({sub} & modules - {here})
    return graph


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "masks" in graph["loss"]  # it walked the package
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("family", FAMILIES)
def test_each_claim_family_has_its_module_and_uses_no_other_family(family):
    graph = import_graph()
    assert family in graph, f"{family}.py is missing"
    assert not graph[family] & (set(FAMILIES) - {family}), f"{family} imports another family"
    assert "verdicts" not in graph[family] and "claim_runs" not in graph["claim_runs"]


def test_the_verdicts_read_every_family_and_the_shared_runs_no_family():
    graph = import_graph()
    assert set(FAMILIES) <= graph["verdicts"]
    assert not graph["claim_runs"] & set(FAMILIES)
    assert "experiments" not in graph  # the old monolith is split, not kept behind a shim


def test_the_walker_finds_a_cycle_and_sees_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    guarded = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
    (pkg / "a.py").write_text(guarded)
    (pkg / "b.py").write_text("def f():\n    import pkg.a\n    return pkg.a\n")
    (pkg / "c.py").write_text("from pkg import a\n")
    graph = import_graph(pkg, "pkg")
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert find_cycle(graph) == ["a", "b", "a"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None
