"""Exporting MiniSpec specs and their test obligations as Lean 4 source (core Lean only, no Mathlib).

:func:`lean_spec` writes a spec as a section of a Lean file: the helpers, ``f_precond`` and ``f_postcond``,
each marked ``@[reducible, simp]`` as VERINA does, so that instance search sees through the definitions
and ``decide`` can evaluate them on concrete inputs. Bounded quantifiers are written
``∀ i : Nat, i < e → P`` and ``∃ i : Nat, i < e ∧ P``, the shapes that core Lean decides through
``Nat.decidableBallLT`` and ``Nat.decidableExistsLT``; ``List.Perm`` is decided by core's
``List.decidablePerm``. Unbounded quantifiers export fine but are not decidable, so their obligations need
another tactic (``tactic=``). The text reads back through :func:`~.parser.parse_spec` to the same spec.

:func:`lean_obligation` states one test obligation about concrete values, e.g.
``theorem t : f_precond #[1, -2] (5 : Nat) := by decide``; for the postcondition the ``h_precond`` argument is
supplied as ``(by decide)``, so a postcondition obligation only elaborates for inputs that satisfy the
precondition. No Lean toolchain is needed to produce the text; :func:`lean_available` says whether one is on
``PATH`` to check it.
"""

from __future__ import annotations

import numbers
import shutil

from neurips26.specbridge.minispec.ast import BOOL, CHAR, INT, NAT, STRING, Spec, Ty
from neurips26.specbridge.minispec.parser import is_identifier
from neurips26.specbridge.minispec.printer import print_spec, quote_literal
from neurips26.validation import check_choice

#: The attribute put on every exported definition (VERINA's).
LEAN_ATTRIBUTE = "@[reducible, simp]"


def lean_available() -> bool:
    """Whether a ``lean`` executable is on ``PATH``."""
    return shutil.which("lean") is not None


def lean_spec(spec: Spec) -> str:
    """``spec`` as Lean 4 definitions (helpers, ``f_precond``, ``f_postcond``) ready for ``decide``."""
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    name = spec.signature.name
    header = f"-- {name}: MiniSpec specification exported to Lean 4 (core only, no Mathlib)\n\n"
    return header + print_spec(spec, lean=True, attribute=LEAN_ATTRIBUTE)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _scalar(value: object, element: str, what: str) -> str:
    """``value`` as a Lean literal of scalar type ``element`` (inside a container: no ascription)."""
    if element in ("Nat", "Int"):
        if not _is_int(value):
            raise TypeError(f"{what} must be an int ({element}); got {type(value).__name__}")
        if element == "Nat" and int(value) < 0:  # type: ignore[call-overload]
            raise ValueError(f"{what} must be >= 0 (Nat); got {value}")
        return str(int(value))  # type: ignore[call-overload]
    if element == "Char":
        if not isinstance(value, str) or len(value) != 1:
            raise TypeError(f"{what} must be a one-character str (Char); got {value!r}")
        return quote_literal(value, "'")
    raise ValueError(f"{what}: unsupported element type {element}")  # pragma: no cover


def lean_value(value: object, ty: Ty, what: str = "value") -> str:
    """``value`` (a Python int, bool, str or list) as a Lean term of type ``ty``: ``(5 : Nat)``,
    ``(-3 : Int)``, ``true``, ``'c'``, ``"ab"``, ``#[1, -2]`` (Array), ``[1, 2]`` (List). ``what`` names the
    value in error messages."""
    if not isinstance(ty, Ty):
        raise TypeError(f"ty must be a Ty; got {type(ty).__name__}")
    if ty in (NAT, INT):
        return f"({_scalar(value, ty.name, what)} : {ty.name})"
    if ty == BOOL:
        if not isinstance(value, bool):
            raise TypeError(f"{what} must be a bool (Bool); got {type(value).__name__}")
        return "true" if value else "false"
    if ty == CHAR:
        return _scalar(value, "Char", what)
    if ty == STRING:
        if not isinstance(value, str):
            raise TypeError(f"{what} must be a str (String); got {type(value).__name__}")
        return quote_literal(value, '"')
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise TypeError(f"{what} must be a list or tuple ({ty}); got {type(value).__name__}")
    assert ty.element is not None
    items = ", ".join(_scalar(v, ty.element, f"{what}[{i}]") for i, v in enumerate(value))
    return f"#[{items}]" if ty.name == "Array" else f"[{items}]"


def lean_obligation(
    spec: Spec,
    name: str,
    inputs: dict[str, object],
    result: object = None,
    negate: bool = False,
    which: str = "pre",
    *,
    tactic: str = "decide",
) -> str:
    """A Lean theorem that the pre- (``which="pre"``) or postcondition (``"post"``, about ``result``) of
    ``spec`` holds on ``inputs`` (or fails, ``negate=True``: ``¬ (…)``), proved ``by decide`` (or ``tactic``).

    ``inputs`` maps every parameter of the signature to a Python value; ``name`` is the theorem's name. The
    text goes after :func:`lean_spec`'s definitions in the same file.
    """
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    if not is_identifier(name):
        raise ValueError(f"name must be a Lean identifier; got {name!r}")
    if not isinstance(inputs, dict):
        raise TypeError(f"inputs must be a dict from parameter name to value; got {type(inputs).__name__}")
    if not isinstance(negate, bool):
        raise TypeError(f"negate must be a bool; got {type(negate).__name__}")
    check_choice("which", which, ("pre", "post"))
    if not isinstance(tactic, str) or not tactic.strip() or "\n" in tactic:
        raise ValueError(f"tactic must be a one-line Lean tactic; got {tactic!r}")
    sig = spec.signature
    names = [p.name for p in sig.params]
    missing = [n for n in names if n not in inputs]
    extra = [k for k in inputs if k not in names]
    if missing or extra:
        raise ValueError(
            f"inputs must give exactly the parameters {names}; missing {missing}, unknown {extra}"
        )
    args = [
        lean_value(inputs[p.name], p.ty, f"inputs[{p.name!r}] (parameter {p.name} : {p.ty})")
        for p in sig.params
    ]
    if which == "pre":
        if result is not None:
            raise ValueError("result is only used with which='post'")
        goal = " ".join([f"{sig.name}_precond", *args])
    else:
        if result is None:
            raise ValueError("result must be given with which='post'")
        value = lean_value(result, sig.ret, f"result ({sig.ret})")
        goal = " ".join([f"{sig.name}_postcond", *args, value, "(by decide)"])
    if negate:
        goal = f"¬ ({goal})"
    return f"theorem {name} : {goal} := by {tactic.strip()}\n"


__all__ = ["LEAN_ATTRIBUTE", "lean_available", "lean_obligation", "lean_spec", "lean_value"]
