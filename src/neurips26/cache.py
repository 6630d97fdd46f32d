"""Load-or-compute cache for trained models and expensive experiment results.

``cached(name, config, compute)`` returns the stored result for (name, config,
library version, source of the computing package) or runs ``compute()`` and
stores it. Entries live under the user cache directory (``NEURIPS26_CACHE_DIR``
moves it, ``NEURIPS26_NO_CACHE=1`` disables caching). Each file carries a
SHA-256 checksum of its payload: a truncated or corrupted file is detected,
reported and recomputed, never trusted.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import pickle
import threading
import warnings
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import neurips26
from neurips26.canonical import canonical

T = TypeVar("T")

CACHE_DIR_ENV = "NEURIPS26_CACHE_DIR"
NO_CACHE_ENV = "NEURIPS26_NO_CACHE"
_MAGIC = b"NEURIPS26-CACHE-1\n"


class CorruptCacheWarning(UserWarning):
    """A cache file failed its checksum or could not be unpickled; it is recomputed."""


def cache_dir() -> Path:
    """The cache directory: ``$NEURIPS26_CACHE_DIR`` or the platform's user cache directory."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("neurips26"))


def cache_enabled() -> bool:
    """False when ``NEURIPS26_NO_CACHE`` is set to a true value (1, true, yes)."""
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() not in {"1", "true", "yes", "on"}


@cache
def _source_fingerprint(package: str) -> str:
    """Hash of every .py file of a neurips26 subpackage, so code edits invalidate old entries."""
    module = __import__(package, fromlist=["__name__"])
    root = Path(inspect.getfile(module)).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_key(name: str, config: Any, package: str | None = None) -> str:
    """The hex key of (name, config, library version, source fingerprint of ``package``).

    ``config`` enters in its :func:`~neurips26.canonical.canonical` form with module-qualified class names.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name:
        raise ValueError(f"name must be a non-empty str without path separators; got {name!r}")
    payload = {
        "name": name,
        "config": canonical(config, module_names=True),
        "version": neurips26.__version__,
        "source": _source_fingerprint(package) if package else None,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


def _path(name: str, key: str) -> Path:
    return cache_dir() / f"{name}-{key}.pkl"


def _read(path: Path) -> tuple[bool, Any]:
    """(True, value) for a valid entry; (False, None) for a missing one; warns on corruption."""
    if not path.is_file():
        return False, None
    blob = path.read_bytes()
    header_len = len(_MAGIC) + 64
    if len(blob) < header_len or not blob.startswith(_MAGIC):
        warnings.warn(f"cache file {path} has a bad header; recomputing", CorruptCacheWarning, stacklevel=3)
        return False, None
    digest, payload = blob[len(_MAGIC) : header_len].decode("ascii", "replace"), blob[header_len:]
    if hashlib.sha256(payload).hexdigest() != digest:
        warnings.warn(
            f"cache file {path} failed its checksum; recomputing", CorruptCacheWarning, stacklevel=3
        )
        return False, None
    try:
        return True, pickle.loads(payload)  # noqa: S301 - our own checksummed file
    except Exception as err:  # noqa: BLE001 - any unpickling failure means recompute
        warnings.warn(
            f"cache file {path} could not be loaded ({err}); recomputing", CorruptCacheWarning, stacklevel=3
        )
        return False, None


def _write(path: Path, value: Any) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")  # one per writer, threads too
    tmp.write_bytes(_MAGIC + hashlib.sha256(payload).hexdigest().encode("ascii") + payload)
    tmp.replace(path)  # atomic: a reader never sees a half-written file


def cached(
    name: str, config: Any, compute: Callable[[], T], *, package: str | None = None, verbose: bool = True
) -> T:
    """Return the stored result for ``(name, config)`` or compute, store and return it.

    Under torchrun every rank computes (training runs data-parallel) and rank 0 alone writes the entry.
    ``package`` (e.g. ``"neurips26.thwf"``) adds a fingerprint of that package's source to the key,
    so results computed by older code are not reused. ``verbose`` prints whether the entry was
    loaded or computed (a notebook opened alone says that it trains what it is missing).
    """
    if not callable(compute):
        raise TypeError(f"compute must be callable; got {type(compute).__name__}")
    key = cache_key(name, config, package)
    if not cache_enabled():
        return compute()
    path = _path(name, key)
    found, value = _read(path)
    if found:
        if verbose:
            print(f"[cache] loaded {name} ({key[:8]})")
        return value
    if verbose:
        print(f"[cache] computing {name} ({key[:8]}); it will be reused next time")
    value = compute()
    if _stores_results():
        _write(path, value)
    return value


def _stores_results() -> bool:
    """Whether this process writes cache entries: a plain run does, and under torchrun rank 0 only (every
    rank computed the same value, and none reads it back in this run)."""
    return os.environ.get("RANK", "").strip() in ("", "0")


def clear(name: str | None = None) -> int:
    """Delete cache entries (all, or those of ``name``); returns how many files were removed."""
    root = cache_dir()
    if not root.is_dir():
        return 0
    pattern = f"{name}-*.pkl" if name else "*.pkl"
    removed = 0
    for path in root.glob(pattern):
        path.unlink()
        removed += 1
    return removed
