"""Declared per-frame costs of causal video generation: keys per query, FLOPs, memory bytes (claims J1, J7).

Chapter 07's first claim is that JAG generates long videos at *constant* per-frame compute: a window of ``W``
frames in attention and a fixed-size 3D memory, against a model that attends over its whole history. On a
shared CPU a wall clock says as much about the load as about the method, so the claim is decided on these
counts and the clock is shown beside them. Conventions [our choice, as in chapter 06's cost model]:

- A multiply-add is 2 FLOPs; a bias, a normalisation and the pointwise nonlinearities are left out (each
  O(tokens · width), a few percent of the total).
- One network call for frame ``k`` processes that frame's ``n · b`` query tokens (``n`` tokens per frame and
  branch, ``b`` branches) against ``keys(k)`` keys:

      keys(k) = b · n · min(k, W)  (windowed),   b · n · k  (full history),   b · n · T  (bidirectional clip).

- Per block and call (width ``d``, MLP ratio ``r``, ``q = n · b`` queries):
  ``QKV 2 q d · 3d + scores 2 q keys d + weighted sum 2 q keys d + output 2 q d² + MLP 2 · 2 q d (r d)``;
  per call the patch embedding ``2 q (c_in p²) d`` and the head ``2 q d (c_out p²)`` (``c_in``/``c_out`` the
  mean channels per branch) are added once.
- A generated frame costs ``steps`` denoising calls plus one call that writes the clean frame into the cache
  (Self Forcing's context pass): ``steps + 1`` forwards. The many-step baselines (``steps = 32``) pay the same
  write.
- Memory bytes: the KV cache holds ``2 · depth · keys · d`` numbers (keys and values, every block); the voxel
  memory ``V³ · c`` numbers (mean colour, mean point position and a count: ``c = 7``, as
  :class:`neurips26.jag.memory.VoxelMemory` stores them), 4 bytes each (float32).

What is here: :class:`CostShape`, :func:`keys_per_query`, :func:`call_flops`, :func:`frame_cost`,
:func:`kv_bytes`, :func:`voxel_bytes`, :class:`FrameCost`.
"""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.validation import check_float, check_int

#: Bytes per stored number (float32).
BYTES = 4
#: Numbers per voxel of the memory: a running mean colour (3), the mean point position (3) and a count (1).
VOXEL_CHANNELS = 7


@dataclass(frozen=True)
class CostShape:
    """The sizes the counts depend on: ``tokens`` per frame and branch, ``branches`` (2 for JAG, 1 for the
    RGB-only baseline), ``width``, ``depth`` (blocks), ``mlp_ratio``, ``patch`` and the mean ``in_channels`` /
    ``out_channels`` per branch. Defaults: the chapter's model (16 tokens, width 48, 3 blocks, patch 4)."""

    tokens: int = 16
    branches: int = 2
    width: int = 48
    depth: int = 3
    mlp_ratio: float = 4.0
    patch: int = 4
    in_channels: float = 5.0
    out_channels: float = 2.0

    def __post_init__(self) -> None:
        for name in ("tokens", "width", "depth", "patch"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("branches", self.branches, minimum=1, maximum=2)
        for name in ("mlp_ratio", "in_channels", "out_channels"):
            check_float(name, getattr(self, name), minimum=0.0, strict_min=True)

    @property
    def queries(self) -> int:
        """Query tokens of one frame, both branches: ``n · b``."""
        return self.tokens * self.branches


def _window(window: int | None) -> int | None:
    return None if window is None else check_int("window", window, minimum=1)


def keys_per_query(frame: int, window: int | None, shape: CostShape | None = None) -> int:
    """Keys a query of frame ``frame`` (1-based) attends to: ``b n min(k, W)``, or ``b n k`` with
    ``window=None`` (full history). Joint attention: a query sees both branches' keys."""
    shape = shape or CostShape()
    frame = check_int("frame", frame, minimum=1)
    w = _window(window)
    frames = frame if w is None else min(frame, w)
    return shape.queries * frames


def call_flops(frame: int, window: int | None, shape: CostShape | None = None) -> float:
    """FLOPs of one network call for frame ``frame`` (module docstring)."""
    shape = shape or CostShape()
    q, d, keys = shape.queries, shape.width, keys_per_query(frame, window, shape)
    per_block = (
        2 * q * d * 3 * d  # QKV
        + 2 * q * keys * d  # scores
        + 2 * q * keys * d  # weighted sum of the values
        + 2 * q * d * d  # output projection
        + 2 * 2 * q * d * shape.mlp_ratio * d  # MLP in and out
    )
    pixels = shape.patch**2
    io = 2 * q * shape.in_channels * pixels * d + 2 * q * d * shape.out_channels * pixels
    return float(shape.depth * per_block + io)


@dataclass(frozen=True)
class FrameCost:
    """What one generated frame costs: ``forwards`` (network calls), ``flops``, ``kv_bytes`` (the cache while
    the frame is made) and ``memory_bytes`` (the 3D memory, 0 without one)."""

    forwards: int
    flops: float
    kv_bytes: int
    memory_bytes: int

    @property
    def state_bytes(self) -> int:
        """Everything kept between frames: the cache and the memory."""
        return self.kv_bytes + self.memory_bytes


def kv_bytes(frame: int, window: int | None, shape: CostShape | None = None) -> int:
    """Bytes of the KV cache a call for frame ``frame`` reads: ``2 · depth · keys · d · 4``."""
    shape = shape or CostShape()
    return 2 * shape.depth * keys_per_query(frame, window, shape) * shape.width * BYTES


def voxel_bytes(resolution: int) -> int:
    """Bytes of a voxel memory of ``resolution³`` voxels with :data:`VOXEL_CHANNELS` numbers each."""
    resolution = check_int("resolution", resolution, minimum=1)
    return resolution**3 * VOXEL_CHANNELS * BYTES


def frame_cost(
    frame: int,
    window: int | None,
    steps: int,
    shape: CostShape | None = None,
    *,
    memory_resolution: int | None = None,
) -> FrameCost:
    """The cost of generating frame ``frame``: ``steps`` denoising calls and one cache write, the KV cache
    it reads, and a voxel memory of ``memory_resolution³`` voxels (None: no memory)."""
    shape = shape or CostShape()
    steps = check_int("steps", steps, minimum=1)
    memory = 0 if memory_resolution is None else voxel_bytes(memory_resolution)
    return FrameCost(
        forwards=steps + 1,
        flops=(steps + 1) * call_flops(frame, window, shape),
        kv_bytes=kv_bytes(frame, window, shape),
        memory_bytes=memory,
    )


__all__ = [
    "BYTES",
    "VOXEL_CHANNELS",
    "CostShape",
    "FrameCost",
    "call_flops",
    "frame_cost",
    "keys_per_query",
    "kv_bytes",
    "voxel_bytes",
]
