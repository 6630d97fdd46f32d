"""Check, on a machine without a GPU, that a training step creates its tensors on the model's device.

A loss that draws noise with ``torch.randn(shape)``, builds a mask with ``torch.arange(n)`` or compares
with ``torch.tensor(targets)`` runs on a CPU and fails on a GPU, where the model's tensors live elsewhere.
PyTorch's ``meta`` device shows the same failure without a GPU: a meta tensor carries shape and dtype but
no data, and an operation that mixes it with a CPU tensor (other than a 0-d scalar) raises, as it would
with a CUDA tensor. :func:`meta_step` runs one step of ``loss_fn`` on a meta copy of the model and a meta
copy of the batch; data the trainer prepared before the step (a dataset the loss indexes, a teacher's
outputs) is taken to be on the model's device, since where it lives is decided outside the step. A trial
run (``prepare --trial``, :func:`neurips26.scales.trial_run`) makes :func:`neurips26.train.fit` do so
before its first update, so the tests that run every chapter's ``paper`` path in trial mode check its
training steps' devices too.

A meta tensor has no values to read. Input checks read some (``ids.max().item() < vocab``,
``bool((x < 0).any())``), so during the step a value read from a meta tensor returns zero (``False`` for
a truth value) instead of raising: the step goes on past its checks. A step that still cannot run on meta
(NumPy, data-dependent shapes such as ``nonzero`` or boolean-mask indexing) is reported as not checkable,
with the reason, and is not a failure: the check finds the misplaced tensors that a step reaches before it
needs real values.
"""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves, tree_map

from neurips26.scales import trial_run

META = torch.device("meta")

_MISMATCH = ("is not on the expected device", "Expected all tensors to be on the same device", "two devices")
"""Fragments of PyTorch's messages for an operation whose tensors are on different devices."""


_READS = frozenset({"item", "tolist", "__bool__", "__int__", "__float__", "__index__"})
"""Tensor methods that read values; on a meta tensor they get made-up answers during :func:`meta_step`."""


MAX_TRIES = 16
"""Tries of one step with other made-up answers before it counts as not checkable."""

MAX_READS = 10_000
"""Reads of made-up values after which a try stops (a loop waiting on a value)."""


def _on_meta(args: tuple, kwargs: dict) -> bool:
    """Whether a call works on the meta device: a meta tensor among its arguments, or ``device="meta"``."""
    device = kwargs.get("device")
    if device is not None and torch.device(device).type == "meta":
        return True
    return any(isinstance(a, torch.Tensor) and a.is_meta for a in tree_leaves((args, kwargs)))


_MADE = "_neurips26_made_in_step"
"""Attribute that marks a CPU tensor as made during the checked step (not data prepared before it)."""


def _tag(value: Any) -> Any:
    """Mark the CPU tensors among an operation's outputs as made during the step."""
    for leaf in tree_leaves(value):
        if isinstance(leaf, torch.Tensor) and not leaf.is_meta:
            setattr(leaf, _MADE, True)
    return value


def _prepared_on_meta(value: Any) -> Any:
    """A CPU tensor made before the step (not marked), put on the meta device; anything else as it is."""
    if not isinstance(value, torch.Tensor) or value.is_meta or not value.ndim or getattr(value, _MADE, False):
        return value
    return value.to(META)


class _MetaStep(TorchFunctionMode):
    """Torch calls during a meta step.

    Data prepared before the step (a dataset held by the loss, its teacher's outputs, an EMA copy of the
    model) lives wherever the trainer put it, on the model's device when it runs on a GPU: such a CPU
    tensor meeting a meta tensor is moved to meta, and so is one the step makes with ``device=`` that
    data's device. A tensor the step makes on the CPU without saying where (``torch.randn(shape)``,
    ``torch.tensor(values)``), and anything computed from it, is marked and left there, so that meeting a
    meta tensor raises, as on a GPU. ``torch.from_numpy`` bypasses torch's dispatch, so what it makes in a
    step passes for prepared data: the check misses it.

    Reading values of a meta tensor gives made-up answers instead of an error: the ``k``-th truth value
    read (``bool(t)``, an ``if`` on a tensor) is ``answers[k]`` (False past its end); numbers read
    (``.item()``, ``int(t)``, ``.tolist()``) are 1, a value most input checks accept (a positive count, an
    index in range).
    """

    def __init__(self, answers: list[bool]) -> None:
        super().__init__()
        self.answers = answers
        self.decisions = 0
        self.reads = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 - torch's protocol
        name = getattr(func, "__name__", "")
        kwargs = kwargs or {}
        generator = kwargs.get("generator")
        foreign = isinstance(generator, torch.Generator) and generator.device.type != "meta"
        if foreign and any(isinstance(a, torch.Tensor) and a.is_meta for a in tree_leaves((args, kwargs))):
            # meta kernels ignore a generator's device; CUDA's raise, so this check does it for them. A draw
            # from nothing (torch.randn(n, device=..., generator=...)) is left alone: code may draw in place
            # on meta on purpose, and route GPU draws through the generator's device.
            raise RuntimeError(
                f"Expected all tensors to be on the same device: {name} draws on the meta device from a "
                f"generator on {generator.device.type}"
            )
        if name in _READS and args and isinstance(args[0], torch.Tensor) and args[0].is_meta:
            self.reads += 1
            if self.reads > MAX_READS:
                raise RuntimeError(f"more than {MAX_READS} values read from meta tensors")
            tensor = args[0]
            if name == "__bool__":
                k = self.decisions
                self.decisions += 1
                return self.answers[k] if k < len(self.answers) else False
            if name == "tolist":
                return torch.ones(tensor.shape, dtype=tensor.dtype).tolist()
            floating = name == "__float__" or (name == "item" and tensor.is_floating_point())
            return 1.0 if floating else 1
        tensors = [leaf for leaf in tree_leaves((args, kwargs)) if isinstance(leaf, torch.Tensor)]
        # made here on the CPU: from a tensor made here, or from nothing with no device= given
        made = any(getattr(t, _MADE, False) for t in tensors) or (not tensors and "device" not in kwargs)
        if _on_meta(args, kwargs):
            args, kwargs = tree_map(_prepared_on_meta, (args, kwargs))
        out = func(*args, **kwargs)
        return _tag(out) if made else out


def _all_nonzero() -> contextlib.AbstractContextManager:
    """Let ``nonzero`` (and boolean-mask indexing) run on meta tensors, taking every element as true:
    the shapes are then those of a mask that keeps everything. A private switch of torch's meta kernels;
    where a torch lacks it, such steps stay not checkable."""
    try:
        from torch.fx.experimental import _config
    except ImportError:  # pragma: no cover - depends on the torch build
        return contextlib.nullcontext()
    if not hasattr(_config, "meta_nonzero_assume_all_nonzero"):
        return contextlib.nullcontext()
    return _config.patch(meta_nonzero_assume_all_nonzero=True)


class DevicePlacementError(RuntimeError):
    """A training step made a tensor on another device than the model's (it would fail on a GPU)."""


def mismatched_devices(error: BaseException) -> bool:
    """Whether ``error`` is PyTorch's complaint that an operation's tensors are on different devices."""
    return isinstance(error, RuntimeError) and any(part in str(error) for part in _MISMATCH)


def _attempt(model: nn.Module, loss_fn: Callable, batch: Any, move: Callable, answers: list[bool]) -> tuple:
    """One meta step with truth values answered from ``answers``: (None, n) if it ran, else (why, n), where
    ``n`` counts the truth values it read."""
    ghost = copy.deepcopy(model).to(META)
    ghost.train(model.training)
    mode = _MetaStep(answers)
    try:
        with torch.random.fork_rng(devices=[]), _all_nonzero(), mode:
            loss = loss_fn(ghost, move(batch, META))
            if isinstance(loss, torch.Tensor) and loss.requires_grad:
                loss.backward()
    except Exception as error:  # noqa: BLE001 - classified below; only a device mismatch is a failure
        if mismatched_devices(error):
            raise DevicePlacementError(
                f"a training step mixes devices: {error} (a tensor made without device=... would be on the "
                f"CPU while the model is on a GPU)"
            ) from error
        first = str(error).splitlines()[0][:160] if str(error) else ""
        return f"{type(error).__name__}: {first}", mode.decisions
    return None, mode.decisions


def meta_step(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    move: Callable[[Any, torch.device], Any] | None = None,
) -> str | None:
    """Run ``loss_fn`` and its backward pass on meta copies of ``model`` and ``batch``.

    Values read from meta tensors are made up: numbers are 1, truth values False at first. An input check
    may then raise (a mask "with no true entry"); the step is tried again with the last truth value it read
    answered True instead, and so on (a depth-first search over the answers, at most :data:`MAX_TRIES`
    tries), until a try runs to the end.
    Returns None when one did (every tensor the step made followed the model), else why the try that got
    furthest could not. Raises :class:`DevicePlacementError` as soon as a try mixes devices.

    ``move(batch, device)`` moves a batch's tensors (default :func:`neurips26.train.fit.move_batch`).
    Neither ``model`` nor torch's global random state is touched (copies are made with
    :func:`copy.deepcopy`, the tries run in a forked random state).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module; got {type(model).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable as loss_fn(model, batch); got {type(loss_fn).__name__}")
    if move is None:
        from neurips26.train.fit import move_batch as move  # (fit imports this module)
    answers: list[bool] = []
    deepest = (-1, "")  # the reason of the try that read the most truth values: it got furthest
    for _ in range(MAX_TRIES):
        reason, decisions = _attempt(model, loss_fn, batch, move, answers)
        if reason is None:
            return None
        deepest = max(deepest, (decisions, reason), key=lambda pair: pair[0])
        given = (answers + [False] * decisions)[:decisions]
        while given and given[-1]:  # backtrack past the truth values already tried both ways
            given.pop()
        if not given:
            break
        answers = [*given[:-1], True]
    return deepest[1]


def check_first_step(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    *,
    desc: str,
) -> None:
    """In a trial run on the CPU, :func:`meta_step` and :func:`report` (else nothing): what
    :func:`neurips26.train.fit` does before its first update, for training loops of their own to call
    with their first batch."""
    first = next(model.parameters(), None)
    if not trial_run() or first is None or first.device.type != "cpu":
        return
    report(desc, meta_step(model, loss_fn, batch))


def report(desc: str, outcome: str | None) -> None:
    """One line on standard error saying how the meta-device check of ``desc``'s step went."""
    said = "passed" if outcome is None else f"not checkable ({outcome})"
    print(f"[device check] {desc}: {said}", file=sys.stderr, flush=True)


__all__ = ["META", "DevicePlacementError", "check_first_step", "meta_step", "mismatched_devices", "report"]
