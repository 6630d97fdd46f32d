"""What the chapter measures on generated samples (chapter 05, claims D3–D7).

- :func:`relative_score_error` — ``E‖s_θ - s*‖² / E‖s*‖²`` against a known population score, averaged over
  noise levels (the Gaussian field has ``s*`` in closed form);
- :func:`memorisation_rate` — the share of samples much closer to one training image than to any other
  (``‖x - NN_1‖ / ‖x - NN_2‖ < 1/3``), with the nearest neighbours (:func:`nearest_neighbours`);
- :class:`ProxyFID` — the Fréchet distance (:func:`frechet_distance`) between penultimate features of a small
  digit classifier (:class:`DigitCNN`, trained once by :func:`digit_classifier`) on samples and on held-out
  digits: FID's recipe with a network that fits 16×16 digits;
- :func:`twin_asymmetry` and :func:`colour_mismatch` — global consistency of twin-blob samples.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.linalg
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.train import History, Trained, fit, trained
from neurips26.validation import check_array, check_float, check_int, check_seed

# --------------------------------------------------------------------------------------------
# population-score error

SCORE_SIGMAS: tuple[float, ...] = tuple(float(s) for s in np.geomspace(0.05, 5.0, 8))
"""The 8 log-spaced noise levels in [0.05, 5] over which the score error is averaged."""


class ScoreError(NamedTuple):
    """Relative score error per noise level and its mean over the levels."""

    sigmas: np.ndarray
    per_sigma: np.ndarray
    mean: float


def relative_score_error(
    score_fn: Callable[[Tensor, float], Tensor],
    exact_score_fn: Callable[[Tensor, float], Tensor],
    samples_fn: Callable[[float], Tensor],
    sigmas: Sequence[float] = SCORE_SIGMAS,
) -> ScoreError:
    """``E‖s_θ(x; σ) - s*(x; σ)‖² / E‖s*(x; σ)‖²`` for each σ, ``x ~ p_σ``, and its mean over σ.

    ``samples_fn(σ)`` returns points drawn from the noised population ``p_σ`` (B, C, H, W) — fresh ones,
    not the training set; ``score_fn(x, σ)`` and ``exact_score_fn(x, σ)`` return scores of the shape of
    ``x``. Expectations are sample means over the batch (the ratio of the two sums). Runs without gradients.
    """
    for name, fn in (("score_fn", score_fn), ("exact_score_fn", exact_score_fn), ("samples_fn", samples_fn)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable; got {type(fn).__name__}")
    sigma_list = [check_float(f"sigmas[{i}]", s, minimum=0.0, strict_min=True) for i, s in enumerate(sigmas)]
    if not sigma_list:
        raise ValueError("sigmas must hold at least one noise level")
    ratios = []
    with torch.no_grad():
        for sigma in sigma_list:
            x = samples_fn(sigma)
            if not isinstance(x, Tensor):
                raise TypeError(f"samples_fn must return a torch.Tensor; got {type(x).__name__}")
            model, exact = score_fn(x, sigma), exact_score_fn(x, sigma)
            if model.shape != x.shape or exact.shape != x.shape:
                raise ValueError(
                    f"score_fn and exact_score_fn must return the shape of x {tuple(x.shape)}; "
                    f"got {tuple(model.shape)} and {tuple(exact.shape)}"
                )
            err = (model.double() - exact.double()).pow(2).sum()
            ratios.append(float(err / exact.double().pow(2).sum()))
    per_sigma = np.asarray(ratios)
    return ScoreError(np.asarray(sigma_list), per_sigma, float(per_sigma.mean()))


# --------------------------------------------------------------------------------------------
# memorisation


def _flat(name: str, images: object) -> Tensor:
    """Images (N, ...) as a float64 matrix (N, D)."""
    if isinstance(images, np.ndarray):
        images = torch.from_numpy(check_array(name, images))
    if not isinstance(images, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray; got {type(images).__name__}")
    if images.ndim < 2 or images.shape[0] == 0:
        raise ValueError(f"{name} must have shape (N, ...) with N >= 1; got {tuple(images.shape)}")
    return images.reshape(images.shape[0], -1).double()


def nearest_neighbours(samples: Tensor, train: Tensor, k: int = 2) -> tuple[Tensor, Tensor]:
    """Euclidean distances (N, k) and indices (N, k) of the ``k`` nearest training images of each sample."""
    a, b = _flat("samples", samples), _flat("train", train)
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"samples and train must have the same image shape; got {a.shape[1]} and {b.shape[1]} values"
        )
    k = check_int("k", k, minimum=1, maximum=b.shape[0])
    dist = torch.cdist(a, b)  # (N, M)
    values, indices = torch.topk(dist, k, dim=1, largest=False)
    return values, indices


class Memorisation(NamedTuple):
    """Result of :func:`memorisation_rate`: the rate; per sample the ratio, the flag, the nearest image."""

    rate: float
    ratios: Tensor
    memorised: Tensor
    nearest: Tensor


def memorisation_rate(samples: Tensor, train: Tensor, ratio: float = 1 / 3) -> Memorisation:
    """The share of samples with ``‖x - NN_1‖ / ‖x - NN_2‖ < ratio`` (``NN_i``: i-th nearest training image).

    A sample that copies a training image sits at distance ~0 from it and far from the rest; a novel
    sample is about equally far from its two nearest neighbours. A sample equal to two identical training
    images counts as memorised (ratio 0). ``nearest`` holds the index of ``NN_1`` for plotting pairs.
    """
    ratio = check_float("ratio", ratio, minimum=0.0, maximum=1.0, strict_min=True)
    if _flat("train", train).shape[0] < 2:
        raise ValueError("train must hold at least 2 images (nearest and second nearest)")
    dist, idx = nearest_neighbours(samples, train, k=2)
    d1, d2 = dist[:, 0], dist[:, 1]
    ratios = torch.where(d2 > 0, d1 / d2.clamp_min(torch.finfo(d2.dtype).tiny), torch.zeros_like(d1))
    memorised = ratios < ratio
    return Memorisation(float(memorised.double().mean()), ratios, memorised, idx[:, 0])


# --------------------------------------------------------------------------------------------
# Fréchet distance


def gaussian_frechet_distance(
    mu_a: np.ndarray, cov_a: np.ndarray, mu_b: np.ndarray, cov_b: np.ndarray
) -> float:
    """Squared Fréchet (2-Wasserstein) distance between N(μ_a, Σ_a) and N(μ_b, Σ_b).

    ``d² = ‖μ_a - μ_b‖² + tr Σ_a + tr Σ_b - 2 tr (Σ_a Σ_b)^{1/2}``. The last trace is computed as
    ``tr (Σ_a^{1/2} Σ_b Σ_a^{1/2})^{1/2}`` (same eigenvalues as ``Σ_a Σ_b``), a symmetric PSD matrix, so its
    square root comes from ``eigh`` without the complex round-off ``sqrtm`` of a product can show when
    the covariances are singular (fewer samples than features).
    """
    mu_a = check_array("mu_a", mu_a, ndim=1, complex_ok=False).astype(np.float64)
    d = mu_a.shape[0]
    mu_b = check_array("mu_b", mu_b, shape=(d,), complex_ok=False).astype(np.float64)
    cov_a = check_array("cov_a", cov_a, shape=(d, d), complex_ok=False).astype(np.float64)
    cov_b = check_array("cov_b", cov_b, shape=(d, d), complex_ok=False).astype(np.float64)
    root_a = _psd_sqrt(cov_a)
    middle = root_a @ cov_b @ root_a
    eig = np.clip(scipy.linalg.eigvalsh((middle + middle.T) / 2), 0.0, None)
    value = float(np.sum((mu_a - mu_b) ** 2) + np.trace(cov_a) + np.trace(cov_b) - 2.0 * np.sum(np.sqrt(eig)))
    return max(value, 0.0)  # a distance: round-off can leave ~ -1e-12 for identical inputs


def _psd_sqrt(cov: np.ndarray) -> np.ndarray:
    """Symmetric square root of a symmetric PSD matrix (negative round-off eigenvalues set to 0)."""
    eig, vec = scipy.linalg.eigh((cov + cov.T) / 2)
    return (vec * np.sqrt(np.clip(eig, 0.0, None))) @ vec.T


def feature_statistics(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (D,) and unbiased covariance (D, D) of features (N, D), N >= 2."""
    features = check_array("features", np.asarray(features), ndim=2, complex_ok=False).astype(np.float64)
    if features.shape[0] < 2:
        raise ValueError(f"features must hold at least 2 rows for a covariance; got {features.shape[0]}")
    return features.mean(axis=0), np.cov(features, rowvar=False).reshape(features.shape[1], features.shape[1])


def frechet_distance(feats_a: np.ndarray, feats_b: np.ndarray) -> float:
    """Fréchet distance of the Gaussians fitted to feature sets (N_a, D) and (N_b, D) (FID's formula)."""
    mu_a, cov_a = feature_statistics(feats_a)
    mu_b, cov_b = feature_statistics(feats_b)
    if mu_a.shape != mu_b.shape:
        raise ValueError(
            f"feats_a and feats_b must have the same width; got {mu_a.shape[0]} and {mu_b.shape[0]}"
        )
    return gaussian_frechet_distance(mu_a, cov_a, mu_b, cov_b)


# --------------------------------------------------------------------------------------------
# the proxy-FID digit classifier


@dataclass(frozen=True)
class DigitCNNConfig:
    """The digit classifier and its training: two conv-pool stages, a feature layer, 10 logits.

    image_size: side of the (1-channel, [-1, 1]) input images, divisible by 4; channels: widths of the two
    convolution stages; features: width of the penultimate layer (the Fréchet features); steps, batch_size,
    lr, weight_decay: AdamW training with cosine decay (:func:`neurips26.train.fit`); shift: random
    translations by up to this many pixels during training (augmentation); seed: initialisation, batches
    and augmentation.
    """

    image_size: int = 16
    channels: tuple[int, int] = (16, 32)
    features: int = 64
    steps: int = 600
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-4
    shift: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        size = check_int("image_size", self.image_size, minimum=4)
        if size % 4:
            raise ValueError(f"image_size must be divisible by 4 (two 2×2 poolings); got {size}")
        if not isinstance(self.channels, tuple | list) or len(self.channels) != 2:
            raise TypeError(f"channels must be a tuple of two ints; got {self.channels!r}")
        object.__setattr__(self, "channels", tuple(self.channels))
        for i, c in enumerate(self.channels):
            check_int(f"channels[{i}]", c, minimum=1)
        check_int("features", self.features, minimum=1)
        check_int("steps", self.steps, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("weight_decay", self.weight_decay, minimum=0.0)
        check_int("shift", self.shift, minimum=0, maximum=size // 4)
        check_seed("seed", self.seed)


class DigitCNN(nn.Module):
    """``x (B, 1, S, S) → logits (B, 10)``; :meth:`features` gives the penultimate (B, features) layer."""

    def __init__(self, config: DigitCNNConfig) -> None:
        super().__init__()
        if not isinstance(config, DigitCNNConfig):
            raise TypeError(f"config must be a DigitCNNConfig; got {type(config).__name__}")
        self.config = config
        c1, c2 = config.channels
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            self.conv1 = nn.Conv2d(1, c1, 3, padding=1)
            self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
            self.hidden = nn.Linear(c2 * (config.image_size // 4) ** 2, config.features)
            self.head = nn.Linear(config.features, 10)

    def _check(self, x: object) -> Tensor:
        s = self.config.image_size
        if not isinstance(x, Tensor):
            raise TypeError(f"x must be a torch.Tensor; got {type(x).__name__}")
        if x.ndim != 4 or x.shape[1:] != (1, s, s):
            raise ValueError(f"x must have shape (batch, 1, {s}, {s}); got {tuple(x.shape)}")
        return x

    def features(self, x: Tensor) -> Tensor:
        """Penultimate activations (B, features): ReLU(W · flatten(pool(ReLU(conv(pool(ReLU(conv x))))))))."""
        h = F.max_pool2d(F.relu(self.conv1(self._check(x))), 2)  # S/2
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)  # S/4
        return F.relu(self.hidden(h.flatten(1)))

    def forward(self, x: Tensor) -> Tensor:
        """Class logits (B, 10)."""
        return self.head(self.features(x))


def _check_labelled(images: object, labels: object, size: int) -> tuple[Tensor, Tensor]:
    if not isinstance(images, Tensor) or images.ndim != 4 or images.shape[1:] != (1, size, size):
        shape = tuple(images.shape) if isinstance(images, Tensor) else type(images).__name__
        raise ValueError(f"images must be a tensor of shape (N, 1, {size}, {size}); got {shape}")
    if not isinstance(labels, Tensor) or labels.shape != (images.shape[0],):
        shape = tuple(labels.shape) if isinstance(labels, Tensor) else type(labels).__name__
        raise ValueError(f"labels must be a tensor of shape ({images.shape[0]},); got {shape}")
    if labels.is_floating_point() or labels.min() < 0 or labels.max() > 9:
        raise ValueError("labels must be integer digit classes in 0..9")
    return images.float(), labels.long()


def train_digit_cnn(model: DigitCNN, images: Tensor, labels: Tensor, *, progress: bool = True) -> History:
    """Train ``model`` in place on digits (N, 1, S, S) in [-1, 1] with labels (N,), cross-entropy, AdamW.

    Each step takes ``batch_size`` random images, each shifted by a random ``(dy, dx) ∈ [-shift, shift]²``
    (with background padding), from a generator seeded by ``config.seed``: the same seed, the same model.
    """
    cfg = model.config
    images, labels = _check_labelled(images, labels, cfg.image_size)
    generator = torch.Generator().manual_seed(cfg.seed)
    background = float(images.min())
    pad = cfg.shift

    def batch(step: int) -> tuple[Tensor, Tensor]:
        idx = torch.randint(images.shape[0], (cfg.batch_size,), generator=generator)
        x = images[idx]
        if pad:
            padded = F.pad(x, (pad, pad, pad, pad), value=background)
            dy, dx = torch.randint(2 * pad + 1, (2,), generator=generator).tolist()
            x = padded[:, :, dy : dy + cfg.image_size, dx : dx + cfg.image_size]
        return x, labels[idx]

    def loss(net: nn.Module, b: tuple[Tensor, Tensor]) -> Tensor:
        return F.cross_entropy(net(b[0]), b[1])

    return fit(
        model,
        loss,
        batch,
        steps=cfg.steps,
        seed=cfg.seed,
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
        warmup=min(50, cfg.steps // 10),
        grad_clip=None,
        progress=progress,
        desc="digit classifier",
    )


def _device_of(model: nn.Module) -> torch.device:
    """Where ``model``'s parameters live (its inputs are moved there)."""
    return next(model.parameters()).device


def classifier_accuracy(model: DigitCNN, images: Tensor, labels: Tensor) -> float:
    """Share of ``images`` whose arg-max logit is the label (computed on the model's device)."""
    images, labels = _check_labelled(images, labels, model.config.image_size)
    images, labels = images.to(_device_of(model)), labels.to(_device_of(model))
    was_training = model.training
    model.eval()
    with torch.no_grad():
        correct = (model(images).argmax(dim=1) == labels).double().mean()
    model.train(was_training)
    return float(correct)


def _fingerprint(*tensors: Tensor) -> str:
    digest = hashlib.sha256()
    for t in tensors:
        array = t.detach().cpu().contiguous().numpy()
        digest.update(str((array.dtype, array.shape)).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()[:16]


def digit_classifier(
    images: Tensor,
    labels: Tensor,
    config: DigitCNNConfig | None = None,
    *,
    verbose: bool = True,
    device: torch.device | str | None = None,
) -> Trained:
    """The proxy-FID classifier trained on ``(images, labels)``, loaded from the cache when it exists.

    The cache key holds ``config``, a hash of the training data and the source of ``neurips26.ssd`` and
    ``neurips26.train`` (:func:`neurips26.train.trained`), so new data or new code retrains. The model is
    trained on, or loaded onto, ``device`` (None: the CPU).
    """
    config = DigitCNNConfig() if config is None else config
    if not isinstance(config, DigitCNNConfig):
        raise TypeError(f"config must be a DigitCNNConfig; got {type(config).__name__}")
    images, labels = _check_labelled(images, labels, config.image_size)
    keyed = {"classifier": config, "data": _fingerprint(images, labels)}
    return trained(
        "ssd-digit-cnn",
        keyed,
        lambda: DigitCNN(config) if device is None else DigitCNN(config).to(device),
        lambda model: train_digit_cnn(model, images, labels),
        package=("neurips26.ssd", "neurips26.train"),
        verbose=verbose,
    )


class ProxyFID:
    """Fréchet distance of classifier features between images and a fixed reference set (lower is better).

    ``ProxyFID(classifier, reference)`` stores the feature mean and covariance of ``reference``
    (N, 1, S, S); calling it on images returns their :func:`gaussian_frechet_distance` to those statistics.
    Images are clamped to [-1, 1] first, the range the classifier saw, and moved to its device.
    """

    def __init__(self, classifier: DigitCNN, reference: Tensor, *, batch_size: int = 1024) -> None:
        if not isinstance(classifier, DigitCNN):
            raise TypeError(f"classifier must be a DigitCNN; got {type(classifier).__name__}")
        self.classifier = classifier
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.reference_mean, self.reference_cov = feature_statistics(self.features(reference))

    def features(self, images: Tensor) -> np.ndarray:
        """Penultimate features (N, features) of images (N, 1, S, S), in eval mode, as float64."""
        if not isinstance(images, Tensor):
            raise TypeError(f"images must be a torch.Tensor; got {type(images).__name__}")
        device = _device_of(self.classifier)
        was_training = self.classifier.training
        self.classifier.eval()
        with torch.no_grad():
            chunks = [
                self.classifier.features(chunk.to(device).float().clamp(-1.0, 1.0))
                for chunk in images.split(self.batch_size)
            ]
        self.classifier.train(was_training)
        return torch.cat(chunks).double().cpu().numpy()

    def __call__(self, images: Tensor) -> float:
        """Proxy FID of ``images`` against the reference set."""
        mu, cov = feature_statistics(self.features(images))
        return gaussian_frechet_distance(mu, cov, self.reference_mean, self.reference_cov)


# --------------------------------------------------------------------------------------------
# twin blobs: global consistency


def _images(name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if x.ndim != 4 or not x.is_floating_point():
        raise ValueError(
            f"{name} must be a float tensor of shape (batch, channels, height, width); got {tuple(x.shape)}"
        )
    return x


def twin_asymmetry(x: Tensor) -> Tensor:
    """``‖x - flip_lr(x)‖ / ‖x‖`` per image (B,): 0 for a mirror-symmetric image, at most 2.

    An all-zero image counts as symmetric (0).
    """
    x = _images("x", x).double()
    num = (x - x.flip(-1)).flatten(1).norm(dim=1)
    den = x.flatten(1).norm(dim=1)
    return torch.where(den > 0, num / den.clamp_min(torch.finfo(den.dtype).tiny), torch.zeros_like(num))


def blob_centres(x: Tensor) -> Tensor:
    """The (row, col) of the most salient pixel in the left and in the right half, shape (B, 2, 2) (int64).

    Salience is the distance of a pixel's colour from the image's background colour, taken as the
    per-channel median (the blobs cover a minority of pixels). A centre column of an odd width is in
    neither half.
    """
    x = _images("x", x)
    b, _, _, w = x.shape
    if w < 2:
        raise ValueError(f"x must be at least 2 pixels wide; got {tuple(x.shape)}")
    background = x.flatten(2).median(dim=2).values[:, :, None, None]
    salience = (x - background).norm(dim=1)  # (B, H, W)
    half = w // 2
    centres = []
    for offset, part in ((0, salience[:, :, :half]), (w - half, salience[:, :, w - half :])):
        flat = part.flatten(1).argmax(dim=1)
        centres.append(torch.stack([flat // half, flat % half + offset], dim=1))
    return torch.stack(centres, dim=1)


def colour_mismatch(x: Tensor, centres: Tensor | np.ndarray | None = None) -> Tensor:
    """Euclidean distance between the colours of the two blob centres of each image, shape (B,).

    ``centres`` (B, 2, 2) holds ``[(r_1, c_1), (r_2, c_2)]`` per image — the known centres of training
    images, e.g. ``(r, c)`` and ``(r, W-1-c)``; None finds them with :func:`blob_centres` (generated samples).
    The twin blobs of the data share one colour, so a consistent sample scores ~0.
    """
    x = _images("x", x)
    b, _, h, w = x.shape
    if centres is None:
        centres = blob_centres(x)
    if isinstance(centres, np.ndarray):
        centres = torch.from_numpy(check_array("centres", centres, complex_ok=False))
    if not isinstance(centres, Tensor):
        raise TypeError(f"centres must be a tensor, an array or None; got {type(centres).__name__}")
    if centres.shape != (b, 2, 2) or centres.is_floating_point():
        raise ValueError(
            f"centres must be integers of shape ({b}, 2, 2); got {tuple(centres.shape)}, {centres.dtype}"
        )
    rows, cols = centres[..., 0].long().to(x.device), centres[..., 1].long().to(x.device)
    if rows.min() < 0 or rows.max() >= h or cols.min() < 0 or cols.max() >= w:
        raise ValueError(f"centres must lie inside the {h}×{w} image")
    batch = torch.arange(b, device=x.device)[:, None]
    colours = x.permute(0, 2, 3, 1)[batch, rows, cols]  # (B, 2, C)
    return (colours[:, 0] - colours[:, 1]).double().norm(dim=1)
