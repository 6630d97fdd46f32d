"""The canonical, JSON-able form of a configuration, which keys both the results cache and checkpoints.

:func:`canonical` is the one function that turns a configuration (dataclasses, dicts, lists, tuples,
scalars) into plain JSON values; :func:`neurips26.cache.cache_key` and
:func:`neurips26.checkpoint_files.config_hash` hash its JSON. The two call it with different
``module_names``, because the strings they hash were fixed before the two were merged and must stay
byte-identical: a result-cache key names a dataclass by module and qualified name
(``"neurips26.ssd.denoiser.DenoiserConfig"``), a checkpoint's configuration hash by qualified name only
(``"DenoiserConfig"``, as chapter 05 committed it first). Changing either form would turn every cached
result into a recomputation, or every committed checkpoint stale.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def canonical(value: Any, *, module_names: bool = False) -> Any:
    """A JSON-able canonical form of the configuration ``value``.

    Dataclass instances become a dict of their fields plus ``"__class__"``: the class's qualified name,
    prefixed with its module when ``module_names`` (the result-cache form; module docstring). Dicts get
    ``str`` keys in sorted order, lists and tuples become lists, ``str``/``int``/``bool``/``None`` stay,
    floats become their ``repr`` (exact, so ``1e-3`` and ``1e-3 + 1e-12`` differ), and 0-d numpy scalars
    their Python value. Anything else is a ``TypeError`` naming ``config``.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {
            f.name: canonical(getattr(value, f.name), module_names=module_names)
            for f in dataclasses.fields(value)
        }
        cls = type(value)
        name = f"{cls.__module__}.{cls.__qualname__}" if module_names else cls.__qualname__
        return {"__class__": name, **fields}
    if isinstance(value, dict):
        return {
            str(k): canonical(v, module_names=module_names)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(value, list | tuple):
        return [canonical(v, module_names=module_names) for v in value]
    if isinstance(value, str | int | bool) or value is None:
        return value
    if isinstance(value, float):
        return repr(value)
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a numpy scalar
        return canonical(value.item(), module_names=module_names)
    raise TypeError(
        f"config must be built from dataclasses, dicts, lists, tuples, str, int, float, bool or None; "
        f"got {type(value).__name__}"
    )
