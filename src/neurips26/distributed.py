"""Data-parallel training under ``torchrun``: who am I, the process group, sharding, rank-0 writes.

``torchrun --nproc_per_node=N script.py`` starts N copies of a script with ``RANK``, ``WORLD_SIZE``
and ``LOCAL_RANK`` in their environment. Without torchrun none of these is set and every helper here
is a no-op for a group of one, so the same code runs on a laptop and on a GPU server:

- :func:`world` — this process's :class:`World` (rank, size, local rank); size 1 without torchrun.
- :func:`init` — join the process group (NCCL when CUDA is available, else gloo); idempotent.
- :func:`is_main`, :func:`barrier`, :func:`all_reduce_mean`, :func:`broadcast_object` — the few
  collectives :func:`neurips26.train.fit` and a chapter's ``prepare`` need.
- :func:`shard` — this rank's equal share of a global batch (or of a list of indices) along dim 0.
- :func:`main_only` — run a write (checkpoint, cache entry, figure) on rank 0 only.
- :func:`wrap` — the model in ``DistributedDataParallel`` (gradients averaged over ranks at backward).
- :class:`RankFailed` — what ``fit`` raises on a rank whose step failed, with the rank in its message.

Why equal shards: ``fit``'s loss is a mean over the batch, and DDP averages the ranks' gradients, so N
ranks each holding ``B / N`` rows of a global batch of ``B`` compute the full batch's gradient (up to
the order of floating-point sums): the global batch of a config does not depend on N.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn

from neurips26.validation import check_int

T = TypeVar("T")


@dataclass(frozen=True)
class World:
    """This process's place in the group: ``rank`` in ``0..size-1`` and ``local_rank`` on its node."""

    rank: int
    size: int
    local_rank: int

    @property
    def distributed(self) -> bool:
        """Whether more than one process trains together."""
        return self.size > 1


def _env_int(name: str, env: Mapping[str, str], default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"${name} must be an integer (set by torchrun); got {raw!r}") from None


def world(env: Mapping[str, str] | None = None) -> World:
    """This process's :class:`World` from torchrun's ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``.

    Without them (a plain ``python`` run) it is ``World(0, 1, 0)``. Inconsistent values raise
    ``ValueError`` naming the variable.
    """
    env = os.environ if env is None else env
    size = _env_int("WORLD_SIZE", env, 1)
    rank = _env_int("RANK", env, 0)
    local_rank = _env_int("LOCAL_RANK", env, rank)
    if size < 1:
        raise ValueError(f"$WORLD_SIZE must be >= 1; got {size}")
    if not 0 <= rank < size:
        raise ValueError(f"$RANK must be in [0, {size - 1}] for $WORLD_SIZE={size}; got {rank}")
    if local_rank < 0:
        raise ValueError(f"$LOCAL_RANK must be >= 0; got {local_rank}")
    return World(rank=rank, size=size, local_rank=local_rank)


def is_initialized() -> bool:
    """Whether this process has joined a process group."""
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def init(backend: str | None = None) -> World:
    """Join torchrun's process group (once) and return :func:`world`.

    A no-op for a group of one. ``backend`` defaults to ``"nccl"`` when CUDA is available (each rank
    then computes on ``cuda:LOCAL_RANK``, made the current device here) and ``"gloo"`` otherwise. A
    second call returns at once (idempotent), whatever ``backend`` it names.
    """
    me = world()
    if not me.distributed or is_initialized():
        return me
    if not torch.distributed.is_available():
        raise RuntimeError("WORLD_SIZE > 1 but this torch build has no torch.distributed")
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend not in ("nccl", "gloo"):
        raise ValueError(f"backend must be 'nccl', 'gloo' or None; got {backend!r}")
    if backend == "nccl":
        if not torch.cuda.is_available():
            raise RuntimeError("backend 'nccl' needs CUDA, which this machine lacks; use 'gloo'")
        torch.cuda.set_device(me.local_rank)
    torch.distributed.init_process_group(backend=backend, init_method="env://")
    return me


def is_main() -> bool:
    """Whether this process is rank 0 (always True without torchrun)."""
    return world().rank == 0


def barrier() -> None:
    """Wait for every rank (a no-op for a group of one or before :func:`init`)."""
    if is_initialized() and torch.distributed.get_world_size() > 1:
        torch.distributed.barrier()


def _collective_device() -> torch.device:
    """Where a collective's tensor must live: the current CUDA device for NCCL, else the CPU."""
    if torch.distributed.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_mean(value: Any) -> Any:
    """The mean over ranks of ``value``: a float, a tensor, or a sequence/mapping of floats.

    Returns the same kind it was given (a float for a float, a list for a sequence, a dict for a
    mapping, a tensor of the input's dtype and device for a tensor). Sums in float64. Without a group
    of more than one it returns ``value`` unchanged.
    """
    if not is_initialized() or torch.distributed.get_world_size() <= 1:
        return value
    size = torch.distributed.get_world_size()
    where = _collective_device()
    if isinstance(value, torch.Tensor):
        buf = value.detach().to(device=where, dtype=torch.float64).clone()
        torch.distributed.all_reduce(buf)
        return (buf / size).to(device=value.device, dtype=value.dtype)
    if isinstance(value, Mapping):
        keys = list(value)
        means = all_reduce_mean([float(value[k]) for k in keys])
        return dict(zip(keys, means, strict=True))
    if isinstance(value, Sequence) and not isinstance(value, str):
        buf = torch.tensor([float(v) for v in value], dtype=torch.float64, device=where)
        torch.distributed.all_reduce(buf)
        return (buf / size).tolist()
    buf = torch.tensor([float(value)], dtype=torch.float64, device=where)
    torch.distributed.all_reduce(buf)
    return (buf / size).item()


def broadcast_object(obj: T, src: int = 0) -> T:
    """Rank ``src``'s ``obj`` (any picklable object) on every rank; ``obj`` itself without a group."""
    if not is_initialized() or torch.distributed.get_world_size() <= 1:
        return obj
    box = [obj]
    torch.distributed.broadcast_object_list(box, src=src)
    return box[0]


def _first_tensor(batch: Any) -> torch.Tensor | np.ndarray | None:
    """The first tensor or array of a batch (depth-first, in the order ``fit`` counts samples)."""
    if isinstance(batch, torch.Tensor | np.ndarray):
        return batch
    if isinstance(batch, Mapping):
        items: Any = batch.values()
    elif dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        items = (getattr(batch, f.name) for f in dataclasses.fields(batch))
    elif isinstance(batch, list | tuple):
        items = batch
    else:
        return None
    for item in items:
        if (found := _first_tensor(item)) is not None:
            return found
    return None


def _split(item: Any, rows: int, lo: int, hi: int) -> Any:
    """``item`` with every tensor/array whose dim 0 is ``rows`` cut to ``[lo, hi)``; the rest as it is."""
    if isinstance(item, torch.Tensor | np.ndarray):
        return item[lo:hi] if item.ndim >= 1 and item.shape[0] == rows else item
    if isinstance(item, Mapping):
        return type(item)({k: _split(v, rows, lo, hi) for k, v in item.items()})
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        changes = {f.name: _split(getattr(item, f.name), rows, lo, hi) for f in dataclasses.fields(item)}
        return dataclasses.replace(item, **changes)
    if isinstance(item, tuple) and hasattr(item, "_fields"):  # a NamedTuple
        return type(item)(*(_split(v, rows, lo, hi) for v in item))
    if isinstance(item, list | tuple | range):
        if all(isinstance(v, int | np.integer) for v in item) and len(item) == rows:
            return type(item)(item[lo:hi]) if not isinstance(item, range) else item[lo:hi]
        return type(item)(_split(v, rows, lo, hi) for v in item)
    return item


def shard(batch: Any, rank: int | None = None, size: int | None = None) -> Any:
    """Rank ``rank``'s equal share (rows ``[rank B/N, (rank+1) B/N)``) of a global batch of ``B`` rows.

    ``batch`` is a tensor or array, a list/range of sample indices, or a tuple/list/dict/dataclass of
    tensors. ``B`` is the leading dimension of its first tensor (or the length of an index list); every
    tensor whose leading dimension is ``B`` is cut, anything else (a scalar, a shared table) is passed
    whole to every rank. ``B`` must be divisible by ``size`` (equal shards keep the mean loss, and so
    the gradient, that of the global batch). ``rank``/``size`` default to :func:`world`'s.
    """
    me = world()
    rank = me.rank if rank is None else check_int("rank", rank, minimum=0)
    size = me.size if size is None else check_int("size", size, minimum=1)
    if rank >= size:
        raise ValueError(f"rank must be < size ({size}); got {rank}")
    if size == 1:
        return batch
    if (
        isinstance(batch, list | tuple | range)
        and batch
        and all(isinstance(v, int | np.integer) for v in batch)
    ):
        rows = len(batch)
    else:
        first = _first_tensor(batch)
        if first is None or first.ndim == 0:
            raise ValueError("shard needs a batch whose first tensor has a leading (batch) dimension")
        rows = first.shape[0]
    if rows % size:
        raise ValueError(
            f"the global batch has {rows} rows, not divisible by the {size} ranks; "
            "choose a batch size that is a multiple of the number of processes"
        )
    per = rows // size
    return _split(batch, rows, rank * per, (rank + 1) * per)


def main_only(fn: Callable[..., T] | None = None, *, sync: bool = True) -> Any:
    """Decorate a write (checkpoint, cache entry) so that it runs on rank 0 only.

    The other ranks skip it and get None; with ``sync`` (the default) every rank then waits at a
    :func:`barrier`, so no rank reads a file before rank 0 has written it. Without torchrun the
    function just runs. Usable as ``@main_only`` or ``@main_only(sync=False)``.
    """

    def decorate(f: Callable[..., T]) -> Callable[..., T | None]:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> T | None:
            result = f(*args, **kwargs) if is_main() else None
            if sync:
                barrier()
            return result

        return run

    return decorate if fn is None else decorate(fn)


def main_first(build: Callable[[bool], T]) -> T:
    """``build(True)`` on rank 0 while the other ranks wait at a :func:`barrier`, then ``build(False)``
    on them; without torchrun just ``build(True)``.

    For data that every rank needs and that goes through the results cache (a corpus, rendered views):
    rank 0 computes it once, with all of the machine's cores, and the others read rank 0's cache entry
    instead of computing it N times over (the flag says which call is the first, e.g. to print only there).
    """
    if not world().distributed:
        return build(True)
    init()
    first = build(True) if is_main() else None
    barrier()
    return first if is_main() else build(False)


class RankFailed(RuntimeError):
    """A step failed on one rank of a torchrun group; the message names the rank (the cause is chained)."""


class _DDP(torch.nn.parallel.DistributedDataParallel):
    """DDP that counts its forward calls, so ``fit`` can tell a ``loss_fn`` that bypassed it."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self.__dict__["forward_calls"] = self.__dict__.get("forward_calls", 0) + 1
        return super().forward(*args, **kwargs)


def wrap(model: nn.Module, *, find_unused_parameters: bool = False) -> nn.Module:
    """``model`` in ``DistributedDataParallel`` (rank 0's weights and buffers are broadcast to all ranks).

    ``model`` must already be on this rank's device (:func:`neurips26.train.choose_device`); it is returned
    unwrapped for a group of one. Call :func:`init` first.
    """
    if not is_initialized() or torch.distributed.get_world_size() <= 1:
        return model
    params = [p for p in model.parameters() if p.requires_grad]
    where = params[0].device if params else torch.device("cpu")
    ids = (
        [where.index if where.index is not None else torch.cuda.current_device()]
        if where.type == "cuda"
        else None
    )
    return _DDP(model, device_ids=ids, find_unused_parameters=find_unused_parameters)


def unwrap(model: nn.Module) -> nn.Module:
    """The module inside a ``DistributedDataParallel`` wrapper (``model`` itself otherwise)."""
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        return model.module
    return model


def rank_seed(seed: int, rank: int) -> int:
    """The seed of rank ``rank``'s random stream in ``fit`` (dropout, noise drawn in ``loss_fn``).

    Rank 0 keeps ``seed``; rank r > 0 draws from ``SeedSequence([seed, r])``, so ranks do not draw the
    same noise for their different rows.
    """
    if rank == 0:
        return seed
    return int(np.random.SeedSequence([seed, rank]).generate_state(1, dtype=np.uint32)[0])


__all__ = [
    "RankFailed",
    "World",
    "all_reduce_mean",
    "barrier",
    "broadcast_object",
    "init",
    "is_initialized",
    "is_main",
    "main_first",
    "main_only",
    "rank_seed",
    "shard",
    "unwrap",
    "world",
    "wrap",
]
