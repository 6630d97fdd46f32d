"""The VAE stand-in: a two-stage linear (PCA) codec with 4x temporal compression.

The paper encodes 4 FPS video with Wan2.1's VAE, one 16-channel latent per 4 frames (one second). Ours is
linear, fitted with an SVD, and exact inside its subspace:

1. **Spatial tokens.** Each frame ``(16, 32, 3)`` is cut into its left and right halves ``(16, 16, 3)``,
   768 values each, so a chunk has two spatial tokens (the Video-Former needs a spatial axis).
2. **Frame PCA** (both halves pooled): ``f = B1 (x - m1)``, 768 -> :data:`FRAME_DIM` = 12.
3. **Chunk PCA** (both halves pooled): the 4 frame codes of one half stacked in time order,
   ``y = [f_0, f_1, f_2, f_3]`` (48 values), give ``g = B2 (y - m2)``, 48 -> :data:`LATENT_DIM` = 16.
4. **Standardising:** ``z = g / s`` with ``s`` the per-dimension std of the training latents, so a
   generator sees unit-scale numbers.

Decoding inverts each step, ``y = B2^T (s z) + m2`` and ``x = B1^T f + m1``. The rows of ``B1`` and ``B2``
are orthonormal, so ``encode(decode(z)) == z`` for every ``z`` and ``decode(encode(x)) == x`` for every
``x`` in the codec's affine subspace; other frames come back as their projection. The decoded pixels are
**not** clipped to ``[0, 1]`` unless ``clip=True`` is asked for (clipping would break the exact round trip).

Wan's causal VAE prepends a copy of frame 0 and drops that latent, so that the first chunk has context.
Our chunks are encoded independently of one another, so that step would change nothing and is left out.

The fit (:func:`fit_codec`) runs ``np.linalg.svd`` on a seeded subsample of whole chunks (the SVD of the
scatter matrix, which has the same principal directions as the data's) and fixes the sign of each
component (its largest-magnitude entry is positive, the first such entry on a tie), so the result does not
depend on LAPACK's sign choices. The codec stores float64 arrays; :meth:`Codec.encode` and
:meth:`Codec.decode` compute in float64 and return float32 for float32 input (the world's frames) and
float64 otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from neurips26.sparsevideonav.timeline import CHUNK_FRAMES
from neurips26.validation import check_int, check_seed

#: Spatial tokens per chunk: the left and right halves of the view.
TOKENS = 2
#: The frame size the codec reads, ``(height, width, channels)``.
FRAME_SHAPE = (16, 32, 3)
#: Values in one half-frame token, ``16 * 16 * 3``.
HALF_DIM = FRAME_SHAPE[0] * (FRAME_SHAPE[1] // TOKENS) * FRAME_SHAPE[2]
#: Stage-1 code size per half-frame.
FRAME_DIM = 12
#: Stage-2 latent size per chunk and half.
LATENT_DIM = 16
#: Smallest latent std used for standardising (a direction the training data never moved along).
_STD_FLOOR = 1e-8
#: Rows per block when the fit accumulates scatter matrices and projections (bounds float64 temporaries).
_BLOCK = 4096

_SHAPES = {
    "frame_mean": (HALF_DIM,),
    "frame_basis": (FRAME_DIM, HALF_DIM),
    "frame_explained": (FRAME_DIM,),
    "chunk_mean": (CHUNK_FRAMES * FRAME_DIM,),
    "chunk_basis": (LATENT_DIM, CHUNK_FRAMES * FRAME_DIM),
    "chunk_explained": (LATENT_DIM,),
    "latent_std": (LATENT_DIM,),
}


def _out_dtype(x: np.ndarray) -> type:
    return np.float32 if x.dtype == np.float32 else np.float64


def _check_frames(name: str, frames: object) -> np.ndarray:
    """``frames`` ``(..., T, 16, 32, 3)`` with ``T`` a positive multiple of 4 and values in ``[0, 1]``."""
    if not isinstance(frames, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray; got {type(frames).__name__}")
    if frames.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {frames.dtype}")
    if (
        frames.ndim < 4
        or frames.shape[-3:] != FRAME_SHAPE
        or frames.shape[-4] % CHUNK_FRAMES
        or not frames.shape[-4]
    ):
        raise ValueError(
            f"{name} must have shape (..., T, 16, 32, 3) with T a positive multiple of {CHUNK_FRAMES}; "
            f"got {frames.shape}"
        )
    if frames.size and not (np.all(np.isfinite(frames)) and frames.min() >= 0.0 and frames.max() <= 1.0):
        raise ValueError(f"{name} must hold finite values in [0, 1]")
    return frames


def _halves(frames: np.ndarray) -> np.ndarray:
    """``(..., 16, 32, 3)`` -> ``(..., 2, 768)``: left half then right half, each flattened row-major."""
    half = FRAME_SHAPE[1] // TOKENS
    return np.stack([frames[..., :half, :], frames[..., half:, :]], axis=-4).reshape(
        *frames.shape[:-3], TOKENS, HALF_DIM
    )


def _fix_signs(basis: np.ndarray) -> np.ndarray:
    """Flip each row so that its largest-|.| entry (the first one on a tie) is positive."""
    pivot = basis[np.arange(basis.shape[0]), np.argmax(np.abs(basis), axis=1)]
    return basis * np.where(pivot < 0, -1.0, 1.0)[:, None]


def _pca(data: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean ``(D,)``, sign-fixed top-``k`` basis ``(k, D)`` and the fraction of variance of each component.

    ``data`` is ``(N, D)``. The SVD is taken of the scatter matrix ``S = (X - m)^T (X - m)`` (``D x D``,
    accumulated in float64 over blocks of rows): ``S = V diag(s^2) V^T`` where ``X - m = U diag(s) V^T``,
    so it gives the data SVD's principal directions and variances in a fraction of the time and memory.
    """
    mean = data.mean(axis=0, dtype=np.float64)
    scatter = np.zeros((data.shape[1], data.shape[1]))
    for start in range(0, data.shape[0], _BLOCK):
        block = data[start : start + _BLOCK].astype(np.float64) - mean
        scatter += block.T @ block
    _, power, vt = np.linalg.svd(scatter)  # power = s^2: (N - 1) times the variance along each direction
    total = power.sum()
    explained = power[:k] / total if total > 0 else np.zeros(k)
    return mean, _fix_signs(vt[:k]), explained


def _project(data: np.ndarray, mean: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """``(data - mean) @ basis.T`` in float64, ``(N, D) -> (N, k)``, a block of rows at a time."""
    out = np.empty((data.shape[0], basis.shape[0]))
    for start in range(0, data.shape[0], _BLOCK):
        out[start : start + _BLOCK] = (data[start : start + _BLOCK].astype(np.float64) - mean) @ basis.T
    return out


@dataclass(frozen=True, eq=False)
class Codec:
    """A fitted two-stage PCA codec (module doc); all arrays float64 and read-only.

    ``frame_mean`` ``(768,)``, ``frame_basis`` ``(12, 768)`` (orthonormal rows), ``chunk_mean`` ``(48,)``,
    ``chunk_basis`` ``(16, 48)`` (orthonormal rows), ``latent_std`` ``(16,)``. ``frame_explained`` ``(12,)``
    is the fraction of the pixel variance (of a half-frame, about its mean) each frame component keeps;
    ``chunk_explained`` ``(16,)`` the fraction of the 48-value frame-code variance each chunk component keeps.
    """

    frame_mean: np.ndarray
    frame_basis: np.ndarray
    frame_explained: np.ndarray
    chunk_mean: np.ndarray
    chunk_basis: np.ndarray
    chunk_explained: np.ndarray
    latent_std: np.ndarray

    def __post_init__(self) -> None:
        for name, shape in _SHAPES.items():
            value = getattr(self, name)
            if not isinstance(value, np.ndarray):
                raise TypeError(f"{name} must be a numpy.ndarray; got {type(value).__name__}")
            if value.shape != shape:
                raise ValueError(f"{name} must have shape {shape}; got {value.shape}")
            if value.dtype.kind not in "biuf" or not np.all(np.isfinite(value)):
                raise ValueError(f"{name} must hold finite real numbers")
            array = np.array(value, dtype=np.float64)  # a private copy
            array.flags.writeable = False
            object.__setattr__(self, name, array)
        if np.any(self.latent_std <= 0):
            raise ValueError("latent_std must be positive")

    def encode(self, frames: np.ndarray) -> np.ndarray:
        """Latents ``(..., T // 4, 2, 16)`` of ``frames`` ``(..., T, 16, 32, 3)`` (values in ``[0, 1]``).

        ``T`` must be a positive multiple of 4; leading axes are batch axes. Chunk ``c`` covers frames
        ``4c .. 4c + 3``; token 0 is the left half of the view, token 1 the right half.
        """
        frames = _check_frames("frames", frames)
        lead, t = frames.shape[:-4], frames.shape[-4]
        x = _halves(frames.astype(np.float64))  # (..., T, 2, 768)
        f = (x - self.frame_mean) @ self.frame_basis.T  # f = B1 (x - m1): (..., T, 2, 12)
        # (..., C, 4, 2, 12) -> (..., C, 2, 4, 12) -> (..., C, 2, 48): a half's 4 codes in time order
        y = np.swapaxes(f.reshape(*lead, t // CHUNK_FRAMES, CHUNK_FRAMES, TOKENS, FRAME_DIM), -3, -2)
        y = y.reshape(*lead, t // CHUNK_FRAMES, TOKENS, CHUNK_FRAMES * FRAME_DIM)
        z = ((y - self.chunk_mean) @ self.chunk_basis.T) / self.latent_std  # z = B2 (y - m2) / s
        return z.astype(_out_dtype(frames))

    def decode(self, latents: np.ndarray, *, clip: bool = False) -> np.ndarray:
        """Frames ``(..., 4C, 16, 32, 3)`` of ``latents`` ``(..., C, 2, 16)``, C >= 1.

        Not clipped: values may leave ``[0, 1]`` (a latent far from the data decodes to any pixel values).
        ``clip=True`` clips them for display, at the cost of the exact round trip.
        """
        if not isinstance(latents, np.ndarray):
            raise TypeError(f"latents must be a numpy.ndarray; got {type(latents).__name__}")
        if latents.dtype.kind not in "biuf":
            raise TypeError(f"latents must hold real numbers; got dtype {latents.dtype}")
        if latents.ndim < 3 or latents.shape[-2:] != (TOKENS, LATENT_DIM) or latents.shape[-3] == 0:
            raise ValueError(
                f"latents must have shape (..., C, {TOKENS}, {LATENT_DIM}) with C >= 1; got {latents.shape}"
            )
        if not np.all(np.isfinite(latents)):
            raise ValueError("latents must contain only finite values (no NaN or inf)")
        lead, c = latents.shape[:-3], latents.shape[-3]
        z = latents.astype(np.float64)
        y = (z * self.latent_std) @ self.chunk_basis + self.chunk_mean  # y = B2^T (s z) + m2: (..., C, 2, 48)
        f = np.swapaxes(y.reshape(*lead, c, TOKENS, CHUNK_FRAMES, FRAME_DIM), -3, -2)  # (..., C, 4, 2, 12)
        x = f @ self.frame_basis + self.frame_mean  # x = B1^T f + m1: (..., C, 4, 2, 768)
        h, w, ch = FRAME_SHAPE
        x = x.reshape(*lead, c * CHUNK_FRAMES, TOKENS, h, w // TOKENS, ch)
        frames = np.concatenate([x[..., 0, :, :, :], x[..., 1, :, :, :]], axis=-2)  # left | right
        if clip:
            frames = np.clip(frames, 0.0, 1.0)
        return frames.astype(_out_dtype(latents))

    def reconstruct(self, frames: np.ndarray, *, clip: bool = False) -> np.ndarray:
        """``decode(encode(frames))``: the projection of ``frames`` onto the codec's subspace."""
        return self.decode(self.encode(frames), clip=clip)

    def state(self) -> dict[str, np.ndarray]:
        """The arrays that define the codec (copies), for a checkpoint; :meth:`from_state` inverts it."""
        return {f.name: np.array(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> Codec:
        """The codec saved by :meth:`state` (the same keys, shapes checked)."""
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict of arrays; got {type(state).__name__}")
        missing = sorted(set(_SHAPES) - set(state))
        extra = sorted(set(state) - set(_SHAPES))
        if missing or extra:
            raise ValueError(
                f"state must have exactly the keys {sorted(_SHAPES)}; missing {missing}, extra {extra}"
            )
        return cls(**{name: np.asarray(state[name]) for name in _SHAPES})


def fit_codec(videos: Sequence[np.ndarray], *, max_frames: int = 20000, seed: int = 0) -> Codec:
    """Fit both PCA stages and the latent std on whole chunks of ``videos``.

    Each video is ``(T_i, 16, 32, 3)`` with values in ``[0, 1]`` and any ``T_i >= 0``; its first
    ``T_i mod 4`` frames are dropped (the timeline's start trimming), leaving whole chunks. When the chunks
    hold more than ``max_frames`` frames, ``max_frames // 4`` of them are drawn without replacement with
    ``np.random.default_rng(seed)``; both stages are fitted on the same chunks. At least 8 chunks are needed
    (16 chunk-half samples for the 16 latent components). Deterministic for a given input and seed.
    """
    max_frames = check_int("max_frames", max_frames, minimum=CHUNK_FRAMES)
    seed = check_seed("seed", seed)
    if isinstance(videos, np.ndarray) or not isinstance(videos, Sequence):
        raise TypeError(f"videos must be a sequence of (T, 16, 32, 3) arrays; got {type(videos).__name__}")
    index: list[tuple[int, int]] = []  # (video, first frame of the chunk)
    for i, video in enumerate(videos):
        if not isinstance(video, np.ndarray):
            raise TypeError(f"videos[{i}] must be a numpy.ndarray; got {type(video).__name__}")
        if video.ndim != 4 or video.shape[1:] != FRAME_SHAPE:
            raise ValueError(f"videos[{i}] must have shape (T, 16, 32, 3); got {video.shape}")
        if video.dtype.kind not in "biuf" or (
            video.size and not (np.all(np.isfinite(video)) and video.min() >= 0.0 and video.max() <= 1.0)
        ):
            raise ValueError(f"videos[{i}] must hold finite values in [0, 1]")
        start = video.shape[0] % CHUNK_FRAMES
        index.extend((i, s) for s in range(start, video.shape[0], CHUNK_FRAMES))
    min_chunks = -(-LATENT_DIM // TOKENS)
    if len(index) < min_chunks:
        raise ValueError(f"videos must hold at least {min_chunks} whole chunks of 4 frames; got {len(index)}")
    keep = max_frames // CHUNK_FRAMES
    if len(index) > keep:
        rng = np.random.default_rng(seed)
        chosen = np.sort(rng.choice(len(index), size=keep, replace=False))
        index = [index[j] for j in chosen]
    chunks = np.stack([videos[i][s : s + CHUNK_FRAMES] for i, s in index])  # (N, 4, 16, 32, 3)

    # stage 1: pixels of every half-frame, pooled
    x = _halves(chunks).reshape(-1, HALF_DIM)  # (N * 4 * 2, 768), rows ordered (chunk, frame, half)
    frame_mean, frame_basis, frame_explained = _pca(x, FRAME_DIM)
    f = _project(x, frame_mean, frame_basis).reshape(len(index), CHUNK_FRAMES, TOKENS, FRAME_DIM)

    # stage 2: a half's 4 frame codes in time order, pooled over halves
    y = np.swapaxes(f, 1, 2).reshape(-1, CHUNK_FRAMES * FRAME_DIM)  # (2N, 48)
    chunk_mean, chunk_basis, chunk_explained = _pca(y, LATENT_DIM)
    g = _project(y, chunk_mean, chunk_basis)  # (2N, 16)
    latent_std = np.maximum(g.std(axis=0), _STD_FLOOR)
    return Codec(
        frame_mean=frame_mean,
        frame_basis=frame_basis,
        frame_explained=frame_explained,
        chunk_mean=chunk_mean,
        chunk_basis=chunk_basis,
        chunk_explained=chunk_explained,
        latent_std=latent_std,
    )
