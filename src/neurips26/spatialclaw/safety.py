"""The AST safety check every cell passes before it reaches the kernel (paper §3.1).

The agent's code is parsed, never run, and rejected if it

* imports a forbidden module (:data:`FORBIDDEN_MODULES`: the paper's list plus ``builtins``), in any of
  the forms ``import X``, ``import X.y``, ``from X import y``, ``from X.y import z``; or uses a wildcard
  or relative import (a wildcard could silently rebind the reserved names below);
* names a forbidden builtin (:data:`FORBIDDEN_BUILTINS`, the paper's list), called or not (``f = eval`` is
  as bad as ``eval(...)``), or one of our additions :data:`EXTRA_FORBIDDEN_NAMES` (``globals`` can rebind
  any name through its dict; ``get_ipython`` reaches shell escapes in a Jupyter kernel; ``exit``/``quit``
  would shut the kernel down);
* reaches the builtins module through ``__builtins__`` or ``builtins``, or touches a dunder attribute or
  name (``x.__class__``, ``__subclasses__``, ``__globals__``, ``getattr(x, "__dict__")``), except the
  harmless :data:`SAFE_DUNDERS` such as ``type(x).__name__``;
* reads a private attribute (``obj._name``; our addition): the perception stand-ins keep the scene's
  ground truth in private attributes (``tools.SAM3._scene``), which an agent must not read;
* rebinds a reserved kernel name (:data:`RESERVED`, and ``InputImages_1``, ``InputImages_2``, ...) in any
  binding form, or mutates one through attribute or item assignment (our addition: ``InputImages[0] = x``
  would corrupt the inputs just as surely as ``InputImages = x``).

This is a guard against accidents and simple escapes, **not a sandbox**: Python offers many more ways out
(any object graph reachable from NumPy, for a start). The paper's check has the same purpose.

Syntax errors are *not* turned into :class:`UnsafeCodeError`: :func:`check_code` lets Python's own
``SyntaxError`` (with its line number) propagate, so the executor reports it like any other error in the
cell and the agent sees an ordinary traceback. Because the code is parsed as plain Python, IPython magics
and shell escapes (``%reset``, ``!ls``) are syntax errors too and never reach a Jupyter kernel.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

#: Modules the agent may not import (paper §3.1), plus ``builtins`` (an alias of ``__builtins__``).
FORBIDDEN_MODULES: frozenset[str] = frozenset(
    {
        "os",
        "subprocess",
        "sys",
        "shutil",
        "pathlib",
        "io",
        "socket",
        "multiprocessing",
        "threading",
        "ctypes",
        "signal",
        "importlib",
        "pickle",
        "shelve",
        "glob",
        "tempfile",
        "webbrowser",
        "http",
        "urllib",
        "requests",
        "torch",
        "tensorflow",
        "jax",
        "builtins",
    }
)
#: Builtins the agent may not name (paper §3.1).
FORBIDDEN_BUILTINS: frozenset[str] = frozenset(
    {"open", "exec", "eval", "compile", "__import__", "breakpoint", "input"}
)
#: Our additions (module docstring): names that rebind anything, shell out, or stop the kernel.
EXTRA_FORBIDDEN_NAMES: frozenset[str] = frozenset({"globals", "get_ipython", "exit", "quit"})
#: Dunders that only read a name or a docstring; every other ``__x__`` is rejected.
SAFE_DUNDERS: frozenset[str] = frozenset({"__name__", "__qualname__", "__doc__", "__version__"})
#: Names the kernel binds for the agent, which its code must not rebind (paper §3.1).
RESERVED: tuple[str, ...] = (
    "tools",
    "InputImages",
    "Metadata",
    "ReturnAnswer",
    "show",
    "feedback",
    "RefImages",
    "vlm",
)
_MULTI_VIDEO = re.compile(r"InputImages_\d+")
_ATTRIBUTE_FUNCS = frozenset({"getattr", "setattr", "delattr", "hasattr"})


class UnsafeCodeError(ValueError):
    """A cell failed the safety check. ``construct`` names what was found, ``lineno`` where (1-based)."""

    def __init__(self, message: str, *, construct: str, lineno: int) -> None:
        super().__init__(message)
        self.construct = construct
        self.lineno = lineno


def is_reserved(name: str) -> bool:
    """Whether ``name`` is a reserved kernel name (:data:`RESERVED` or ``InputImages_<n>``)."""
    return name in RESERVED or _MULTI_VIDEO.fullmatch(name) is not None


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _root_name(node: ast.AST) -> str | None:
    """The name at the base of an attribute/subscript chain (``tools`` in ``tools.SAM3.x[0]``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


@dataclass(frozen=True)
class _Violation:
    lineno: int
    col: int
    construct: str
    detail: str


class _Checker(ast.NodeVisitor):
    """Collects every violation in one pass; :func:`check_code` reports the first in source order."""

    def __init__(self) -> None:
        self.found: list[_Violation] = []

    def _flag(self, node: ast.AST, construct: str, detail: str) -> None:
        self.found.append(
            _Violation(getattr(node, "lineno", 0), getattr(node, "col_offset", 0), construct, detail)
        )

    def _bind(self, node: ast.AST, name: str | None, form: str) -> None:
        if name is not None and is_reserved(name):
            self._flag(node, "reserved name", f"rebinds the reserved name {name!r} ({form})")

    # imports ---------------------------------------------------------------------------------------
    def _imported_name(self, node: ast.AST, name: str) -> None:
        if name in FORBIDDEN_BUILTINS or name in EXTRA_FORBIDDEN_NAMES:
            self._flag(node, "forbidden builtin", f"imports the forbidden name {name!r}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root in FORBIDDEN_MODULES:
                self._flag(node, "forbidden import", f"imports the forbidden module {alias.name!r}")
            # ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c``
            self._bind(node, alias.asname or root, "import")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag(node, "relative import", "uses a relative import (the kernel has no package)")
        module = node.module or ""
        if module.split(".")[0] in FORBIDDEN_MODULES:
            self._flag(node, "forbidden import", f"imports from the forbidden module {module!r}")
        for alias in node.names:
            if alias.name == "*":
                self._flag(node, "wildcard import", f"uses 'from {module} import *', which may rebind names")
                continue
            if alias.name in FORBIDDEN_MODULES:
                self._flag(node, "forbidden import", f"imports the forbidden module {alias.name!r}")
            self._imported_name(node, alias.name)
            self._bind(node, alias.asname or alias.name, "import")

    # names and attributes --------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_BUILTINS or node.id in EXTRA_FORBIDDEN_NAMES:
            self._flag(node, "forbidden builtin", f"uses the forbidden builtin {node.id!r}")
        elif node.id in ("__builtins__", "builtins"):
            self._flag(node, "builtins access", f"accesses {node.id!r}")
        elif _is_dunder(node.id) and node.id not in SAFE_DUNDERS:
            self._flag(node, "dunder access", f"uses the dunder name {node.id!r}")
        if isinstance(node.ctx, ast.Store):
            self._bind(node, node.id, "assignment")
        elif isinstance(node.ctx, ast.Del):
            self._bind(node, node.id, "del")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_dunder(node.attr) and node.attr not in SAFE_DUNDERS:
            self._flag(node, "dunder access", f"accesses the dunder attribute {node.attr!r}")
        elif node.attr.startswith("_") and not _is_dunder(node.attr):
            self._flag(node, "private attribute", f"accesses the private attribute {node.attr!r}")
        self._mutation(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._mutation(node)
        self.generic_visit(node)

    def _mutation(self, node: ast.Attribute | ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            root = _root_name(node)
            if root is not None and is_reserved(root):
                self._flag(node, "reserved name", f"modifies the reserved name {root!r} in place")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ATTRIBUTE_FUNCS and len(node.args) >= 2:
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and isinstance(attr.value, str) and _is_dunder(attr.value):
                if attr.value not in SAFE_DUNDERS:
                    self._flag(node, "dunder access", f"calls {func.id}() with the dunder {attr.value!r}")
        self.generic_visit(node)

    # the other binding forms -----------------------------------------------------------------------
    def _arguments(self, args: ast.arguments) -> None:
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for arg in every:
            self._bind(arg, arg.arg, "parameter")

    def _type_params(self, node: ast.AST) -> None:
        for param in getattr(node, "type_params", ()):  # Python 3.12+
            self._bind(param, getattr(param, "name", None), "type parameter")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node, node.name, "def")
        self._arguments(node.args)
        self._type_params(node)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node, node.name, "class")
        self._type_params(node)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._arguments(node.args)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bind(node, node.name, "except-as")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        kind = "global" if isinstance(node, ast.Global) else "nonlocal"
        for name in node.names:
            self._bind(node, name, kind)

    visit_Nonlocal = visit_Global

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._bind(node, node.name, "match capture")
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._bind(node, node.name, "match capture")

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._bind(node, node.rest, "match capture")
        self.generic_visit(node)


def check_code(code: str) -> None:
    """Raise :class:`UnsafeCodeError` if ``code`` breaks a rule of the module docstring, else return ``None``.

    The message gives the line and names the construct, e.g. ``line 2: forbidden import: imports the
    forbidden module 'os'``. A ``SyntaxError`` propagates unchanged (module docstring).
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be a str; got {type(code).__name__}")
    tree = ast.parse(code, filename="<cell>", mode="exec")
    checker = _Checker()
    checker.visit(tree)
    if checker.found:
        first = min(checker.found, key=lambda v: (v.lineno, v.col))
        more = len(checker.found) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        message = f"line {first.lineno}: {first.construct}: {first.detail}{suffix}"
        raise UnsafeCodeError(message, construct=first.construct, lineno=first.lineno)


def is_safe(code: str) -> tuple[bool, str]:
    """``(True, "")`` if ``code`` passes :func:`check_code`, else ``(False, message)``.

    A ``SyntaxError`` still propagates: unparsable code gets no safety verdict (module docstring).
    """
    try:
        check_code(code)
    except UnsafeCodeError as err:
        return False, str(err)
    return True, ""
