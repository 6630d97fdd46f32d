"""Random supervision masks for sparsely supervised diffusion (chapter 05, Eq. (2)).

A mask ``m`` of shape (B, 1, H, W) marks the pixels whose residual enters the loss: 1 = kept
(supervised), 0 = masked. It is shared across colour channels and drawn afresh for every example and
every training step, independently of the image, the noise and the noise level. ``η`` (``eta``) is the
*mask ratio*, the fraction of pixels removed from supervision. Three samplers:

- ``"fixed"`` (default): exactly ``k = round((1 − η)·H·W)`` kept pixels per example, a uniformly random
  subset drawn without replacement, so ``P(m_p = 1) = k/(HW)`` and ``P(m_p = m_q = 1) = k(k−1)/(HW(HW−1))``;
- ``"bernoulli"``: every pixel kept independently with probability ``1 − η`` (the covariance analysis of
  Eq. (3) assumes this one);
- ``"patch"``: the image is tiled into ``patch × patch`` blocks and a fixed number of whole blocks is kept
  (an exploration toggle: spatially correlated masks).
"""

from __future__ import annotations

import torch

from neurips26.validation import check_choice, check_float, check_int, check_seed

MASK_TYPES = ("fixed", "bernoulli", "patch")


def check_eta(eta: object, name: str = "eta") -> float:
    """The mask ratio ``η ∈ [0, 1)`` (η = 1 would remove every pixel from the loss)."""
    eta = check_float(name, eta, minimum=0.0)
    if eta >= 1.0:
        raise ValueError(f"{name} must be in [0, 1) (the fraction of pixels left out of the loss); got {eta}")
    return eta


def check_images(name: str, x: object, *, channels: int | None = None) -> torch.Tensor:
    """A floating-point image batch (B, C, H, W); ``ValueError`` naming ``name`` otherwise."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (B, C, H, W); got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"{name} must be 4-D (B, C, H, W); got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must hold floating-point numbers; got dtype {x.dtype}")
    if channels is not None and x.shape[1] != channels:
        raise ValueError(f"{name} must have {channels} channel(s); got shape {tuple(x.shape)}")
    return x


def check_mask(mask: object, images: torch.Tensor) -> torch.Tensor:
    """A 0/1 mask (B, 1, H, W) or (B, C, H, W) matching ``images``; returned in the images' dtype."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor of shape (B, 1, H, W); got {type(mask).__name__}")
    b, c, h, w = images.shape
    if mask.ndim != 4 or mask.shape[0] != b or mask.shape[1] not in (1, c) or mask.shape[2:] != (h, w):
        raise ValueError(
            f"mask must have shape ({b}, 1, {h}, {w}) or ({b}, {c}, {h}, {w}) to match the images; "
            f"got {tuple(mask.shape)}"
        )
    if mask.dtype != torch.bool and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("mask must hold only 0 (masked) and 1 (kept)")
    return mask.to(images.dtype)


def kept_count(n: int, eta: float) -> int:
    """``k = round((1 − η)·n)``: pixels (or patches) a fixed-count mask keeps out of ``n``; at least 1."""
    n = check_int("n", n, minimum=1)
    eta = check_eta(eta)
    k = round((1.0 - eta) * n)
    if k < 1:
        raise ValueError(f"eta = {eta} keeps nothing out of {n} (round((1 - eta) * {n}) = 0); lower eta")
    return k


def draw_device(generator: torch.Generator | None, device: torch.device | str | None) -> torch.device:
    """Where a random draw from ``generator`` meant for ``device`` happens.

    On ``device`` itself when the generator can drive it (a generator of the same device type, or the meta
    device, which ignores generators), so a training step on a GPU draws on the GPU; otherwise on the
    generator's own device, and the caller moves the result. ``device=None`` means the generator's device
    (the CPU without a generator: torch's global generator).
    """
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    if device is None:
        return torch.device("cpu") if generator is None else generator.device
    if not isinstance(device, torch.device | str):
        raise TypeError(f"device must be a torch.device, a str or None; got {type(device).__name__}")
    device = torch.device(device)
    if generator is None or device.type in (generator.device.type, "meta"):
        return device
    return generator.device


def _fixed_count(
    rows: int, n: int, k: int, generator: torch.Generator | None, device: torch.device
) -> torch.Tensor:
    """(rows, n) 0/1 matrix with exactly ``k`` ones per row at uniformly random positions, on ``device``."""
    order = torch.rand(rows, n, generator=generator, device=device).argsort(dim=1)
    mask = torch.zeros(rows, n, device=device)
    mask.scatter_(1, order[:, :k], 1.0)
    return mask


def sample_mask(
    shape_bhw: tuple[int, int, int],
    eta: float,
    *,
    mask_type: str = "fixed",
    generator: torch.Generator | None = None,
    seed: int | None = None,
    patch: int = 4,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Draw ``B`` independent masks (B, 1, H, W): 1 = supervised pixel, shared across channels.

    ``generator`` (advanced by the call, so successive training steps get fresh masks) or ``seed`` (a fresh
    CPU generator) makes the draw repeatable; with neither, torch's global generator is used. The draw
    happens on ``device`` when the generator lives there (a training step on a GPU draws its masks on the
    GPU), otherwise on the generator's device and the result is moved (:func:`draw_device`): a seed or a
    CPU generator gives the same masks everywhere. ``device=None`` returns the mask where it was drawn.
    ``η = 0`` gives all ones for every mask type. Raises ``ValueError`` naming ``eta`` when a fixed-count
    or patch mask would keep nothing.
    """
    if not isinstance(shape_bhw, tuple | list) or len(shape_bhw) != 3:
        raise ValueError(f"shape_bhw must be a tuple (B, H, W); got {shape_bhw!r}")
    b = check_int("shape_bhw[0]", shape_bhw[0], minimum=1)
    h = check_int("shape_bhw[1]", shape_bhw[1], minimum=1)
    w = check_int("shape_bhw[2]", shape_bhw[2], minimum=1)
    eta = check_eta(eta)
    mask_type = check_choice("mask_type", mask_type, MASK_TYPES)
    patch = check_int("patch", patch, minimum=1)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    if seed is not None:
        if generator is not None:
            raise ValueError("pass either generator or seed, not both")
        generator = torch.Generator().manual_seed(check_seed("seed", seed))
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype; got {type(dtype).__name__}")

    where = draw_device(generator, device)
    if mask_type == "fixed":
        mask = _fixed_count(b, h * w, kept_count(h * w, eta), generator, where).reshape(b, 1, h, w)
    elif mask_type == "bernoulli":
        # P(u < 1 − η) = 1 − η for u ~ U[0, 1); η = 0 keeps every pixel since u < 1 always.
        mask = (torch.rand(b, 1, h, w, generator=generator, device=where) < 1.0 - eta).float()
    else:
        gh, gw = -(-h // patch), -(-w // patch)  # blocks per column / row (the last ones may be cut)
        blocks = _fixed_count(b, gh * gw, kept_count(gh * gw, eta), generator, where).reshape(b, 1, gh, gw)
        mask = blocks.repeat_interleave(patch, dim=2).repeat_interleave(patch, dim=3)[:, :, :h, :w]
    return mask.to(dtype=dtype, device=where if device is None else device)
