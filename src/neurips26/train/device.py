"""Where to compute (CUDA, Apple MPS or CPU) and with how many CPU threads.

The book's numbers are measured on the CPU; a reader with a GPU may move the same code there. The
choice is explicit and overridable: an argument wins over the environment variable
``NEURIPS26_DEVICE``, which wins over the automatic order cuda → mps → cpu.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

import torch

from neurips26.distributed import world
from neurips26.scales import check_scale
from neurips26.validation import check_int

DEVICE_ENV = "NEURIPS26_DEVICE"
_NAME = re.compile(r"^(auto|cpu|mps|cuda)(:\d+)?$")


def _available(kind: str) -> bool:
    if kind == "cuda":
        return torch.cuda.is_available()
    if kind == "mps":
        backend = getattr(torch.backends, "mps", None)
        return bool(backend is not None and backend.is_available())
    return kind == "cpu"


def _rank_gpu() -> torch.device:
    """``cuda``, or ``cuda:LOCAL_RANK`` under torchrun (one GPU per rank, as NCCL expects)."""
    me = world()
    return torch.device("cuda", me.local_rank) if me.distributed else torch.device("cuda")


def choose_device(prefer: str | None = None) -> torch.device:
    """The device to compute on.

    ``prefer`` (or, when it is None, ``$NEURIPS26_DEVICE``) names a device: ``"cpu"``, ``"cuda"``,
    ``"cuda:1"``, ``"mps"`` or ``"auto"``. ``"auto"`` (the default) takes the first available of cuda,
    mps, cpu; under ``torchrun`` (``WORLD_SIZE > 1``) ``"auto"`` and ``"cuda"`` mean this rank's GPU,
    ``cuda:LOCAL_RANK``. An unknown name raises ``ValueError``; a known device that this machine lacks raises
    ``RuntimeError`` (asking for a GPU that is not there should not silently run on the CPU).
    """
    if prefer is not None and not isinstance(prefer, str):
        raise TypeError(f"prefer must be a str or None; got {type(prefer).__name__}")
    source = "prefer"
    if prefer is None:
        prefer, source = os.environ.get(DEVICE_ENV, "").strip() or "auto", DEVICE_ENV
    name = prefer.strip().lower()
    match = _NAME.match(name)
    if match is None or (match.group(1) == "auto" and match.group(2)):
        raise ValueError(f"{source} must be one of 'auto', 'cpu', 'cuda', 'cuda:N', 'mps'; got {prefer!r}")
    kind, index = match.group(1), match.group(2)
    if kind == "auto":
        for candidate in ("cuda", "mps"):
            if _available(candidate):
                return _rank_gpu() if candidate == "cuda" else torch.device(candidate)
        return torch.device("cpu")
    if not _available(kind):
        raise RuntimeError(f"{source} asks for {prefer!r}, but this machine has no {kind} device")
    if kind == "cuda" and not index:
        return _rank_gpu()
    if kind == "cuda" and index and int(index[1:]) >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise RuntimeError(f"{source} asks for {prefer!r}, but only {count} cuda devices exist")
    return torch.device(name)


def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one, else ``os.cpu_count``)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def set_threads(n: int | None = None) -> int:
    """Set torch's intra-op thread count to ``n`` (default: :func:`available_cores`); return it.

    A container often reports the host's cores through ``os.cpu_count`` while granting fewer;
    oversubscribed threads then slow training down, which is why the affinity mask is used.
    """
    n = available_cores() if n is None else check_int("n", n, minimum=1)
    torch.set_num_threads(n)
    return n


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the enclosed torch code on ``n`` intra-op threads (None: as set), then restore the count.

    Usable as a decorator too. Two uses in the book: tiny networks do not pay for a second thread (an 8×8
    denoiser's step took ~0.02 s on one thread and 0.04–0.06 s on two busy cores), and a CPU matmul splits
    its reductions by thread count, so a model meant to be bit-reproducible must train at a fixed count.
    """
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(check_int("n", n, minimum=1))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def shipped_threads(scale: str) -> int | None:
    """The intra-op thread count a chapter trains and measures on at ``scale``, for :func:`torch_threads`:
    one at the shipped scales (``smoke``, ``default``), where a CPU matmul's sums, split by thread count,
    must come out as when the committed checkpoints were trained; None (as set) at ``paper``, which runs
    on a GPU or on every core."""
    return None if check_scale(scale) == "paper" else 1
