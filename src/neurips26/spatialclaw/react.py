"""The structured tool-call baseline (paper §3.4): one JSON call per step, translated into one line of code.

Each step the agent emits ``{"tool": "<name>", "args": {"<kw>": <value>, ...}}``, possibly inside a
```` ```json ```` fence with prose around it (the first JSON object is taken). :func:`translate` turns it
into one line for the same kernel the code interface uses::

    {"tool": "tools.Geometry.euclidean_distance", "args": {"p1": "result_2", "p2": "result_3"}}, step 4
    →  result_4 = tools.Geometry.euclidean_distance(p1=result_2, p2=result_3)

``show`` and ``ReturnAnswer`` are emitted without an assignment; ``ReturnAnswer`` takes its one argument
positionally and ``show`` its arguments positionally in the given order (``label`` stays a keyword).

**Argument values.** A JSON string is a *Python expression*, never text: ``"result_2"`` is the variable,
``"InputImages[3]"`` a frame, ``"result_3.get_centroid_3d(result_1, frame=4)"`` a method call. Literal text
is written as a quoted Python string inside the JSON string: ``"'red chair'"``. (The released translator
guesses instead, passing a string through as code when it parses and as text otherwise; we choose one rule
so that ``"a+b"`` is an error the agent sees rather than the text ``'a+b'`` silently passed to a tool.)
JSON numbers, ``true``/``false``/``null``, lists and objects become the Python literals; the strings inside
lists and object values are expressions too, object keys are literal text.

**What an expression may contain** (:data:`RULES` names every rule an error can cite): constants, names,
attributes, subscripts and slices, tuples/lists/dicts, and unary minus on a number; at most one call per
expression, which must be a method call (``x.m(...)``) whose receiver chain is rooted at a kernel-bound
name (``known_names``), with plain arguments (no call among them, no ``*``/``**``). Every name must be
kernel-bound. Binary and boolean operators, comparisons, comprehensions, lambdas, conditional expressions,
f-strings, walrus and starred expressions are rejected, as are private or dunder attributes. So earlier
results can be referenced and inspected, but no arithmetic can be done on them — the interface's limit
that the chapter measures.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Collection, Mapping

from neurips26.validation import check_int

#: The non-``tools.*`` names a call may use.
SPECIAL_TOOLS: tuple[str, ...] = ("vlm.locate", "vlm.ask_with_thinking", "show", "ReturnAnswer")
_TOOL_PATH = re.compile(r"tools\.[A-Za-z][A-Za-z0-9_]*\.[A-Za-z][A-Za-z0-9_]*")
_JSON_FENCE = re.compile(r"```[ \t]*json[^\n]*\n(.*?)```", re.DOTALL | re.IGNORECASE)

#: The rules an argument expression can break, as cited in :class:`ToolCallError` messages.
RULES: dict[str, str] = {
    "syntax": "the value must be one Python expression",
    "binary operator": "no arithmetic (+, -, *, /, @, ...): the tool-call interface cannot compute",
    "boolean operator": "no 'and'/'or'",
    "comparison": "no comparisons",
    "comprehension": "no comprehensions or generator expressions",
    "lambda": "no lambdas",
    "conditional expression": "no 'x if c else y'",
    "f-string": "no f-strings",
    "starred": "no *args or **kwargs",
    "walrus": "no ':='",
    "unary operator": "only unary minus on a number literal",
    "nested call": "no call among a call's arguments",
    "one call": "at most one method call per expression",
    "method call": "a call must be a method call rooted at a kernel-bound name",
    "unknown name": "every name must be bound in the kernel",
    "private attribute": "no attributes starting with '_'",
    "not allowed": "only literals, names, attributes, subscripts, slices, tuples, lists and dicts",
}


class ToolCallError(ValueError):
    """A tool call that cannot be translated; the message names the tool or the broken rule."""


def _error(rule: str, where: str, detail: str = "") -> ToolCallError:
    extra = f" ({detail})" if detail else ""
    return ToolCallError(f"argument {where}: {rule}: {RULES[rule]}{extra}")


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


class _ArgumentChecker(ast.NodeVisitor):
    """Walks one argument expression and raises on the first broken rule."""

    _REJECT: dict[type, str] = {
        ast.BinOp: "binary operator",
        ast.BoolOp: "boolean operator",
        ast.Compare: "comparison",
        ast.ListComp: "comprehension",
        ast.SetComp: "comprehension",
        ast.DictComp: "comprehension",
        ast.GeneratorExp: "comprehension",
        ast.Lambda: "lambda",
        ast.IfExp: "conditional expression",
        ast.JoinedStr: "f-string",
        ast.FormattedValue: "f-string",
        ast.Starred: "starred",
        ast.NamedExpr: "walrus",
    }
    _ALLOWED = (ast.Constant, ast.Tuple, ast.List, ast.Slice, ast.Load, ast.Expression)

    def __init__(self, where: str, known: frozenset[str]) -> None:
        self.where, self.known, self.calls = where, known, 0

    def visit(self, node: ast.AST) -> None:
        rule = self._REJECT.get(type(node))
        if rule is not None:
            raise _error(rule, self.where, ast.unparse(node) if isinstance(node, ast.expr) else "")
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is not None:
            method(node)
        elif isinstance(node, self._ALLOWED):
            self.generic_visit(node)
        else:
            raise _error("not allowed", self.where, type(node).__name__)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id not in self.known:
            raise _error(
                "unknown name",
                self.where,
                f"{node.id!r} is not bound; literal text is quoted: \"'{node.id}'\"",
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            raise _error("private attribute", self.where, node.attr)
        self.visit(node.value)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.visit(node.value)
        self.visit(node.slice)

    def visit_Dict(self, node: ast.Dict) -> None:
        if any(key is None for key in node.keys):
            raise _error("starred", self.where, "**")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        number = isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
        if not (isinstance(node.op, ast.USub) and number):
            raise _error("unary operator", self.where, ast.unparse(node))

    def visit_Call(self, node: ast.Call) -> None:
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if any(isinstance(n, ast.Call) for a in arguments for n in ast.walk(a)):
            raise _error("nested call", self.where, ast.unparse(node))
        self.calls += 1
        if self.calls > 1:
            raise _error("one call", self.where, ast.unparse(node))
        if not isinstance(node.func, ast.Attribute):
            raise _error("method call", self.where, f"{ast.unparse(node.func)}(...) is not a method call")
        root = _root(node.func)
        if not isinstance(root, ast.Name) or root.id not in self.known:
            raise _error(
                "method call", self.where, f"{ast.unparse(node.func)} is not rooted at a kernel name"
            )
        self.visit(node.func)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            if keyword.arg is None:
                raise _error("starred", self.where, "**")
            self.visit(keyword.value)


def _expression(text: str, where: str, known: frozenset[str]) -> str:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise _error("syntax", where, f"{text!r}: {err.msg}; literal text is quoted: \"'...'\"") from None
    _ArgumentChecker(where, known).visit(tree)
    return ast.unparse(tree.body)


def _render(value: object, where: str, known: frozenset[str]) -> str:
    """Python source for one JSON value (module docstring)."""
    if isinstance(value, str):
        return _expression(value, where, known)
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ToolCallError(f"argument {where}: numbers must be finite; got {value}")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_render(v, f"{where}[{k}]", known) for k, v in enumerate(value)) + "]"
    if isinstance(value, dict):
        items = []
        for key, v in value.items():
            if not isinstance(key, str):
                raise ToolCallError(f"argument {where}: object keys must be strings; got {key!r}")
            items.append(f"{key!r}: {_render(v, f'{where}[{key!r}]', known)}")
        return "{" + ", ".join(items) + "}"
    raise ToolCallError(f"argument {where}: unsupported value of type {type(value).__name__}")


def extract_call(text: str) -> dict[str, object]:
    """The first JSON object in ``text``: inside the first ```` ```json ```` fence if there is one, else
    anywhere. Raises :class:`ToolCallError` if there is none."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    fence = _JSON_FENCE.search(text)
    haystack = fence.group(1) if fence is not None else text
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(haystack) if ch == "{"):
        try:
            obj, _ = decoder.raw_decode(haystack, start)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    raise ToolCallError('the response has no JSON object {"tool": ..., "args": {...}}')


def check_tool_name(tool: object) -> str:
    """``tool`` if it is ``tools.<Tool>.<method>`` or one of :data:`SPECIAL_TOOLS`; else
    :class:`ToolCallError` naming it."""
    if not isinstance(tool, str) or not (tool in SPECIAL_TOOLS or _TOOL_PATH.fullmatch(tool)):
        raise ToolCallError(
            f"unknown tool {tool!r}: use tools.<Tool>.<method> (e.g. tools.SAM3.segment_image_by_text) "
            f"or one of {SPECIAL_TOOLS}"
        )
    return tool


def translate(call: Mapping[str, object] | str, step: int, *, known_names: Collection[str]) -> str:
    """One line of Python for the tool ``call`` of ``step`` (module docstring).

    ``call`` is the parsed object or the agent's raw text; ``known_names`` are the kernel-bound names an
    argument may use (e.g. ``InputImages``, ``Metadata``, ``tools``, ``vlm``, ``result_1``, ...). Raises
    :class:`ToolCallError` (a ``ValueError``) naming the tool or the broken rule.
    """
    step = check_int("step", step, minimum=0)
    if isinstance(known_names, str) or not isinstance(known_names, Collection):
        raise TypeError(f"known_names must be a collection of names; got {type(known_names).__name__}")
    if not all(isinstance(n, str) for n in known_names):
        raise TypeError("known_names must hold only str names")
    known = frozenset(known_names)
    if isinstance(call, str):
        call = extract_call(call)
    if not isinstance(call, Mapping):
        raise TypeError(f"call must be a dict or the response text; got {type(call).__name__}")
    extra = sorted(set(call) - {"tool", "args"})
    if extra:
        raise ToolCallError(f'the call has unexpected keys {extra}; only "tool" and "args" are allowed')
    tool = check_tool_name(call.get("tool"))
    args = call.get("args") or {}
    if not isinstance(args, Mapping):
        raise ToolCallError(f'"args" of {tool} must be a JSON object; got {type(args).__name__}')
    rendered: dict[str, str] = {}
    for name, value in args.items():
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise ToolCallError(f"argument name {name!r} of {tool} is not a valid keyword")
        rendered[name] = _render(value, f"{name!r} of {tool}", known)

    if tool == "ReturnAnswer":
        if len(rendered) != 1:
            raise ToolCallError(f"ReturnAnswer takes exactly one argument; got {len(rendered)}")
        return f"ReturnAnswer({next(iter(rendered.values()))})"
    if tool == "show":
        parts = [v for k, v in rendered.items() if k != "label"]
        parts += [f"label={rendered['label']}"] if "label" in rendered else []
        return f"show({', '.join(parts)})"
    return f"result_{step} = {tool}({', '.join(f'{k}={v}' for k, v in rendered.items())})"
