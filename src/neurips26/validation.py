"""Argument checks shared by every public function of the library.

Each check raises ``TypeError`` (wrong kind of object) or ``ValueError`` (right
kind, bad value) with a message that names the argument and what was expected,
so a reader who passes a wrong shape learns which argument to fix.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar

import numpy as np


def check_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (not a bool) within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int; got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}; got {value}")
    return value


def check_float(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
) -> float:
    """A finite real number within ``[minimum, maximum]`` (``(minimum, ...]`` if ``strict_min``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    if minimum is not None:
        if strict_min and value <= minimum:
            raise ValueError(f"{name} must be > {minimum}; got {value}")
        if not strict_min and value < minimum:
            raise ValueError(f"{name} must be >= {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}; got {value}")
    return value


def check_choice(name: str, value: object, choices: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    choices = tuple(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, one of {choices}; got {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


def check_array(
    name: str,
    value: object,
    *,
    ndim: int | None = None,
    shape: Sequence[int | None] | None = None,
    finite: bool = True,
    complex_ok: bool = True,
) -> np.ndarray:
    """A numeric NumPy array with the given rank/shape (``None`` in ``shape`` = any size)."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray; got {type(value).__name__}")
    if value.dtype.kind not in "biufc" or (value.dtype.kind == "c" and not complex_ok):
        allowed = "real or complex" if complex_ok else "real"
        raise TypeError(f"{name} must hold {allowed} numbers; got dtype {value.dtype}")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional; got shape {value.shape}")
    if shape is not None:
        if value.ndim != len(shape) or any(
            s is not None and s != v for s, v in zip(shape, value.shape, strict=True)
        ):
            want = tuple("any" if s is None else s for s in shape)
            raise ValueError(f"{name} must have shape {want}; got {value.shape}")
    if finite and value.size and not np.all(np.isfinite(value)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return value


T = TypeVar("T")

#: What :func:`check_tuple` asks of the order of the items: strictly increasing (a grid), no repeats, or any.
TupleOrder = Literal["increasing", "distinct", "any"]


def check_tuple(
    name: str,
    values: object,
    item: Callable[[str, object], T],
    *,
    min_len: int = 1,
    order: TupleOrder = "increasing",
) -> tuple[T, ...]:
    """A tuple of at least ``min_len`` items, each passing ``item(f"{name}[i]", value)``, in ``order``.

    Experiment configs take their grids as tuples (hashable, so they key the cache); this is the one check
    of such a grid. ``TypeError`` when ``values`` is not a tuple, ``ValueError`` when it is too short or
    out of order; item errors name the index (``ns[2] must be >= 4``). Returns the checked items.
    """
    if order not in ("increasing", "distinct", "any"):
        raise ValueError(f"order must be one of ('increasing', 'distinct', 'any'); got {order!r}")
    if not isinstance(values, tuple):
        raise TypeError(f"{name} must be a tuple; got {type(values).__name__} {values!r}")
    if len(values) < min_len:
        raise ValueError(f"{name} must have at least {min_len} item(s); got {values!r}")
    checked = tuple(item(f"{name}[{i}]", v) for i, v in enumerate(values))
    if order == "increasing" and any(b <= a for a, b in zip(checked, checked[1:], strict=False)):  # type: ignore[operator]
        raise ValueError(f"{name} must be strictly increasing; got {values!r}")
    if order == "distinct" and len(set(checked)) != len(checked):
        raise ValueError(f"{name} must not repeat a value; got {values!r}")
    return checked


def check_instances(name: str, values: object, kind: type[T]) -> tuple[T, ...]:
    """A sequence (not a single ``kind``, not a str) whose items are all ``kind`` instances, as a tuple.

    ``TypeError`` naming the argument, or the first wrong item as ``name[i]``.
    """
    if isinstance(values, kind | str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of {kind.__name__}; got {type(values).__name__}")
    items = tuple(values)
    for i, v in enumerate(items):
        if not isinstance(v, kind):
            raise TypeError(f"{name}[{i}] must be a {kind.__name__}; got {type(v).__name__}")
    return items


def check_int_tuple(
    name: str,
    values: object,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    order: TupleOrder = "increasing",
) -> tuple[int, ...]:
    """A non-empty tuple of ints in ``[minimum, maximum]`` (:func:`check_tuple`, :func:`check_int`)."""
    return check_tuple(
        name, values, lambda n, v: check_int(n, v, minimum=minimum, maximum=maximum), order=order
    )


def check_float_tuple(
    name: str,
    values: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
    order: TupleOrder = "increasing",
) -> tuple[float, ...]:
    """A non-empty tuple of finite reals in range (:func:`check_tuple`, :func:`check_float`)."""
    return check_tuple(
        name,
        values,
        lambda n, v: check_float(n, v, minimum=minimum, maximum=maximum, strict_min=strict_min),
        order=order,
    )


def check_seed(name: str, value: object) -> int:
    """A non-negative integer seed."""
    return check_int(name, value, minimum=0)
