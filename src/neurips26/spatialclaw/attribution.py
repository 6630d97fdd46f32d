"""Why did code win? AST-based attribution of a winning trajectory (paper §5 analysis).

The paper has an LLM judge read each question that code-as-action answered correctly and the tool-call
agent did not, and label the win *code composition* (52.2 %), *control flow* (19.5 %) or
*interface-neutral* (28.3 %). We replace the judge by a static reading of the executed cells, so the label
is reproducible and its definition is explicit:

**Tool-derived values (data flow across cells).** A value is tool-derived if its expression contains a
call rooted at a tool name (``tools.*``, ``vlm.*``: :data:`TOOL_ROOTS`) or a tool-derived name; attributes,
subscripts and method results of a tool-derived value are tool-derived too. Cells are read in order and
names are tracked through every binding form: assignment (incl. unpacking; a later non-derived assignment at
the top level of a cell clears the name), augmented and annotated assignment, ``for`` and ``with``
targets, walrus, item/attribute stores (``d["a"] = c`` makes ``d`` derived), mutating methods
(``lst.append(c)``), and functions whose body uses a derived name or calls a tool. Comprehension variables
are derived inside their comprehension when they iterate over a derived value.

**Composition** — a cell contains one of these operations with **at least two tool-derived operands**:

* a binary operator (``+ - * / // % ** @`` ...; operands ``left`` and ``right``) or an augmented assignment
  (the target and the value);
* a comparison (all compared expressions), e.g. ``d_a < d_b``;
* a call of a computing function — anything that is not a tool call, a tool-object method
  (:data:`TOOL_METHODS`: what the tool-call interface can also call) or a non-computing builtin
  (:data:`NON_COMPUTING`: ``print``, ``len``, ``list``, ``zip`` ...), nor a container's ``append``,
  ``update``, ... — counting its arguments, the elements of list/tuple/set literals among them, and the
  receiver of a method call: ``np.dot(a, b)``,
  ``np.stack([a, b])``, ``a.dot(b)``, ``cKDTree(points).query(centre)``, a user-defined ``dist(a, b)``.

Subscripts are not composition (``points[mask]`` only selects; the tool-call interface can subscript), and
an operation over *one* derived value (``np.median(points, axis=0)``, ``-v``) is not either: composition
means combining outputs. A list of many outputs passed as one name (``np.mean(centroids)``) counts once.

**Control flow** — an ``if``/``while`` test, a ``for`` iterable, a comprehension's iterable or condition, a
conditional expression's test or a ``match`` subject is tool-derived.

The label is ``"composition"`` if some cell composes, else ``"control_flow"`` if some cell branches or
loops on a tool-derived value, else ``"neutral"``. This is a static approximation (no types, no scopes
beyond functions): it errs toward composition for arithmetic on two slices of the same output; a user
function's body is read with its parameters not derived, so what it computes is seen at the call (two
tool-derived arguments) rather than inside it. Cells that do not parse are skipped (they ran nothing).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

#: The labels, in order of precedence.
LABELS: tuple[str, ...] = ("composition", "control_flow", "neutral")
#: Names whose calls produce tool outputs.
TOOL_ROOTS: tuple[str, ...] = ("tools", "vlm")
#: Methods of the tools' result objects (paper §3.1); calling them is using a tool, not composing.
TOOL_METHODS: frozenset[str] = frozenset(
    {"get_mask", "get_masked_points", "get_centroid_3d", "visualize", "render_bev"}
)
#: Builtins that display, convert, measure or pack values without computing with them.
NON_COMPUTING: frozenset[str] = frozenset(
    {
        "print",
        "show",
        "ReturnAnswer",
        "len",
        "type",
        "isinstance",
        "str",
        "repr",
        "format",
        "list",
        "tuple",
        "dict",
        "set",
        "zip",
        "enumerate",
        "range",
        "reversed",
        "hasattr",
        "getattr",
    }
)
_MUTATORS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# The expression fields a compound statement evaluates itself; simple statements are read whole.
_HEADER_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("test",),
    ast.While: ("test",),
    ast.For: ("target", "iter"),
    ast.AsyncFor: ("target", "iter"),
    ast.With: ("items",),
    ast.AsyncWith: ("items",),
    ast.Match: ("subject",),
    ast.Try: (),
    ast.TryStar: (),
    ast.FunctionDef: ("decorator_list",),
    ast.AsyncFunctionDef: ("decorator_list",),
    ast.ClassDef: ("bases", "decorator_list"),
}


@dataclass(frozen=True)
class Attribution:
    """A winning trajectory's ``label`` (:data:`LABELS`), the 0-based indices of the cells that compose and
    that branch/loop on tool outputs, and a one-line ``reason`` citing the first evidence."""

    label: str
    composition_cells: tuple[int, ...]
    control_flow_cells: tuple[int, ...]
    reason: str


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _names(target: ast.AST) -> list[str]:
    """The names a target binds; for an item/attribute store, the container's name."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    if isinstance(target, ast.Tuple | ast.List):
        return [n for elt in target.elts for n in _names(elt)]
    root = _root(target)
    return [root.id] if isinstance(root, ast.Name) else []


def _short(node: ast.AST, limit: int = 50) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Reader:
    """Reads cells in order, tracking tool-derived names and recording evidence per cell."""

    def __init__(
        self, seeds: Collection[str], tool_roots: Collection[str], tool_methods: Collection[str]
    ) -> None:
        self.derived: set[str] = set(seeds)
        self.roots, self.tool_methods = frozenset(tool_roots), frozenset(tool_methods)
        self.composition: dict[int, str] = {}
        self.control: dict[int, str] = {}
        self.cell = 0

    # what is derived ------------------------------------------------------------------------------
    def _is_tool_call(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        root = _root(node.func)
        return isinstance(root, ast.Name) and root.id in self.roots

    def is_derived(self, node: ast.AST | None, extra: Collection[str] = ()) -> bool:
        if node is None:
            return False
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and (sub.id in self.derived or sub.id in extra):
                return True
            if self._is_tool_call(sub):
                return True
        return False

    # evidence -------------------------------------------------------------------------------------
    def _note(self, table: dict[int, str], node: ast.AST, text: str) -> None:
        table.setdefault(self.cell, f"cell {self.cell}, line {getattr(node, 'lineno', '?')}: {text}")

    def _operands(self, nodes: Iterable[ast.AST]) -> list[ast.AST]:
        out: list[ast.AST] = []
        for node in nodes:
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                out.extend(self._operands(node.elts))
            elif isinstance(node, ast.Starred):
                out.extend(self._operands([node.value]))
            else:
                out.append(node)
        return out

    def _count(self, nodes: Iterable[ast.AST], extra: Collection[str]) -> int:
        return sum(self.is_derived(n, extra) for n in self._operands(nodes))

    def _call_operands(self, call: ast.Call, extra: Collection[str]) -> list[ast.AST] | None:
        """The operands of a computing call, or ``None`` if the call does not compute (module docstring)."""
        if self._is_tool_call(call):
            return None
        args = [*call.args, *(k.value for k in call.keywords)]
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
            return None  # filling a container is not computing (it makes the container derived)
        if isinstance(func, ast.Name):
            return None if func.id in NON_COMPUTING else args
        if isinstance(func, ast.Attribute) and self.is_derived(func.value, extra):
            # a method of a tool-derived value: using a tool's result object, or computing with an output
            return None if func.attr in self.tool_methods else [func.value, *args]
        return args  # np.dot, math.atan2, scipy.spatial.distance.cdist, cKDTree(...), obj.method(...)

    def scan(self, node: ast.AST) -> None:
        """Record composition and control flow in the expressions under ``node`` (not nested statements)."""
        generators = [g for sub in ast.walk(node) if isinstance(sub, _COMPREHENSIONS) for g in sub.generators]
        comp_vars: set[str] = set()
        while True:  # to a fixpoint: an inner generator may iterate over an outer one's variable
            more = {n for g in generators if self.is_derived(g.iter, comp_vars) for n in _names(g.target)}
            if more <= comp_vars:
                break
            comp_vars |= more
        for sub in ast.walk(node):
            if isinstance(sub, ast.BinOp) and self._count([sub.left, sub.right], comp_vars) >= 2:
                self._note(self.composition, sub, f"arithmetic combines tool-derived values ({_short(sub)})")
            elif isinstance(sub, ast.Compare) and self._count([sub.left, *sub.comparators], comp_vars) >= 2:
                self._note(self.composition, sub, f"a comparison of tool-derived values ({_short(sub)})")
            elif isinstance(sub, ast.Call):
                operands = self._call_operands(sub, comp_vars)
                if operands is not None and self._count(operands, comp_vars) >= 2:
                    self._note(self.composition, sub, f"a call combines tool-derived values ({_short(sub)})")
            elif isinstance(sub, ast.IfExp) and self.is_derived(sub.test, comp_vars):
                self._note(self.control, sub, f"a conditional expression tests {_short(sub.test)}")
            elif isinstance(sub, _COMPREHENSIONS):
                for gen in sub.generators:
                    if self.is_derived(gen.iter, comp_vars) or any(
                        self.is_derived(c, comp_vars) for c in gen.ifs
                    ):
                        self._note(self.control, sub, f"a comprehension iterates over {_short(gen.iter)}")
            elif isinstance(sub, ast.NamedExpr) and self.is_derived(sub.value, comp_vars):
                self.derived.add(sub.target.id)

    # data flow ------------------------------------------------------------------------------------
    def _bind(self, targets: Iterable[ast.AST], derived: bool, *, top: bool) -> None:
        for target in targets:
            if derived:
                self.derived.update(_names(target))
            elif top:  # rebinding a plain name to a non-derived value clears it; item stores do not
                stores = (
                    n for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
                self.derived.difference_update(n.id for n in stores)

    @staticmethod
    def _header(node: ast.stmt) -> list[ast.AST]:
        """The expressions a statement evaluates itself (its nested statements are handled separately)."""
        fields = _HEADER_FIELDS.get(type(node))
        if fields is None:
            return [node]
        out: list[ast.AST] = []
        for name in fields:
            value = getattr(node, name)
            out.extend(value if isinstance(value, list) else [value])
        return out

    def statements(self, body: Sequence[ast.stmt], *, top: bool) -> None:
        for node in body:
            self.statement(node, top=top)

    def statement(self, node: ast.stmt, *, top: bool) -> None:
        for part in self._header(node):
            self.scan(part)
        if isinstance(node, ast.Assign):
            self._bind(node.targets, self.is_derived(node.value), top=top)
            self._mutation(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind([node.target], self.is_derived(node.value), top=top)
        elif isinstance(node, ast.AugAssign):
            if self.is_derived(node.target) and self.is_derived(node.value):
                self._note(
                    self.composition,
                    node,
                    f"augmented assignment combines tool-derived values ({_short(node)})",
                )
            self._bind([node.target], self.is_derived(node.value), top=False)
        elif isinstance(node, ast.Expr):
            self._mutation(node.value)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.derived.discard(target.id)
        elif isinstance(node, ast.If | ast.While):
            if self.is_derived(node.test):
                kind = "if" if isinstance(node, ast.If) else "while"
                self._note(self.control, node, f"`{kind}` tests {_short(node.test)}")
            for _ in range(2 if isinstance(node, ast.While) else 1):  # twice: values flow around a loop
                self.statements(node.body, top=False)
            self.statements(node.orelse, top=False)
        elif isinstance(node, ast.For | ast.AsyncFor):
            if self.is_derived(node.iter):
                self._note(self.control, node, f"`for` iterates over {_short(node.iter)}")
                self._bind([node.target], True, top=False)
            for _ in range(2):
                self.statements(node.body, top=False)
            self.statements(node.orelse, top=False)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind([item.optional_vars], self.is_derived(item.context_expr), top=False)
            self.statements(node.body, top=False)
        elif isinstance(node, ast.Try | ast.TryStar):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                self.statements(block, top=False)
        elif isinstance(node, ast.Match):
            if self.is_derived(node.subject):
                self._note(self.control, node, f"`match` on {_short(node.subject)}")
            for case in node.cases:
                self.statements(case.body, top=False)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._definition(node)

    def _mutation(self, value: ast.AST) -> None:
        """``lst.append(c)`` with a derived ``c`` makes ``lst`` derived."""
        for sub in ast.walk(value):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in _MUTATORS
            ):
                if any(self.is_derived(a) for a in [*sub.args, *(k.value for k in sub.keywords)]):
                    self.derived.update(_names(sub.func.value))

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        outer = set(self.derived)
        if not isinstance(node, ast.ClassDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p)]
            self.derived.difference_update(p.arg for p in params)  # parameters shadow outer names
        self.statements(node.body, top=False)
        uses_tools = any(self.is_derived(stmt) for stmt in node.body)
        self.derived = outer
        if uses_tools:
            self.derived.add(node.name)
        else:
            self.derived.discard(node.name)


def attribute(
    cells: Sequence[str],
    tool_result_names: Collection[str] = (),
    *,
    tool_roots: Collection[str] = TOOL_ROOTS,
    tool_methods: Collection[str] = TOOL_METHODS,
) -> Attribution:
    """Label a winning code trajectory (module docstring).

    ``cells`` are the executed cell sources in order; ``tool_result_names`` are names already holding tool
    outputs before the first cell (none in a fresh kernel); ``tool_roots`` and ``tool_methods`` define what
    counts as using a tool.
    """
    if isinstance(cells, str) or not isinstance(cells, Sequence):
        raise TypeError(f"cells must be a sequence of cell sources; got {type(cells).__name__}")
    if not all(isinstance(c, str) for c in cells):
        raise TypeError("cells must hold only str cell sources")
    for name, value in (
        ("tool_result_names", tool_result_names),
        ("tool_roots", tool_roots),
        ("tool_methods", tool_methods),
    ):
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{name} must be a collection of str names")
    reader = _Reader(tool_result_names, tool_roots, tool_methods)
    for k, source in enumerate(cells):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        reader.cell = k
        reader.statements(tree.body, top=True)
    composition, control = tuple(sorted(reader.composition)), tuple(sorted(reader.control))
    if composition:
        label, reason = "composition", reader.composition[composition[0]]
    elif control:
        label, reason = "control_flow", reader.control[control[0]]
    else:
        label, reason = "neutral", "no cell combines two tool outputs or branches or loops on one"
    return Attribution(label, composition, control, reason)


def attribution_shares(labels: Iterable[str | Attribution]) -> dict[str, float]:
    """The share of each label of :data:`LABELS` among ``labels`` (labels or :class:`Attribution`s); all
    zeros when there are none (no wins to attribute)."""
    counts = dict.fromkeys(LABELS, 0)
    for item in labels:
        label = item.label if isinstance(item, Attribution) else item
        if label not in counts:
            raise ValueError(f"labels must contain only {LABELS}; got {label!r}")
        counts[label] += 1
    total = sum(counts.values())
    return {label: (n / total if total else 0.0) for label, n in counts.items()}
