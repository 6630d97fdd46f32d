"""Checkpoint files shared by the chapters that ship trained weights as package data.

The rules (sizes, freshness by behaviour) are in ``book/contributing.md``.

A checkpoint ``NAME`` is two files in one directory::

    NAME.pt     a state dict with floating-point tensors in float16 (``torch.save``; read back with
                ``weights_only=True``)
    NAME.json   a sidecar: a frozen dataclass deriving from :class:`Sidecar` (each chapter defines its own
                fields), at least ``name``, ``config_hash``, ``source``, ``weights_hash`` and ``format``

This module holds what does not depend on the chapter: the configuration hash (:func:`config_hash`, of
the :func:`~neurips26.canonical.canonical` form), float16 states and their hash (:func:`half_state`,
:func:`weights_hash`), a fingerprint of named source files (:func:`source_fingerprint`), atomic writing and
checked reading (:func:`save_checkpoint`, :func:`read_checkpoint`), the error classes, the freshness
checks, the :class:`Registry` through which a chapter declares its models and gets them by one
load-or-train rule, and the size budget and command line of a chapter's ``prepare`` module. A checkpoint
is *fresh* when its configuration hash matches (:func:`check_config`), its state dict fits today's network
exactly (:func:`check_layout`: keys, shapes, dtypes) and the loaded model reproduces the validation metrics
recorded beside it on the recorded data (:func:`check_metrics`, relative :data:`METRIC_RTOL`). Freshness
is judged by behaviour, never by the bytes of source files: a docstring edit in a shared network module
leaves every checkpoint fresh, a changed forward does not. The sidecar still records a source
fingerprint, shown when a behaviour check fails.

Chapter 05 (:mod:`neurips26.ssd.prepare`) and chapter 10 (:mod:`neurips26.specblock.prepare`) declare
their models to a :class:`Registry`; the hashes are those chapter 05 committed first, so its checkpoints
stay fresh.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import torch

from neurips26 import distributed
from neurips26.cache import cache_dir
from neurips26.canonical import canonical
from neurips26.scales import TRIAL_ENV, check_scale

FORMAT = 1
"""The file format version a sidecar records (``format``); :func:`check_fresh` rejects another."""


class CheckpointError(RuntimeError):
    """A checkpoint cannot be used."""


class MissingCheckpointError(CheckpointError, FileNotFoundError):
    """The weights or the sidecar of a checkpoint do not exist."""


class StaleCheckpointError(CheckpointError):
    """A checkpoint was written by another configuration or by other network code."""


# ------------------------------------------------------------------------------------------- hashing


def config_hash(config: Any) -> str:
    """SHA-256 prefix (16 hex digits) of the compact, key-sorted JSON of ``canonical(config)``.

    :func:`~neurips26.canonical.canonical` without module names: the form chapter 05 committed first, which
    every committed checkpoint's ``config_hash`` records.
    """
    text = json.dumps(canonical(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def committed_form(config: Any, added: Mapping[str, Any]) -> dict[str, Any]:
    """The canonical form of the dataclass ``config`` without each field of ``added`` that holds the value
    given there: a field added after checkpoints were committed (e.g. with the ``paper`` scale) enters the
    configuration hash only once it leaves that value, so the committed hashes stand."""
    form = canonical(config)
    for name, committed in added.items():
        if getattr(config, name) == committed:
            del form[name]
    return form


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
    of the weights. Under torchrun only rank 0 writes (every rank holds the same weights after
    data-parallel training), and every rank then waits for it (:func:`neurips26.distributed.barrier`).
    """
    if not isinstance(meta, Sidecar):
        raise TypeError(f"meta must be a checkpoint sidecar; got {type(meta).__name__}")
    if any(v.is_floating_point() and v.dtype != torch.float16 for v in state.values()):
        raise ValueError("state must hold float16 tensors (use half_state)")
    if meta.weights_hash != weights_hash(state):
        raise ValueError("meta.weights_hash does not match state")
    weights, sidecar = checkpoint_paths(directory, meta.name)
    _write_checkpoint(weights, sidecar, state, meta)
    return weights


@distributed.main_only
def _write_checkpoint(weights: Path, sidecar: Path, state: Mapping[str, torch.Tensor], meta: Sidecar) -> None:
    """Write both files under temporary names, then rename them (on rank 0; every rank then waits)."""
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp_weights, tmp_sidecar = weights.with_suffix(".pt.tmp"), sidecar.with_suffix(".json.tmp")
    torch.save(dict(state), tmp_weights)
    tmp_sidecar.write_text(meta.to_json())
    tmp_weights.replace(weights)
    tmp_sidecar.replace(sidecar)


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


def load_half_state(name: str, model: torch.nn.Module, state: Mapping[str, torch.Tensor]) -> torch.nn.Module:
    """Load a checkpoint's float16 ``state`` into ``model`` in the model's own dtypes, after
    :func:`check_layout` against the model's state dict (every key, shape and dtype; a
    :class:`StaleCheckpointError` naming checkpoint ``name`` otherwise). Returns ``model``."""
    reference = model.state_dict()
    check_layout(name, state, reference)
    model.load_state_dict({k: v.to(reference[k].dtype) for k, v in state.items()}, strict=True)
    return model


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
# a chapter's registry of checkpoints and the one rule by which a notebook gets a model


@dataclass(frozen=True)
class Registry:
    """A chapter's checkpointed models, declared once, and the one load-or-train rule (:meth:`pretrained`).

    A chapter declares, by model name and scale (``"smoke"``, ``"default"``, ``"paper"``): ``names``, its
    models; ``expected_hash(name, scale)``, the :func:`config_hash` of what would train the model now;
    ``build(name, scale, meta, state, **context)``, the model (float32, eval mode) for a sidecar and its
    float16 state, which checks the layout (:func:`check_layout`) and anything the model is bound to (e.g.
    the target a drafter was trained for), ``context`` passed on from :meth:`load`; ``measure(name, scale,
    model)``, the metrics recorded in the sidecar, re-measured now on the recorded data; ``train(name,
    scale, verbose)``, the float16 state and sidecar that ``python -m neurips26.<pkg>.prepare`` would write,
    trained through :func:`neurips26.cache.cached`; ``source_files(name)``, the modules fingerprinted in
    the sidecar. ``chapter`` names the package (the ``[chapter]`` prefix of notes and the user-cache folder
    ``chapter-checkpoints``), ``package_dir`` the committed checkpoints, ``meta_class`` the sidecar class;
    ``rtol``/``atol`` the tolerance of :func:`check_metrics`.

    The rule: a model comes from the checkpoint directory of its scale (:meth:`checkpoint_dir`: the
    package at default, the user cache, where ``prepare --scale smoke|paper`` writes, otherwise) when a
    checkpoint is there and fresh; otherwise it is trained exactly as ``prepare`` would train it, through
    the results cache, so the next call loads it. A missing, stale or unreadable checkpoint is said in one
    line (``verbose``), except a missing one below or above the shipped scale, which is the normal case
    there (the results cache says that it trains). One rule for every scale, rather than the shipped
    checkpoints only, because a checkpoint written by ``prepare`` at any scale holds the weights the
    fallback would train (same table, sizes and seed): loading it saves the training, and the freshness
    checks guard it as they guard the shipped ones.
    """

    chapter: str
    package_dir: Path
    names: tuple[str, ...]
    meta_class: type[Sidecar]
    expected_hash: Callable[[str, str], str]
    build: Callable[..., Any]
    measure: Callable[[str, str, Any], Mapping[str, float]]
    train: Callable[[str, str, bool], tuple[Mapping[str, torch.Tensor], Sidecar]]
    source_files: Callable[[str], Sequence[tuple[str, str]]]
    shipped_scale: str = "default"
    rtol: float = METRIC_RTOL
    atol: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.chapter, str) or not self.chapter.isidentifier():
            raise ValueError(f"chapter must be a package name; got {self.chapter!r}")
        if not isinstance(self.names, tuple) or not self.names or len(set(self.names)) != len(self.names):
            raise ValueError(f"names must be a non-empty tuple of distinct names; got {self.names!r}")
        for name in self.names:
            checkpoint_paths(self.package_dir, name)  # a ValueError for a name that is not a file name
        if not (isinstance(self.meta_class, type) and issubclass(self.meta_class, Sidecar)):
            raise TypeError(f"meta_class must be a Sidecar subclass; got {self.meta_class!r}")
        for hook in ("expected_hash", "build", "measure", "train", "source_files"):
            if not callable(getattr(self, hook)):
                raise TypeError(f"{hook} must be callable; got {type(getattr(self, hook)).__name__}")
        check_scale(self.shipped_scale)

    def _name(self, name: str) -> str:
        if name not in self.names:
            raise ValueError(f"name must be one of {', '.join(self.names)}; got {name!r}")
        return name

    def checkpoint_dir(self, scale: str = "default") -> Path:
        """Where checkpoints of ``scale`` live: the package at the shipped scale, the user cache otherwise."""
        check_scale(scale)
        return (
            self.package_dir
            if scale == self.shipped_scale
            else cache_dir() / f"{self.chapter}-checkpoints" / scale
        )

    def load(
        self, name: str, scale: str = "default", *, directory: Path | str | None = None, **context: Any
    ) -> tuple[Any, Sidecar]:
        """The model of checkpoint ``name`` at ``scale`` (float32, eval mode) and its sidecar, when fresh.

        Reads ``directory`` (default :meth:`checkpoint_dir`); ``context`` goes to ``build``. Raises
        :class:`MissingCheckpointError` when it was never written and :class:`StaleCheckpointError` when it
        is not fresh: another configuration hash (:func:`check_config`), a state dict that does not fit
        (``build``), or metrics it no longer reproduces (:func:`check_metrics`).
        """
        self._name(name)
        folder = self.checkpoint_dir(scale) if directory is None else directory
        state, meta = read_checkpoint(folder, name, self.meta_class)
        check_config(meta, self.expected_hash(name, scale))
        model = self.build(name, scale, meta, state, **context)
        measured = self.measure(name, scale, model)
        check_metrics(meta, measured, files=self.source_files(name), rtol=self.rtol, atol=self.atol)
        return model, meta

    def pretrained(self, name: str, scale: str = "default", *, verbose: bool = True) -> tuple[Any, Sidecar]:
        """Model ``name`` at ``scale`` by the registry's rule (class docstring): a fresh checkpoint, else
        the training ``prepare`` would run, through the results cache; returns the model and its sidecar."""
        self._name(name)
        try:
            return self.load(name, scale)
        except MissingCheckpointError as why:
            if verbose and scale == self.shipped_scale:
                print(f"[{self.chapter}] {why}: training {name!r} instead, kept in the cache")
        except CheckpointError as why:
            if verbose:
                print(f"[{self.chapter}] {why}: training {name!r} instead, kept in the cache")
        state, meta = self.train(name, scale, verbose)
        return self.build(name, scale, meta, state), meta

    def chosen(self, only: Sequence[str] | None) -> tuple[str, ...]:
        """The names a ``prepare --only`` selects: all of :attr:`names` for None, else each of ``only``
        checked (``ValueError`` naming ``only``)."""
        if only is None:
            return self.names
        if isinstance(only, str):
            raise TypeError("only must be a sequence of names, not a str")
        bad = [n for n in only if n not in self.names]
        if bad:
            raise ValueError(
                f"only must name models of {self.chapter}: {', '.join(self.names)}; got {bad[0]!r}"
            )
        return tuple(only)

    def write(
        self,
        names: Sequence[str],
        scale: str,
        directory: Path | str,
        train: Callable[[str], tuple[Mapping[str, torch.Tensor], Sidecar]],
        *,
        max_total: int | None = None,
        large: str | None = None,
    ) -> list[Sidecar]:
        """What a chapter's ``prepare`` does: for each of ``names``, keep the checkpoint in ``directory``
        when it loads fresh (an interrupted run resumes), else ``train(name)`` and write it within the
        per-checkpoint cap (:data:`MAX_LARGE_CHECKPOINT_BYTES` for the chapter's one ``large`` checkpoint,
        if it names one); then check the directory against the book's caps and ``max_total`` (default
        :data:`MAX_CHAPTER_BYTES`; ``RuntimeError`` over it). Returns the sidecars written. The caps hold
        at the shipped scale, whose checkpoints are package data; the other scales' checkpoints live in the
        user cache (:meth:`checkpoint_dir`), and a ``paper`` model may be as large as the paper's."""
        capped = scale == self.shipped_scale
        cap = MAX_CHAPTER_BYTES if max_total is None else max_total
        folder = Path(directory)
        written: list[Sidecar] = []
        for name in names:
            try:
                self.load(self._name(name), scale, directory=folder)
                print(f"[prepare] {name}: fresh in {folder}, kept", flush=True)
                continue
            except CheckpointError:
                pass
            state, meta = train(name)
            write_within_budget(folder, state, meta, large=name == large, capped=capped)
            written.append(meta)
        total = check_directory_budget(folder, len(written), capped=capped)
        if capped and total > cap:
            raise RuntimeError(f"the chapter's checkpoints take {total} bytes, over {cap}")
        return written


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
    directory: Path | str,
    state: Mapping[str, torch.Tensor],
    meta: Sidecar,
    *,
    large: bool = False,
    capped: bool = True,
) -> int:
    """:func:`save_checkpoint`, then its size in bytes; ``RuntimeError`` over its cap (``capped``: the
    checkpoint ships as package data; False for a scale written to the user cache).

    The cap is :data:`MAX_CHECKPOINT_BYTES`, or :data:`MAX_LARGE_CHECKPOINT_BYTES` for the chapter's one
    ``large`` checkpoint (:func:`check_directory_budget` checks that there is only one). The other ranks of
    a torchrun group write and check nothing and return 0.
    """
    path = save_checkpoint(directory, state, meta)
    if not distributed.is_main():
        return 0
    size = path.stat().st_size + path.with_suffix(".json").stat().st_size
    cap = MAX_LARGE_CHECKPOINT_BYTES if large else MAX_CHECKPOINT_BYTES
    if capped and size > cap:
        raise RuntimeError(f"checkpoint {meta.name!r} takes {size} bytes, over {cap}")
    metrics = getattr(meta, "metrics", {}) or {}
    shown = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items() if isinstance(v, int | float))
    seconds = getattr(meta, "train_seconds", float("nan"))
    print(f"[prepare] {meta.name}: {seconds:.0f} s, {size / 1e3:.0f} KB, {shown}", flush=True)
    return size


def check_directory_budget(directory: Path | str, written: int, *, capped: bool = True) -> int:
    """Total bytes of the checkpoints of ``directory``; ``RuntimeError`` when :func:`check_budget` fails
    (``capped``; uncapped, the total only). Rank 0 checks; the other ranks of a torchrun group return 0."""
    if not distributed.is_main():
        return 0
    sizes = checkpoint_sizes(directory)
    if capped:
        check_budget(sizes)
    total = sum(sizes.values())
    print(f"[prepare] {written} checkpoint(s) in {directory} ({total / 1e6:.2f} MB in the directory)")
    return total


@dataclass(frozen=True)
class ModelRow:
    """One row of a chapter's model table for :func:`prepare_main`: a checkpoint ``name`` and its ``role``
    in a few words (``--list`` prints ``name  (role)``)."""

    name: str
    role: str

    def __str__(self) -> str:
        return f"{self.name}  ({self.role})"


def prepare_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    models: Sequence[Any],
    prepare: Any,
    extra: Sequence[str] = (),
) -> int:
    """The command line ``python -m neurips26.<pkg>.prepare --scale … [--only NAME]… [--out DIR] [--list]
    [--trial]`` (``--trial`` sets :data:`~neurips26.scales.TRIAL_ENV` for the chapter's plan to read).

    ``models``: the chapter's model table (rows with a ``name``); ``extra``: further checkpoint names
    (e.g. a target model outside the table); ``prepare(scale, only=, out=)`` trains and writes them.
    """
    names = [*extra, *(m.name for m in models)]
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--scale", default="smoke", choices=("smoke", "default", "paper"))
    parser.add_argument("--only", action="append", choices=names, metavar="NAME", help="repeatable")
    parser.add_argument("--out", default=None, help="directory (default: the package for --scale default)")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument(
        "--trial",
        action="store_true",
        help="one update per model on the smallest data: check that the path runs (writes trial checkpoints)",
    )
    args = parser.parse_args(argv)
    if args.trial:
        os.environ[TRIAL_ENV] = "1"  # read by the chapter's plan (neurips26.scales.trial_run)
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
