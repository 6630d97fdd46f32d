"""One training loop for every chapter: AdamW, warm-up + cosine learning rate, clipping, evaluation.

``fit(model, loss_fn, batches, steps=..., seed=...)`` trains ``model`` in place and returns a
:class:`History` (loss, learning rate, gradient norm, evaluation values, data seen, wall time per step)
that a notebook plots. It is deterministic under ``seed``: on the same machine, two runs from the same
initial weights and the same batches give bitwise the same loss curve.

The learning-rate schedule (:func:`lr_at`) is a pure function of the step, so a test or a figure can
show it without training. Progress is a ``tqdm.auto`` bar, shown by the rule of :func:`progress_enabled`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from neurips26 import distributed
from neurips26.progress import progress_enabled
from neurips26.train import device_check
from neurips26.validation import check_choice, check_float, check_int, check_seed


def lr_at(step: int, *, lr: float, steps: int, warmup: int = 0, min_lr_ratio: float = 0.1) -> float:
    """Learning rate of update ``step`` (0-based) of ``steps``: linear warm-up, then cosine decay.

    With ``u = step + 1`` the number of the update, ``W = warmup`` and ``r = min_lr_ratio``::

        lr_u = lr * u / W                                            for u <= W   (warm-up)
        lr_u = lr * (r + (1 - r) * (1 + cos(pi * p)) / 2),  p = (u - W) / (steps - W)   for u > W

    so the peak ``lr`` is used by update ``W`` (the last warm-up update), the decay reaches
    ``(1 + r) lr / 2`` half-way through it and ``r * lr`` at the last update.
    """
    steps = check_int("steps", steps, minimum=1)
    step = check_int("step", step, minimum=0, maximum=steps - 1)
    lr = check_float("lr", lr, minimum=0.0, strict_min=True)
    warmup = check_int("warmup", warmup, minimum=0, maximum=steps)
    min_lr_ratio = check_float("min_lr_ratio", min_lr_ratio, minimum=0.0, maximum=1.0)
    u = step + 1
    if u <= warmup:
        return lr * u / warmup
    p = (u - warmup) / (steps - warmup)  # in (0, 1]
    return lr * (min_lr_ratio + (1.0 - min_lr_ratio) * 0.5 * (1.0 + math.cos(math.pi * p)))


@dataclass(frozen=True)
class FitConfig:
    """The settings of :func:`fit` (validated here, so a bad value names its field)."""

    steps: int
    seed: int
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup: int = 0
    min_lr_ratio: float = 0.1
    grad_clip: float | None = 1.0
    betas: tuple[float, float] = (0.9, 0.95)
    eval_every: int = 100
    early_stop_patience: int | None = None
    monitor: str | None = None
    mode: str = "min"
    lr_scale: Mapping[str, float] | None = None
    no_decay: Sequence[str] | None = None
    micro_batches: int = 1
    precision: str | None = None

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        check_seed("seed", self.seed)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("weight_decay", self.weight_decay, minimum=0.0)
        check_int("warmup", self.warmup, minimum=0, maximum=self.steps)
        check_float("min_lr_ratio", self.min_lr_ratio, minimum=0.0, maximum=1.0)
        if self.grad_clip is not None:
            check_float("grad_clip", self.grad_clip, minimum=0.0, strict_min=True)
        if not isinstance(self.betas, tuple) or len(self.betas) != 2:
            raise TypeError(f"betas must be a tuple of two floats; got {self.betas!r}")
        for i, beta in enumerate(self.betas):
            check_float(f"betas[{i}]", beta, minimum=0.0, maximum=0.999999)
        check_int("eval_every", self.eval_every, minimum=1)
        if self.early_stop_patience is not None:
            check_int("early_stop_patience", self.early_stop_patience, minimum=1)
        if self.monitor is not None and not isinstance(self.monitor, str):
            raise TypeError(f"monitor must be a str or None; got {type(self.monitor).__name__}")
        check_choice("mode", self.mode, ("min", "max"))
        check_int("micro_batches", self.micro_batches, minimum=1)
        if self.precision is not None:
            check_choice("precision", self.precision, ("bf16",))
        if self.lr_scale is not None:
            if not isinstance(self.lr_scale, Mapping):
                kind = type(self.lr_scale).__name__
                raise TypeError(f"lr_scale must be a mapping of name prefix -> factor or None; got {kind}")
            for prefix, factor in self.lr_scale.items():
                _check_prefix("lr_scale", prefix)
                check_float(f"lr_scale[{prefix!r}]", factor, minimum=0.0, strict_min=True)
            # A plain dict copy: the caller's mapping may change later; a dict still pickles with History.
            object.__setattr__(self, "lr_scale", {p: float(f) for p, f in self.lr_scale.items()})
        if self.no_decay is not None:
            if isinstance(self.no_decay, str) or not isinstance(self.no_decay, Sequence):
                kind = type(self.no_decay).__name__
                raise TypeError(f"no_decay must be a sequence of prefixes (not a str) or None; got {kind}")
            for prefix in self.no_decay:
                _check_prefix("no_decay", prefix)
            object.__setattr__(self, "no_decay", tuple(self.no_decay))


def _check_prefix(name: str, prefix: object) -> str:
    """A parameter-name prefix: a non-empty str without a leading or trailing dot."""
    if not isinstance(prefix, str):
        raise TypeError(f"{name} prefixes must be str; got {type(prefix).__name__} {prefix!r}")
    if not prefix or prefix.startswith(".") or prefix.endswith("."):
        raise ValueError(f"{name} prefixes must be non-empty, without a leading/trailing dot; got {prefix!r}")
    return prefix


def _under(name: str, prefix: str) -> bool:
    """Whether parameter ``name`` is ``prefix`` or under it (``"K"`` covers ``"K.weight"``, not ``"Kb"``)."""
    return name == prefix or name.startswith(prefix + ".")


def _param_groups(
    named: list[tuple[str, nn.Parameter]], config: FitConfig
) -> tuple[list[dict[str, Any]], list[float]]:
    """AdamW parameter groups and each group's learning-rate factor.

    Weight decay applies to matrices and higher-rank weights only (never to biases or norm gains) and,
    with ``config.no_decay``, not to parameters under those name prefixes. With ``config.lr_scale`` a
    parameter's learning rate is the scheduled rate times the factor of the longest prefix it lies
    under (1 when none). With both None the groups are exactly the historical two (decayed, undecayed),
    so trainings that pass neither are bit-identical to before these options existed.
    """
    params = [p for _, p in named]
    if config.lr_scale is None and config.no_decay is None:
        decay = [p for p in params if p.ndim >= 2]
        undecayed = [p for p in params if p.ndim < 2]
        groups = [
            {"params": group, "weight_decay": wd}
            for group, wd in ((decay, config.weight_decay), (undecayed, 0.0))
            if group
        ]
        return groups, [1.0] * len(groups)
    names = [n for n, _ in named]
    lr_scale = dict(config.lr_scale or {})
    no_decay = tuple(config.no_decay or ())
    for option, prefixes in (("lr_scale", tuple(lr_scale)), ("no_decay", no_decay)):
        for prefix in prefixes:
            if not any(_under(n, prefix) for n in names):
                shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
                raise ValueError(
                    f"{option} prefix {prefix!r} matches no trainable parameter of the model ({shown})"
                )
    keyed: dict[tuple[float, bool], list[nn.Parameter]] = {}
    for name, p in named:
        matches = [prefix for prefix in lr_scale if _under(name, prefix)]
        factor = lr_scale[max(matches, key=len)] if matches else 1.0
        decays = p.ndim >= 2 and not any(_under(name, prefix) for prefix in no_decay)
        keyed.setdefault((factor, decays), []).append(p)
    groups = [
        {"params": group, "weight_decay": config.weight_decay if decays else 0.0}
        for (_, decays), group in keyed.items()
    ]
    return groups, [factor for factor, _ in keyed]


@dataclass
class History:
    """What :func:`fit` measured, as plain lists a notebook plots.

    Training records, one per update ``s = 0 .. steps-1``: ``step`` (``s``), ``loss`` (of that update's
    batch, before the update), ``lr``, ``grad_norm`` (global L2 norm before clipping), ``seen``
    (cumulative tokens or samples, see ``seen_unit``) and ``wall_time`` (seconds since the start).
    Evaluation records: ``eval_step`` (updates done when evaluated) and ``eval[name]`` per metric.
    """

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    seen: list[int] = field(default_factory=list)
    wall_time: list[float] = field(default_factory=list)
    eval_step: list[int] = field(default_factory=list)
    eval: dict[str, list[float]] = field(default_factory=dict)
    seen_unit: str = "samples"
    stopped_early: bool = False
    best_step: int | None = None
    best_value: float | None = None
    config: FitConfig | None = None

    def smoothed_loss(self, window: int = 20) -> np.ndarray:
        """Trailing moving average of the loss over ``window`` updates (shorter at the start)."""
        window = check_int("window", window, minimum=1)
        loss = np.asarray(self.loss, dtype=float)
        csum = np.concatenate([[0.0], np.cumsum(loss)])
        lo = np.maximum(np.arange(1, len(loss) + 1) - window, 0)
        return (csum[1:] - csum[lo]) / (np.arange(1, len(loss) + 1) - lo)

    @property
    def throughput(self) -> float:
        """``seen_unit`` (tokens or samples) per wall-clock second over the whole run."""
        return self.seen[-1] / self.wall_time[-1] if self.wall_time and self.wall_time[-1] > 0 else math.nan


def _batch_source(batches: Any) -> Callable[[int], Any]:
    """``batches(step)`` for a callable; ``next(iterator)`` otherwise (a clear error when it runs out)."""
    if callable(batches):
        return batches
    if isinstance(batches, Iterator):
        iterator = batches
    elif isinstance(batches, Iterable):
        iterator = iter(batches)
    else:
        kind = type(batches).__name__
        raise TypeError(f"batches must be a callable batches(step) or an iterable; got {kind}")

    def next_batch(step: int) -> Any:
        try:
            return next(iterator)
        except StopIteration:
            raise ValueError(
                f"batches ran out after {step} steps; pass itertools.cycle(batches) or fewer steps"
            ) from None

    return next_batch


def _tensors(batch: Any) -> list[torch.Tensor]:
    """The tensors of a batch: a tensor, a tuple/list/dict of them, or a dataclass holding them."""
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, Mapping):
        items: Iterable[Any] = batch.values()
    elif dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        items = (getattr(batch, f.name) for f in dataclasses.fields(batch))
    elif isinstance(batch, list | tuple):
        items = batch
    else:
        return []
    return [t for item in items for t in _tensors(item)]


def move_batch(batch: Any, device: torch.device) -> Any:
    """``batch`` with every tensor moved to ``device`` (same container types)."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, Mapping):
        return type(batch)({k: move_batch(v, device) for k, v in batch.items()})
    if dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        changes = {f.name: move_batch(getattr(batch, f.name), device) for f in dataclasses.fields(batch)}
        return dataclasses.replace(batch, **changes)
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a NamedTuple
        return type(batch)(*(move_batch(v, device) for v in batch))
    if isinstance(batch, list | tuple):
        return type(batch)(move_batch(v, device) for v in batch)
    return batch


def _batch_size(batch: Any) -> tuple[int, str]:
    """(count, unit): tokens (``numel``) when the first tensor holds integer ids of rank >= 2,
    else samples (its first dimension)."""
    tensors = _tensors(batch)
    if not tensors:
        return 0, "samples"
    first = tensors[0]
    integer = not (first.is_floating_point() or first.is_complex() or first.dtype == torch.bool)
    if integer and first.ndim >= 2:
        return first.numel(), "tokens"
    return (first.shape[0] if first.ndim else 1), "samples"


def _evaluate(model: nn.Module, eval_fn: Callable[[nn.Module], Any]) -> dict[str, float]:
    """Run ``eval_fn(model)`` in eval mode without gradients; a float becomes ``{"eval": value}``."""
    model.eval()
    try:
        with torch.no_grad():
            result = eval_fn(model)
    finally:
        model.train()
    items = result.items() if isinstance(result, Mapping) else [("eval", result)]
    out = {}
    for name, value in items:
        if isinstance(value, torch.Tensor):
            value = value.item()
        out[str(name)] = check_float(f"eval_fn()[{name!r}]", value)
    if not out:
        raise ValueError("eval_fn must return a float or a non-empty mapping of floats")
    return out


def fit(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batches: Callable[[int], Any] | Iterable[Any],
    *,
    steps: int,
    seed: int,
    lr: float = 1e-3,
    weight_decay: float = 0.0,
    warmup: int = 0,
    min_lr_ratio: float = 0.1,
    grad_clip: float | None = 1.0,
    betas: tuple[float, float] = (0.9, 0.95),
    eval_fn: Callable[[nn.Module], float | Mapping[str, float]] | None = None,
    eval_every: int = 100,
    early_stop_patience: int | None = None,
    monitor: str | None = None,
    mode: str = "min",
    progress: bool = True,
    desc: str = "training",
    lr_scale: Mapping[str, float] | None = None,
    no_decay: Sequence[str] | None = None,
    micro_batches: int = 1,
    precision: str | None = None,
    find_unused_parameters: bool = False,
) -> History:
    """Train ``model`` in place with AdamW for ``steps`` updates and return its :class:`History`.

    Each update ``s``: set the learning rate to :func:`lr_at` ``(s)``; take ``batch = batches(s)`` (or
    the iterator's next item; tensors are moved to the model's device); ``loss = loss_fn(model, batch)``
    (a scalar tensor); back-propagate; scale the gradients so their global L2 norm is at most
    ``grad_clip`` (``g <- g * min(1, c / ||g||)``, none when ``grad_clip`` is None); take an AdamW step.
    Weight decay applies to matrices and higher-rank weights only, not to biases or norm gains.

    Per-parameter options, by parameter-name prefix (a prefix covers the parameter of that name and every
    parameter under it: ``"K"`` covers ``K.weight``, not ``Kb.weight``): ``lr_scale={"K": 0.1}`` trains
    those parameters at 0.1 times the scheduled rate (the longest matching prefix wins; ``History.lr``
    records the unscaled rate; AdamW's decay step ``lr * weight_decay`` scales with it);
    ``no_decay=("K",)`` exempts them from weight decay. A prefix that matches
    no trainable parameter, or a factor that is not a finite number > 0, raises ``ValueError``. With both
    None (the default) training is bit-identical to a ``fit`` without these options.

    ``eval_fn(model)`` (run in eval mode under ``torch.no_grad``) returns a float or a mapping of named
    floats; it runs after every ``eval_every`` updates and after the last one. With
    ``early_stop_patience=k``, training stops once ``k`` evaluations in a row have not improved the
    ``monitor`` metric (default: the first one) in direction ``mode`` (``"min"`` or ``"max"``).

    ``seed`` seeds torch's generator inside a forked RNG state (dropout, sampling in ``loss_fn``), so the
    caller's global random state is left as it was. A non-finite loss raises ``FloatingPointError``.

    ``micro_batches=m`` accumulates gradients: the batch (this rank's share under torchrun) is cut into
    ``m`` equal parts along dim 0, ``loss_fn`` runs on each and back-propagates ``loss / m``, and one
    AdamW step follows. With a ``loss_fn`` that averages over its rows this is the gradient of the whole
    batch (up to the order of sums) at ``1/m`` of the activation memory, so a config's batch does not
    change when it no longer fits; ``History.loss`` is the mean of the parts' losses. ``m = 1`` (the
    default) is the plain step.

    ``precision="bf16"`` runs ``loss_fn`` under ``torch.autocast`` with bfloat16 (meant for CUDA; the
    optimizer and the master weights stay in the model's dtype); None (the default) changes nothing.

    Under ``torchrun --nproc_per_node=N`` (``WORLD_SIZE > 1``, see :mod:`neurips26.distributed`)
    the same call trains data-parallel: the process group is joined (NCCL on CUDA, gloo on the CPU), the
    model is wrapped in ``DistributedDataParallel`` and ``loss_fn`` receives the wrapper (it must call
    ``model(...)``, whose forward is what averages the gradients). ``batches`` yields the *global* batch;
    each rank keeps its equal share along dim 0 (:func:`~neurips26.distributed.shard`), so the
    global batch, and with a mean loss the gradient, does not depend on N. ``History.loss`` is the mean
    over ranks (the global batch's loss), ``seen`` counts global samples, ``eval_fn`` runs on rank 0 on
    the unwrapped model and its values are broadcast (every rank stops early together), the progress bar
    shows on rank 0 only, and rank r's random stream is seeded with ``rank_seed(seed, r)``. A step that
    fails on a rank raises :class:`~neurips26.distributed.RankFailed` naming that rank. A model whose steps
    leave some parameters out (a router trained on some steps only) needs ``find_unused_parameters=True``
    there: DDP then finds them each step and leaves their gradients missing, as one process does, so AdamW
    skips them as it would in one process (a zero-weighted term would give them zero gradients, which AdamW
    does not skip). It changes nothing in one process.

    In a trial run (:func:`neurips26.scales.trial_run`) in one process on the CPU, the first step is
    tried once more on meta copies of the model and the batch before the update, and a tensor the step makes
    off the model's device raises (:func:`neurips26.train.device_check.check_first_step`).
    """
    config = FitConfig(
        steps=steps,
        seed=seed,
        lr=lr,
        weight_decay=weight_decay,
        warmup=warmup,
        min_lr_ratio=min_lr_ratio,
        grad_clip=grad_clip,
        betas=betas,
        eval_every=eval_every,
        early_stop_patience=early_stop_patience,
        monitor=monitor,
        mode=mode,
        lr_scale=lr_scale,
        no_decay=no_decay,
        micro_batches=micro_batches,
        precision=precision,
    )
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module; got {type(model).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable as loss_fn(model, batch); got {type(loss_fn).__name__}")
    if eval_fn is not None and not callable(eval_fn):
        raise TypeError(f"eval_fn must be callable as eval_fn(model) or None; got {type(eval_fn).__name__}")
    if early_stop_patience is not None and eval_fn is None:
        raise ValueError("early_stop_patience needs an eval_fn to watch")
    next_batch = _batch_source(batches)
    show = progress_enabled(progress)
    me = distributed.world()

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    params = [p for _, p in named]
    if not params:
        raise ValueError("model has no trainable parameters")
    device = params[0].device
    groups, factors = _param_groups(named, config)
    optimizer = torch.optim.AdamW(groups, lr=config.lr, betas=config.betas)
    max_norm = config.grad_clip if config.grad_clip is not None else math.inf

    from tqdm.auto import tqdm

    # One process (no torchrun): net is model, run_seed is seed, and every branch on `ddp` below is skipped.
    if not isinstance(find_unused_parameters, bool):
        raise TypeError(f"find_unused_parameters must be a bool; got {type(find_unused_parameters).__name__}")
    ddp = _data_parallel(model, device, me, find_unused_parameters) if me.distributed else None
    net = model if ddp is None else ddp
    run_seed = config.seed if ddp is None else distributed.rank_seed(config.seed, me.rank)
    show = show and me.rank == 0
    autocast = contextlib.nullcontext() if precision is None else torch.autocast(device.type, torch.bfloat16)

    history = History(config=config)
    watch = _EarlyStop(config)
    was_training = model.training
    cuda_devices = [device.index or 0] if device.type == "cuda" else []
    start = time.perf_counter()
    seen = 0
    s = -1
    with torch.random.fork_rng(devices=cuda_devices), tqdm(total=steps, desc=desc, disable=not show) as bar:
        torch.manual_seed(run_seed)
        model.train()
        try:
            for s in range(steps):
                rate = lr_at(s, lr=lr, steps=steps, warmup=warmup, min_lr_ratio=min_lr_ratio)
                for group, factor in zip(optimizer.param_groups, factors, strict=True):
                    group["lr"] = rate if factor == 1.0 else rate * factor
                batch = next_batch(s)
                global_batch = batch
                if ddp is not None:
                    batch = distributed.shard(batch, me.rank, me.size)
                if device.type != "cpu":
                    batch = move_batch(batch, device)
                if s == 0 and ddp is None:  # a trial run on the CPU tries the step on the meta device
                    device_check.check_first_step(model, loss_fn, batch, desc=desc)
                optimizer.zero_grad(set_to_none=True)
                value = _accumulate(net, ddp, loss_fn, batch, config.micro_batches, autocast)
                if not math.isfinite(value):
                    raise FloatingPointError(f"the loss is {value} at step {s}; lower lr or clip gradients")
                # Global norm ||g|| over all parameters; rescale by min(1, max_norm / ||g||).
                norm = torch.nn.utils.clip_grad_norm_(params, max_norm).item()
                optimizer.step()

                count, history.seen_unit = _batch_size(global_batch)
                seen += count
                history.step.append(s)
                history.loss.append(value)
                history.lr.append(rate)
                history.grad_norm.append(norm)
                history.seen.append(seen)
                history.wall_time.append(time.perf_counter() - start)
                bar.set_postfix(loss=f"{value:.4f}", lr=f"{rate:.2e}", refresh=False)
                bar.update(1)

                if eval_fn is not None and ((s + 1) % config.eval_every == 0 or s + 1 == steps):
                    if ddp is None:
                        values = _evaluate(model, eval_fn)
                    else:
                        values = distributed.broadcast_object(
                            _evaluate(model, eval_fn) if me.rank == 0 else None
                        )
                    if watch.record(history, s + 1, values):
                        history.stopped_early = True
                        break
        except Exception as error:
            if ddp is None:
                raise
            where = f"step {s}" if s >= 0 else "start-up"
            raise distributed.RankFailed(
                f"rank {me.rank} of {me.size} (local rank {me.local_rank}) failed at {where}: "
                f"{type(error).__name__}: {error}"
            ) from error
        finally:
            model.train(was_training)
    return history


def _accumulate(
    net: nn.Module,
    ddp: nn.Module | None,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    parts: int,
    autocast: Any,
) -> float:
    """Back-propagate ``loss_fn`` over ``batch`` cut into ``parts`` equal micro-batches (each loss scaled
    by ``1/parts``; DDP synchronises the gradients on the last part only) and return the loss, the mean
    over parts and, under torchrun, over ranks. One part back-propagates the loss as it is."""
    pieces = [batch] if parts == 1 else _micro_batches(batch, parts)
    total = 0.0
    for k, piece in enumerate(pieces):
        last = k == len(pieces) - 1
        sync = contextlib.nullcontext() if ddp is None or last else ddp.no_sync()
        with sync:
            calls = 0 if ddp is None else ddp.__dict__.get("forward_calls", 0)
            with autocast:
                loss = loss_fn(net, piece)
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                raise TypeError("loss_fn must return a scalar torch.Tensor")
            if ddp is not None and ddp.__dict__.get("forward_calls", 0) == calls:
                raise RuntimeError(
                    "under torchrun, loss_fn must call model(...) (the DistributedDataParallel "
                    "wrapper it receives): its forward is what averages the gradients over ranks"
                )
            total += loss.item()
            (loss if parts == 1 else loss / parts).backward()
    value = total / parts
    return value if ddp is None else distributed.all_reduce_mean(value)  # float64 mean over ranks


def _micro_batches(batch: Any, parts: int) -> list[Any]:
    """``batch`` cut into ``parts`` equal, contiguous micro-batches along dim 0 (``ValueError`` naming
    ``micro_batches`` when its rows do not divide)."""
    try:
        return [distributed.shard(batch, k, parts) for k in range(parts)]
    except ValueError as error:
        raise ValueError(f"micro_batches={parts} must divide the batch's rows: {error}") from None


def _data_parallel(
    model: nn.Module, device: torch.device, group: distributed.World, find_unused_parameters: bool = False
) -> nn.Module:
    """Join torchrun's group and wrap ``model`` (on this rank's device) in DistributedDataParallel."""
    try:
        distributed.init()
        if device.type == "cuda" and device.index is not None and device.index != group.local_rank:
            raise RuntimeError(
                f"the model is on {device}, but this rank's GPU is cuda:{group.local_rank}; "
                "move it with model.to(neurips26.train.choose_device()) before fit"
            )
        return distributed.wrap(model, find_unused_parameters=find_unused_parameters)
    except Exception as error:
        raise distributed.RankFailed(
            f"rank {group.rank} of {group.size} (local rank {group.local_rank}) failed at start-up: "
            f"{type(error).__name__}: {error}"
        ) from error


class _EarlyStop:
    """Appends evaluations to a history, tracks the best ``monitor`` value, says when to stop."""

    def __init__(self, config: FitConfig) -> None:
        self.config = config
        self.stale = 0  # evaluations in a row without improvement

    def record(self, history: History, step: int, values: dict[str, float]) -> bool:
        """Record ``values`` measured after ``step`` updates; True when patience has run out."""
        if history.eval and values.keys() != history.eval.keys():
            raise ValueError(f"eval_fn returned keys {sorted(values)}, before {sorted(history.eval)}")
        history.eval_step.append(step)
        for name, v in values.items():
            history.eval.setdefault(name, []).append(v)
        key = self.config.monitor or next(iter(values))
        if key not in values:
            raise ValueError(f"monitor {key!r} is not among the eval_fn keys {sorted(values)}")
        current, best = values[key], history.best_value
        if best is None or (current < best if self.config.mode == "min" else current > best):
            history.best_step, history.best_value = step, current
            self.stale = 0
        else:
            self.stale += 1
        patience = self.config.early_stop_patience
        return patience is not None and self.stale >= patience
