"""Checkpoint files shared by the chapters that ship trained weights as package data.

The rules (sizes, freshness by behaviour) are in ``book/contributing.md``.

A checkpoint ``NAME`` is two files in one directory::

    NAME.pt     a state dict with floating-point tensors in float16 (``torch.save``; read back with
                ``weights_only=True``)
    NAME.json   a sidecar: a frozen dataclass deriving from :class:`Sidecar` (each chapter defines its own
                fields), at least ``name``, ``config_hash``, ``source``, ``weights_hash`` and ``format``

This module holds what does not depend on the chapter: the canonical hash of a configuration
(:func:`config_hash`), float16 states and their hash (:func:`half_state`, :func:`weights_hash`), a
fingerprint of named source files (:func:`source_fingerprint`), atomic writing and checked reading
(:func:`save_checkpoint`, :func:`read_checkpoint`), the error classes, and the freshness check
and the freshness checks. A checkpoint is *fresh* when its configuration hash matches
(:func:`check_config`), its state dict fits today's network exactly (:func:`check_layout`: keys, shapes,
dtypes) and the loaded model reproduces the validation metrics recorded beside it on the recorded data
(:func:`check_metrics`, relative :data:`METRIC_RTOL`). Freshness is judged by behaviour, never by the bytes
of source files: a docstring edit in a shared network module leaves every checkpoint fresh, a changed
forward does not. The sidecar still records a source fingerprint, shown when a behaviour check fails.

Chapter 05 (:mod:`neurips26.ssd.checkpoints`) and chapter 10 (:mod:`neurips26.specblock.prepare`) build on
it; the hashes are those chapter 05 committed first, so its checkpoints stay fresh.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import torch

FORMAT = 1
"""The file format version a sidecar records (``format``); :func:`check_fresh` rejects another."""


class CheckpointError(RuntimeError):
    """A checkpoint cannot be used."""


class MissingCheckpointError(CheckpointError, FileNotFoundError):
    """The weights or the sidecar of a checkpoint do not exist."""


class StaleCheckpointError(CheckpointError):
    """A checkpoint was written by another configuration or by other network code."""


# ------------------------------------------------------------------------------------------- hashing


def canonical(value: Any) -> Any:
    """A JSON-able form of a configuration: dataclasses (with their class name), dicts, sequences, scalars.

    Floats become their ``repr`` (exact), dataclasses a dict with ``"__class__"`` = the class's qualified
    name, tuples and lists lists. Anything else is a ``TypeError`` naming ``config``.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"__class__": type(value).__qualname__, **out}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"config must hold dataclasses, dicts, sequences and scalars; got {type(value).__name__}")


def config_hash(config: Any) -> str:
    """SHA-256 prefix (16 hex digits) of the canonical JSON of ``config`` (dataclasses, dicts, scalars)."""
    text = json.dumps(canonical(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def source_fingerprint(files: Sequence[tuple[str, str]]) -> str:
    """SHA-256 prefix of the named source files ``(package, filename)``, in order, line endings normalised.

    ``filename`` may hold a sub-path (``"baselines/eagle3.py"``). A missing file raises ``FileNotFoundError``.
    """
    if isinstance(files, str) or not isinstance(files, Sequence) or not files:
        raise TypeError("files must be a non-empty sequence of (package, filename) pairs")
    digest = hashlib.sha256()
    for item in files:
        if not (isinstance(item, tuple) and len(item) == 2 and all(isinstance(s, str) for s in item)):
            raise TypeError(f"files must hold (package, filename) pairs of str; got {item!r}")
        package, filename = item
        digest.update(f"{package}/{filename}\n".encode())
        path = resources.files(package).joinpath(filename)
        digest.update(path.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]


def half_state(model: torch.nn.Module, *, drop: Sequence[str] = ()) -> dict[str, torch.Tensor]:
    """A CPU copy of ``model.state_dict()`` with floating-point tensors in float16, without the keys ``drop``.

    ``drop`` names entries rebuilt at load time (e.g. a frozen embedding copied from another model); a name
    that is not in the state dict is a ``KeyError``.
    """
    state = model.state_dict()
    missing = [k for k in drop if k not in state]
    if missing:
        raise KeyError(f"drop names keys the state dict lacks: {missing}")
    out = {}
    for key, value in state.items():
        if key in drop:
            continue
        value = value.detach().to("cpu", copy=True)
        out[key] = value.half() if value.is_floating_point() else value
    return out


def weights_hash(state: Mapping[str, torch.Tensor]) -> str:
    """SHA-256 prefix of a state dict's names, dtypes, shapes and bytes (identifies trained weights)."""
    digest = hashlib.sha256()
    for key in sorted(state):
        tensor = state[key].detach().cpu().contiguous()
        digest.update(f"{key}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()[:16]


# ------------------------------------------------------------------------------------------- sidecars


class Sidecar:
    """Mixin for a chapter's frozen sidecar dataclass: JSON round trip with field checks.

    Subclasses set :attr:`REQUIRED` (fields a sidecar must hold) and :attr:`JSON_FIELDS` (dict/list fields
    normalised to their JSON form in ``__post_init__``, so a sidecar read back equals the one written),
    and have fields ``name``, ``config_hash``, ``source``, ``weights_hash`` and ``format``.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for name in self.JSON_FIELDS:
            object.__setattr__(self, name, json.loads(json.dumps(getattr(self, name))))

    def to_json(self) -> str:
        """The sidecar's text (sorted keys, two-space indent)."""
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls: type[S], text: str) -> S:
        """Parse a sidecar; ``CheckpointError`` when required fields are missing or unknown ones present."""
        data = json.loads(text)
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or not set(cls.REQUIRED) <= data.keys():
            raise CheckpointError(f"the sidecar lacks one of {', '.join(cls.REQUIRED)}")
        unknown = set(data) - names
        if unknown:
            raise CheckpointError(f"the sidecar has unknown fields {sorted(unknown)}")
        return cls(**data)


S = TypeVar("S", bound=Sidecar)


def checkpoint_paths(directory: Path | str, name: str) -> tuple[Path, Path]:
    """``(directory/NAME.pt, directory/NAME.json)``; ``name`` must be non-empty without path separators."""
    if not isinstance(name, str) or not name or any(c in name for c in "/\\"):
        raise ValueError(f"name must be a non-empty str without path separators; got {name!r}")
    directory = Path(directory)
    return directory / f"{name}.pt", directory / f"{name}.json"


def save_checkpoint(directory: Path | str, state: Mapping[str, torch.Tensor], meta: Sidecar) -> Path:
    """Write ``meta.name``.pt (the float16 ``state``) and ``meta.name``.json into ``directory``.

    ``state`` must already be float16 (see :func:`half_state`) and match ``meta.weights_hash``; the files
    are written to temporary names and renamed, so a reader never sees half a checkpoint. Returns the path
    of the weights.
    """
    if not isinstance(meta, Sidecar):
        raise TypeError(f"meta must be a checkpoint sidecar; got {type(meta).__name__}")
    if any(v.is_floating_point() and v.dtype != torch.float16 for v in state.values()):
        raise ValueError("state must hold float16 tensors (use half_state)")
    if meta.weights_hash != weights_hash(state):
        raise ValueError("meta.weights_hash does not match state")
    weights, sidecar = checkpoint_paths(directory, meta.name)
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp_weights, tmp_sidecar = weights.with_suffix(".pt.tmp"), sidecar.with_suffix(".json.tmp")
    torch.save(dict(state), tmp_weights)
    tmp_sidecar.write_text(meta.to_json())
    tmp_weights.replace(weights)
    tmp_sidecar.replace(sidecar)
    return weights


def read_checkpoint(
    directory: Path | str, name: str, meta_class: type[S]
) -> tuple[dict[str, torch.Tensor], S]:
    """The float16 state dict and the sidecar (a ``meta_class``) of checkpoint ``name`` in ``directory``.

    Raises :class:`MissingCheckpointError` when a file is absent and :class:`CheckpointError` when the
    sidecar is unreadable or the weights do not match its ``weights_hash`` (a truncated or edited file).
    """
    weights, sidecar = checkpoint_paths(directory, name)
    for path in (weights, sidecar):
        if not path.is_file():
            raise MissingCheckpointError(f"checkpoint {name!r}: {path} does not exist")
    try:
        meta = meta_class.from_json(sidecar.read_text())
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"checkpoint {name!r}: cannot read {sidecar}: {error}") from error
    if meta.name != name:
        raise CheckpointError(f"checkpoint {name!r}: its sidecar names {meta.name!r}")
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any failure to unpickle means an unusable file
        raise CheckpointError(f"checkpoint {name!r}: cannot read {weights}: {error}") from error
    if not isinstance(state, dict) or weights_hash(state) != meta.weights_hash:
        raise CheckpointError(f"checkpoint {name!r}: {weights} does not match the hash in its sidecar")
    return state, meta


METRIC_RTOL = 1e-3
"""Relative tolerance within which a loaded checkpoint must reproduce its recorded validation metrics.

Another CPU's kernels move a float32 metric in its low bits (~1e-6 relative); a changed layer or forward
moves it by far more. A chapter that needs another tolerance passes ``rtol`` and says why."""


def check_config(meta: Sidecar, expected_hash: str) -> None:
    """:class:`StaleCheckpointError` unless ``meta`` has today's file format and configuration hash.

    ``expected_hash``: :func:`config_hash` of what would train the checkpoint now. This is the first of the
    three freshness checks (then :func:`check_layout` and :func:`check_metrics`); none reads source bytes.
    """
    if meta.format != FORMAT:
        raise StaleCheckpointError(
            f"checkpoint {meta.name!r} has format {meta.format}; this code reads {FORMAT}"
        )
    if meta.config_hash != expected_hash:
        raise StaleCheckpointError(
            f"checkpoint {meta.name!r} was trained with another configuration "
            f"(hash {meta.config_hash}, now {expected_hash})"
        )


def check_layout(
    name: str,
    state: Mapping[str, torch.Tensor],
    reference: Mapping[str, torch.Tensor],
    *,
    dropped: Sequence[str] = (),
) -> None:
    """:class:`StaleCheckpointError` unless ``state`` fits today's network exactly.

    ``reference``: the state dict of the network today's code builds for the checkpoint's configuration;
    ``dropped``: its entries a checkpoint leaves out (rebuilt at load time). ``state`` must hold exactly the
    other keys, each with the reference's shape, floating-point tensors in float16 and the rest in the
    reference's dtype. A changed layer width or a renamed layer fails here.
    """
    expected = set(reference) - set(dropped)
    if set(state) != expected:
        extra, missing = sorted(set(state) - expected), sorted(expected - set(state))
        raise StaleCheckpointError(
            f"checkpoint {name!r} does not fit today's network: keys only in the checkpoint {extra}, "
            f"only in the network {missing}"
        )
    for key in sorted(expected):
        have, want = state[key], reference[key]
        if tuple(have.shape) != tuple(want.shape):
            raise StaleCheckpointError(
                f"checkpoint {name!r} does not fit today's network: {key} has shape {tuple(have.shape)}, "
                f"the network {tuple(want.shape)}"
            )
        dtype = torch.float16 if want.is_floating_point() else want.dtype
        if have.dtype != dtype:
            raise StaleCheckpointError(
                f"checkpoint {name!r} does not fit today's network: {key} is {have.dtype}, expected {dtype}"
            )


def check_metrics(
    meta: Sidecar,
    measured: Mapping[str, float],
    *,
    files: Sequence[tuple[str, str]] = (),
    rtol: float = METRIC_RTOL,
    atol: float = 0.0,
) -> None:
    """:class:`StaleCheckpointError` unless the loaded model reproduces the metrics recorded beside it.

    ``measured``: metrics of the loaded checkpoint, re-measured now on the recorded validation data; each
    must be in ``meta.metrics`` and agree within ``|now - then| <= rtol * |then| + atol``. This is the
    behaviour check: a comment or a refactoring leaves it fresh, a changed forward makes it stale. The
    error shows the source fingerprint of ``files`` recorded in the sidecar and today's, as information.
    """
    if not measured:
        raise ValueError("measured must name at least one metric")
    recorded = getattr(meta, "metrics", {}) or {}
    for key, now in measured.items():
        if key not in recorded:
            raise StaleCheckpointError(f"checkpoint {meta.name!r} records no metric {key!r}")
        then = float(recorded[key])
        if not abs(float(now) - then) <= rtol * abs(then) + atol:
            source = "not recorded"
            if files:
                today = source_fingerprint(files)
                changed = "unchanged" if today == meta.source else "changed since"
                names = ", ".join(f for _, f in files)
                source = f"{meta.source} when trained, {today} today ({changed}: {names})"
            raise StaleCheckpointError(
                f"checkpoint {meta.name!r} no longer reproduces its recorded {key}: {float(now):.6g} now, "
                f"{then:.6g} recorded (tolerance {rtol:g} relative); source fingerprint {source}"
            )


# --------------------------------------------------------------------------------------------
# the size budget of committed checkpoints and the command line of a chapter's prepare module

MAX_CHECKPOINT_BYTES = 1_000_000
"""Largest checkpoint (weights + sidecar) a chapter may ship as package data (the book guide's 1 MB)."""
MAX_LARGE_CHECKPOINT_BYTES = 2_000_000
"""The cap of the one checkpoint per chapter allowed above :data:`MAX_CHECKPOINT_BYTES` (e.g. a target model
that every other checkpoint of the chapter is bound to)."""
MAX_CHAPTER_BYTES = 6_000_000
"""Largest total of one chapter's checkpoint directory (the book guide's 6 MB)."""


def checkpoint_sizes(directory: Path | str) -> dict[str, int]:
    """Bytes of each checkpoint (``NAME.pt`` + ``NAME.json``) in ``directory``, by name."""
    directory = Path(directory)
    sizes: dict[str, int] = {}
    for path in directory.glob("*"):
        if path.suffix in (".pt", ".json"):
            sizes[path.stem] = sizes.get(path.stem, 0) + path.stat().st_size
    return sizes


def check_budget(sizes: Mapping[str, int]) -> None:
    """``RuntimeError`` unless checkpoint ``sizes`` (bytes by name) keep the caps of the book guide.

    Every checkpoint ≤ :data:`MAX_CHECKPOINT_BYTES`, except at most one ≤ :data:`MAX_LARGE_CHECKPOINT_BYTES`;
    all together ≤ :data:`MAX_CHAPTER_BYTES`.
    """
    large = sorted(name for name, size in sizes.items() if size > MAX_CHECKPOINT_BYTES)
    if len(large) > 1:
        raise RuntimeError(f"checkpoints {large} are over {MAX_CHECKPOINT_BYTES} bytes; only one may be")
    for name in large:
        if sizes[name] > MAX_LARGE_CHECKPOINT_BYTES:
            raise RuntimeError(
                f"checkpoint {name!r} takes {sizes[name]} bytes, over {MAX_LARGE_CHECKPOINT_BYTES}"
            )
    total = sum(sizes.values())
    if total > MAX_CHAPTER_BYTES:
        raise RuntimeError(f"the chapter's checkpoints take {total} bytes, over {MAX_CHAPTER_BYTES}")


def write_within_budget(
    directory: Path | str, state: Mapping[str, torch.Tensor], meta: Sidecar, *, large: bool = False
) -> int:
    """:func:`save_checkpoint`, then its size in bytes; ``RuntimeError`` over its cap.

    The cap is :data:`MAX_CHECKPOINT_BYTES`, or :data:`MAX_LARGE_CHECKPOINT_BYTES` for the chapter's one
    ``large`` checkpoint (:func:`check_directory_budget` checks that there is only one).
    """
    path = save_checkpoint(directory, state, meta)
    size = path.stat().st_size + path.with_suffix(".json").stat().st_size
    cap = MAX_LARGE_CHECKPOINT_BYTES if large else MAX_CHECKPOINT_BYTES
    if size > cap:
        raise RuntimeError(f"checkpoint {meta.name!r} takes {size} bytes, over {cap}")
    metrics = getattr(meta, "metrics", {}) or {}
    shown = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items() if isinstance(v, int | float))
    seconds = getattr(meta, "train_seconds", float("nan"))
    print(f"[prepare] {meta.name}: {seconds:.0f} s, {size / 1e3:.0f} KB, {shown}", flush=True)
    return size


def check_directory_budget(directory: Path | str, written: int) -> int:
    """Total bytes of the checkpoints of ``directory``; ``RuntimeError`` when :func:`check_budget` fails."""
    sizes = checkpoint_sizes(directory)
    check_budget(sizes)
    total = sum(sizes.values())
    print(f"[prepare] {written} checkpoint(s) in {directory} ({total / 1e6:.2f} MB in the directory)")
    return total


def prepare_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    models: Sequence[Any],
    prepare: Any,
    extra: Sequence[str] = (),
) -> int:
    """The command line ``python -m neurips26.<pkg>.prepare --scale … [--only NAME]… [--out DIR] [--list]``.

    ``models``: the chapter's model table (rows with a ``name``); ``extra``: further checkpoint names
    (e.g. a target model outside the table); ``prepare(scale, only=, out=)`` trains and writes them.
    """
    names = [*extra, *(m.name for m in models)]
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--scale", default="smoke", choices=("smoke", "default", "paper"))
    parser.add_argument("--only", action="append", choices=names, metavar="NAME", help="repeatable")
    parser.add_argument("--out", default=None, help="directory (default: the package for --scale default)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name in extra:
            print(name)
        for spec in models:
            print(spec)
        return 0
    start = time.perf_counter()
    prepare(args.scale, only=args.only, out=args.out)
    print(f"[prepare] done in {time.perf_counter() - start:.0f} s")
    return 0
