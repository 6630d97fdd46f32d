"""The pose estimator: the per-frame motion between two frames, used to relabel imagined futures.

The paper trains its action head (Stage 4) on the *generated* futures and relabels their action targets
by running Depth-Anything-3 on the generated frames, so that the labels describe what the generator
imagined rather than what the expert did. Our stand-in is an MLP that reads two consecutive frames
``(a, b)`` and returns the delta ``(Δforward m, Δlateral m, Δyaw deg)`` that moved the camera from ``a`` to
``b`` in the world's step convention (turn first, then move along the new heading; the inverse of
:func:`~neurips26.sparsevideonav.expert.compose` for one step).

- **Input.** ``[a − ½ ⧺ b − ½ ⧺ 4 (b − a)]``, each frame flattened to 1536 numbers (4608 in all). The
  difference is redundant for a linear first layer but puts the motion signal in the input itself instead
  of leaving the network to find it as a cancellation of two large terms; centring and the gain of 4
  (:data:`DIFFERENCE_GAIN`) cut the training loss about 2× at equal steps in our runs.
- **Network.** ``layers`` hidden layers of ``hidden`` GELU units, then 3 outputs in units of
  :data:`~neurips26.sparsevideonav.action_head.ACTION_SCALE` (the loss is the MSE there, so metres and
  degrees weigh alike); :meth:`PoseEstimator.forward` multiplies back to world units.
- **Training pairs** (:func:`pairs_from_episodes`) come from real episodes whose frames went through the
  codec round trip ``decode(latents)``, so the estimator sees the blur and artefacts decoded generations
  have; the target of pair ``(p, p + 1)`` is the padded action ``p``. Pairs are drawn over every padded
  frame ``p < last``: the :data:`~neurips26.sparsevideonav.dataset.LEAD` stand-still frames (zero action)
  are kept at their natural rate (about 5 % of the pairs), so a still view maps to a zero delta.
- **Relabelling** (:func:`relabel`). Decision ``d`` acts after frame ``4d − 1``, the last frame of its
  second reference chunk; future offsets 0 and 1 are the chunks ``d, d + 1`` = frames ``4d … 4d + 7``. The
  8 consecutive deltas ``4d − 1 → 4d, …, 4d + 6 → 4d + 7`` are exactly the action chunk of decision ``d``
  (:meth:`~neurips26.sparsevideonav.dataset.Episode.action_chunk`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.sparsevideonav.action_head import ACTION_SCALE
from neurips26.sparsevideonav.codec import FRAME_SHAPE, LATENT_DIM, TOKENS, Codec
from neurips26.sparsevideonav.dataset import ACTION_CHUNK, Episode
from neurips26.sparsevideonav.timeline import CHUNK_FRAMES, REFERENCE_CHUNKS
from neurips26.train import choose_device, fit
from neurips26.validation import check_int, check_seed

#: Numbers in one flattened frame.
FRAME_SIZE = int(np.prod(FRAME_SHAPE))
#: Factor on the input's frame difference ``b − a`` (module doc).
DIFFERENCE_GAIN = 4.0
#: Names of the three components, in order.
COMPONENTS: tuple[str, str, str] = ("forward", "lateral", "yaw")


@dataclass(frozen=True)
class PoseEstimatorConfig:
    """hidden (units per hidden layer), layers (hidden layers); difference: append ``b − a`` to the input;
    pool: average-pool each frame by this factor first (2: 8 × 16 pixels; keeps the checkpoint small)."""

    hidden: int = 128
    layers: int = 2
    difference: bool = True
    pool: int = 2

    def __post_init__(self) -> None:
        check_int("hidden", self.hidden, minimum=1)
        check_int("layers", self.layers, minimum=1)
        check_int("pool", self.pool, minimum=1)
        if 16 % self.pool or 32 % self.pool:
            raise ValueError(f"pool must divide the frame's 16 x 32 pixels; got {self.pool}")
        if not isinstance(self.difference, bool):
            raise TypeError(f"difference must be a bool; got {type(self.difference).__name__}")

    @property
    def inputs(self) -> int:
        """Input width: 2 (or 3 with the difference) flattened, pooled frames."""
        return (3 if self.difference else 2) * FRAME_SIZE // self.pool**2


@dataclass(frozen=True)
class Pairs:
    """Training pairs: frames_a, frames_b (N, 16, 32, 3) float32 (decoded, consecutive), targets (N, 3)
    float32 in world units (the padded action between them)."""

    frames_a: np.ndarray
    frames_b: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.targets)


def _check_frames(name: str, frames: object, batch: int | None = None) -> Tensor:
    if not isinstance(frames, Tensor) or frames.dim() != 4 or tuple(frames.shape[1:]) != FRAME_SHAPE:
        raise ValueError(f"{name} must have shape (B, 16, 32, 3); got {tuple(getattr(frames, 'shape', ()))}")
    if batch is not None and frames.shape[0] != batch:
        raise ValueError(f"{name} must have batch size {batch} like frames_a; got {frames.shape[0]}")
    return frames


class PoseEstimator(nn.Module):
    """forward(frames_a (B, 16, 32, 3), frames_b (B, 16, 32, 3)) → (B, 3) deltas in world units."""

    def __init__(self, config: PoseEstimatorConfig | None = None):
        super().__init__()
        config = PoseEstimatorConfig() if config is None else config
        if not isinstance(config, PoseEstimatorConfig):
            raise TypeError(f"config must be a PoseEstimatorConfig; got {type(config).__name__}")
        self.config = config
        sizes = [config.inputs] + [config.hidden] * config.layers
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:], strict=False))
        self.out = nn.Linear(config.hidden, 3)
        self.register_buffer("scale", torch.tensor(ACTION_SCALE), persistent=False)

    def normalised(self, frames_a: Tensor, frames_b: Tensor) -> Tensor:
        """The delta (B, 3) in units of ACTION_SCALE (what the loss compares)."""
        frames_a = _check_frames("frames_a", frames_a)
        frames_b = _check_frames("frames_b", frames_b, frames_a.shape[0])
        dtype = self.out.weight.dtype
        # pixels centred on 0.5 (the first layer then starts without a large shared offset); the
        # difference, a few hundredths where the view moved, is amplified by DIFFERENCE_GAIN
        a, b = (self._pooled(f.to(dtype)) - 0.5 for f in (frames_a, frames_b))
        x = torch.cat([a, b, DIFFERENCE_GAIN * (b - a)] if self.config.difference else [a, b], dim=1)
        for layer in self.hidden:
            x = F.gelu(layer(x))
        return self.out(x)

    def _pooled(self, frames: Tensor) -> Tensor:
        """(B, 16, 32, 3) → (B, 16·32·3 / pool²): average-pooled, flattened."""
        k = self.config.pool
        if k > 1:
            frames = F.avg_pool2d(frames.permute(0, 3, 1, 2), k).permute(0, 2, 3, 1)
        return frames.reshape(frames.shape[0], -1)

    def forward(self, frames_a: Tensor, frames_b: Tensor, *, normalised: bool = False) -> Tensor:
        """The delta (B, 3) in world units, or in units of ACTION_SCALE with ``normalised`` (the loss's
        form, through the module's forward as DDP needs)."""
        delta = self.normalised(frames_a, frames_b)
        return delta if normalised else delta * self.scale.to(self.out.weight.dtype)


def _check_inputs(episodes: object, codec: object) -> list[Episode]:
    if isinstance(episodes, Episode) or not isinstance(episodes, Sequence) or not len(episodes):
        raise TypeError(f"episodes must be a non-empty sequence of Episode; got {type(episodes).__name__}")
    for i, ep in enumerate(episodes):
        if not isinstance(ep, Episode):
            raise TypeError(f"episodes[{i}] must be an Episode; got {type(ep).__name__}")
    if not isinstance(codec, Codec):
        raise TypeError(f"codec must be a Codec; got {type(codec).__name__}")
    return list(episodes)


def _decoded(episode: Episode, codec: Codec) -> np.ndarray:
    """The codec round trip of the chunks covering padded frames 0 … last: (≥ last + 1, 16, 32, 3)."""
    chunks = episode.last // CHUNK_FRAMES + 1
    return codec.decode(episode.latents[:chunks]).astype(np.float32)


def _all_pairs(episodes: list[Episode]) -> np.ndarray:
    """Every (episode, padded frame p) with p < last, shape (N, 2)."""
    return np.array([(i, p) for i, ep in enumerate(episodes) for p in range(ep.last)], dtype=np.int64)


def _gather(episodes: list[Episode], codec: Codec, index: np.ndarray) -> Pairs:
    """The pairs at rows (episode, p) of ``index``, each episode decoded once."""
    n = len(index)
    frames_a = np.empty((n, *FRAME_SHAPE), dtype=np.float32)
    frames_b = np.empty((n, *FRAME_SHAPE), dtype=np.float32)
    targets = np.empty((n, 3), dtype=np.float32)
    for i in np.unique(index[:, 0]):
        rows = np.flatnonzero(index[:, 0] == i)
        p = index[rows, 1]
        frames = _decoded(episodes[int(i)], codec)
        frames_a[rows], frames_b[rows] = frames[p], frames[p + 1]
        targets[rows] = episodes[int(i)].actions[p]  # action p moves frame p to p + 1
    return Pairs(frames_a, frames_b, targets)


def pairs_from_episodes(episodes: Sequence[Episode], codec: Codec, *, rows: int, seed: int) -> Pairs:
    """``rows`` (decoded frame p, decoded frame p + 1, action p) pairs drawn with ``default_rng(seed)``.

    Drawn uniformly over every padded frame ``p < last`` of every episode (module doc), without
    replacement when ``rows`` does not exceed the number of such frames, with replacement otherwise.
    """
    episodes = _check_inputs(episodes, codec)
    rows = check_int("rows", rows, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    index = _all_pairs(episodes)
    if not len(index):
        raise ValueError("episodes must hold at least one action (last >= 1)")
    chosen = np.sort(rng.choice(len(index), size=rows, replace=rows > len(index)))
    return _gather(episodes, codec, index[chosen])


def train_pose_estimator(
    episodes: Sequence[Episode],
    codec: Codec,
    *,
    steps: int,
    batch: int,
    seed: int,
    rows: int | None = None,
    config: PoseEstimatorConfig | None = None,
    lr: float = 1e-3,
    progress: bool = False,
) -> tuple[PoseEstimator, list[float]]:
    """A :class:`PoseEstimator` fitted with :func:`neurips26.train.fit` (AdamW, cosine schedule).

    Pairs come from :func:`pairs_from_episodes` (``rows`` of them; None = every padded frame once); each
    step draws ``batch`` of them with a generator seeded by ``seed``; the loss is the MSE between the
    normalised prediction and the normalised target. Weights are initialised under ``seed``; the model
    trains on :func:`~neurips26.train.choose_device` (data-parallel under ``torchrun``: the loss calls the
    module). Returns the model (eval mode) and the per-step losses.
    """
    episodes = _check_inputs(episodes, codec)
    steps = check_int("steps", steps, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    seed = check_seed("seed", seed)
    if rows is None:
        rows = len(_all_pairs(episodes))
    pairs = pairs_from_episodes(episodes, codec, rows=rows, seed=seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = PoseEstimator(config).to(choose_device())
    frames_a = torch.as_tensor(pairs.frames_a)
    frames_b = torch.as_tensor(pairs.frames_b)
    targets = torch.as_tensor(pairs.targets) / torch.tensor(ACTION_SCALE)
    rng = np.random.default_rng(seed)

    def batches(_step: int) -> tuple[Tensor, Tensor, Tensor]:
        pick = torch.as_tensor(rng.integers(0, len(pairs), batch))
        return frames_a[pick], frames_b[pick], targets[pick]

    def loss_fn(m: PoseEstimator, b: tuple[Tensor, Tensor, Tensor]) -> Tensor:
        return F.mse_loss(m(b[0], b[1], normalised=True), b[2])

    history = fit(
        model, loss_fn, batches, steps=steps, seed=seed, lr=lr, progress=progress, desc="pose estimator"
    )
    return model.eval(), list(history.loss)


@torch.no_grad()
def _predict(
    model: PoseEstimator, frames_a: np.ndarray, frames_b: np.ndarray, chunk: int = 1024
) -> np.ndarray:
    device = next(model.parameters()).device
    out = []
    for s in range(0, len(frames_a), chunk):
        a = torch.as_tensor(frames_a[s : s + chunk], device=device)
        b = torch.as_tensor(frames_b[s : s + chunk], device=device)
        out.append(model(a, b).float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, 3), dtype=np.float32)


def pose_error(model: PoseEstimator, episodes: Sequence[Episode], codec: Codec) -> dict[str, float]:
    """Mean absolute error per component (``forward``, ``lateral`` in m, ``yaw`` in deg) over every pair
    ``(p, p + 1)``, ``p < last``, of ``episodes`` (held-out ones, decoded through ``codec``)."""
    if not isinstance(model, PoseEstimator):
        raise TypeError(f"model must be a PoseEstimator; got {type(model).__name__}")
    episodes = _check_inputs(episodes, codec)
    pairs = _gather(episodes, codec, _all_pairs(episodes))
    error = np.abs(_predict(model, pairs.frames_a, pairs.frames_b) - pairs.targets).mean(axis=0)
    return {name: float(e) for name, e in zip(COMPONENTS, error, strict=True)}


def _latents(name: str, value: object, min_chunks: int) -> np.ndarray:
    if isinstance(value, Tensor):
        value = value.detach().cpu().numpy()
    if (
        not isinstance(value, np.ndarray)
        or value.ndim != 4
        or value.shape[1] < min_chunks
        or value.shape[2:] != (TOKENS, LATENT_DIM)
    ):
        raise ValueError(
            f"{name} must have shape (B, >= {min_chunks}, {TOKENS}, {LATENT_DIM}); "
            f"got {tuple(getattr(value, 'shape', ()))}"
        )
    return value


def relabel(model: PoseEstimator, codec: Codec, reference_latents: object, future_latents: object) -> Tensor:
    """The action chunk (B, 8, 3) (world units, float32, on the model's device) a generated future implies.

    ``reference_latents`` (B, 2, 2, 16): the decision's reference chunks; ``future_latents`` (B, F, 2, 16),
    F ≥ 2: the generated future, offsets 0 and 1 first (numpy arrays or tensors). Decodes the last frame of
    the second reference chunk (frame ``4d − 1``) and the 8 frames of the first two future chunks
    (``4d … 4d + 7``) and estimates the deltas between consecutive ones (module doc).
    """
    if not isinstance(model, PoseEstimator):
        raise TypeError(f"model must be a PoseEstimator; got {type(model).__name__}")
    if not isinstance(codec, Codec):
        raise TypeError(f"codec must be a Codec; got {type(codec).__name__}")
    ref = _latents("reference_latents", reference_latents, REFERENCE_CHUNKS)
    if ref.shape[1] != REFERENCE_CHUNKS:
        raise ValueError(f"reference_latents must have {REFERENCE_CHUNKS} chunks; got {ref.shape[1]}")
    fut = _latents("future_latents", future_latents, 2)
    if fut.shape[0] != ref.shape[0]:
        raise ValueError(f"future_latents must have batch size {ref.shape[0]}; got {fut.shape[0]}")
    b = ref.shape[0]
    now = codec.decode(ref[:, -1:].astype(np.float32))[:, -1:]  # frame 4d − 1: (B, 1, 16, 32, 3)
    ahead = codec.decode(fut[:, :2].astype(np.float32))  # frames 4d … 4d + 7: (B, 8, 16, 32, 3)
    frames = np.concatenate([now, ahead], axis=1)  # (B, 9, ...)
    a = frames[:, :-1].reshape(b * ACTION_CHUNK, *FRAME_SHAPE)
    nxt = frames[:, 1:].reshape(b * ACTION_CHUNK, *FRAME_SHAPE)
    deltas = _predict(model, a, nxt).reshape(b, ACTION_CHUNK, 3)
    return torch.as_tensor(deltas, device=next(model.parameters()).device)


__all__ = [
    "COMPONENTS",
    "FRAME_SIZE",
    "Pairs",
    "PoseEstimator",
    "PoseEstimatorConfig",
    "pairs_from_episodes",
    "pose_error",
    "relabel",
    "train_pose_estimator",
]
