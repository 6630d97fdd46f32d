"""How wrong the perception stand-ins are, and where their randomness comes from.

:class:`PerceptionNoise` holds the failure rates of the seeded stand-ins for SAM3, the reconstruction
model and the grounding VLM (paper §3.1 tools; the paper gives no levels, these are our choices): a
segmentation drops an instance with probability ``p_miss``, moves mask boundaries by up to
``boundary_px`` pixels and returns an instance as two objects with probability ``split_prob``; a
reconstruction multiplies every length by one hidden scale drawn from ``depth_scale``, every depth by
``1 + N(0, depth_noise)`` and perturbs every camera but the first by ``rot_deg`` / ``trans_m``;
``vlm.locate`` adds ``N(0, locate_sigma)`` (0–1000 units) to its point.

Randomness is *keyed, not streamed*: :func:`keyed_rng` seeds a fresh generator from a SHA-256 hash of
``(seed, tool, arguments)`` (for example ``(seed, "segment_image_by_text", frame 3, "red chair")``).
The same call therefore returns the same result whatever was called before it, so a one-shot program
and a cell-by-cell session that make the same call see the same perception, and re-running a cell is
idempotent. An agent that wants a second opinion must change the call (another frame, another prompt).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields

import numpy as np

from neurips26.validation import check_float, check_int, check_seed


@dataclass(frozen=True)
class PerceptionNoise:
    """Failure rates of the perception stand-ins (module docstring); the defaults are our choices.

    The paper leaves the levels open; the defaults are moderate errors for each model, and the
    chapter sweeps ``p_miss`` to show how the interfaces degrade (:mod:`.experiments`).

    ``p_miss`` probability a segmentation drops an instance; ``boundary_px`` largest erosion/dilation of
    a mask in pixels; ``split_prob`` probability an instance comes back as two objects; ``depth_scale``
    the range ``(lo, hi)`` of a reconstruction's hidden global scale; ``depth_noise`` the σ of the
    per-pixel multiplicative depth noise; ``rot_deg`` / ``trans_m`` the σ of the camera rotation
    (degrees) and translation (metres) noise; ``locate_sigma`` the σ of ``vlm.locate`` (0–1000 units).
    """

    p_miss: float = 0.1
    boundary_px: int = 1
    split_prob: float = 0.1
    depth_scale: tuple[float, float] = (0.85, 1.15)
    depth_noise: float = 0.02
    rot_deg: float = 1.0
    trans_m: float = 0.02
    locate_sigma: float = 15.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "p_miss", check_float("p_miss", self.p_miss, minimum=0.0, maximum=1.0))
        set_(self, "boundary_px", check_int("boundary_px", self.boundary_px, minimum=0, maximum=5))
        set_(self, "split_prob", check_float("split_prob", self.split_prob, minimum=0.0, maximum=1.0))
        scale = self.depth_scale
        if not isinstance(scale, tuple | list) or len(scale) != 2:
            raise TypeError(f"depth_scale must be a pair (lo, hi); got {scale!r}")
        lo = check_float("depth_scale[0]", scale[0], minimum=0.0, strict_min=True)
        hi = check_float("depth_scale[1]", scale[1], minimum=lo)
        set_(self, "depth_scale", (lo, hi))
        set_(self, "depth_noise", check_float("depth_noise", self.depth_noise, minimum=0.0, maximum=0.5))
        set_(self, "rot_deg", check_float("rot_deg", self.rot_deg, minimum=0.0, maximum=45.0))
        set_(self, "trans_m", check_float("trans_m", self.trans_m, minimum=0.0, maximum=5.0))
        set_(
            self, "locate_sigma", check_float("locate_sigma", self.locate_sigma, minimum=0.0, maximum=1000.0)
        )

    @classmethod
    def none(cls) -> PerceptionNoise:
        """No noise at all: exact masks, scale exactly 1, exact depth and poses, exact points."""
        return cls(
            p_miss=0.0,
            boundary_px=0,
            split_prob=0.0,
            depth_scale=(1.0, 1.0),
            depth_noise=0.0,
            rot_deg=0.0,
            trans_m=0.0,
            locate_sigma=0.0,
        )

    def as_dict(self) -> dict[str, object]:
        """The fields as a JSON-able dict (``depth_scale`` as a list)."""
        out: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["depth_scale"] = list(self.depth_scale)
        return out


def keyed_rng(seed: int, *key: object) -> np.random.Generator:
    """A generator determined by ``seed`` and the JSON-able ``key`` only (module docstring): SHA-256 of
    the canonical JSON of ``[seed, *key]``, read as eight 32-bit words of seed entropy."""
    seed = check_seed("seed", seed)
    text = json.dumps([seed, *key], separators=(",", ":"), sort_keys=True)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return np.random.default_rng(np.frombuffer(digest, dtype=np.uint32))
