"""The kernel's tools: seeded perception stand-ins and exact utilities, under the paper's names (§3.1).

:func:`build_tools` makes the ``tools`` namespace a sample's kernel is pre-loaded with —
``tools.SAM3`` (:mod:`.sam3`), ``tools.Reconstruct`` (:mod:`.reconstruct`), ``tools.Geometry``,
``tools.Mask``, ``tools.Time``, ``tools.Draw`` — and :func:`build_vlm` the isolated ``vlm``
(:mod:`.vlm`). The two ablations of the paper's Table on tool families remove names: without utility
wrappers (``utilities=False``) Geometry, Mask, Time and Draw are gone (NumPy/SciPy stay in the kernel);
without perception tools (``perception=False``) SAM3 and Reconstruct are gone. Touching a removed tool
raises ``AttributeError`` saying so. Perception noise is :class:`~.noise.PerceptionNoise`; all randomness
is keyed on the call (:func:`~.noise.keyed_rng`).
"""

from __future__ import annotations

from neurips26.spatialclaw.scene_types import Frames, SpatialScene
from neurips26.spatialclaw.tools.draw import Draw
from neurips26.spatialclaw.tools.geometry import Geometry
from neurips26.spatialclaw.tools.mask import Mask
from neurips26.spatialclaw.tools.noise import PerceptionNoise, keyed_rng
from neurips26.spatialclaw.tools.reconstruct import ReconstructTool
from neurips26.spatialclaw.tools.sam3 import SAM3Tool
from neurips26.spatialclaw.tools.timing import Time
from neurips26.spatialclaw.tools.vlm import VLM
from neurips26.validation import check_seed

PERCEPTION_TOOLS: tuple[str, ...] = ("SAM3", "Reconstruct")
UTILITY_TOOLS: tuple[str, ...] = ("Geometry", "Mask", "Time", "Draw")
TOOL_NAMES: tuple[str, ...] = PERCEPTION_TOOLS + UTILITY_TOOLS


class Tools:
    """The ``tools`` namespace of the kernel: one attribute per available tool."""

    def __init__(self, available: dict[str, object], removed: dict[str, str]) -> None:
        object.__setattr__(self, "_available", dict(available))
        object.__setattr__(self, "_removed", dict(removed))

    def __getattr__(self, name: str) -> object:
        available = object.__getattribute__(self, "_available")
        if name in available:
            return available[name]
        removed = object.__getattribute__(self, "_removed")
        if name in removed:
            raise AttributeError(f"tools.{name} is not available in this configuration ({removed[name]})")
        raise AttributeError(f"tools has no tool {name!r}; available: {sorted(available)}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("tools is read-only")

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_available"))

    @property
    def names(self) -> tuple[str, ...]:
        """The available tool names, in the paper's order."""
        return tuple(n for n in TOOL_NAMES if n in object.__getattribute__(self, "_available"))

    def __repr__(self) -> str:
        return f"tools({', '.join(self.names)})"


def _check(scene: object, frames: object, noise: object, seed: object) -> tuple[PerceptionNoise, int]:
    if not isinstance(scene, SpatialScene):
        raise TypeError(f"scene must be a SpatialScene; got {type(scene).__name__}")
    if not isinstance(frames, Frames):
        raise TypeError(f"frames must be a Frames; got {type(frames).__name__}")
    if frames.num_frames != scene.num_frames or frames.ids.shape[1:] != (scene.height, scene.width):
        raise ValueError(
            "frames must be the renders of scene: "
            f"{scene.num_frames} frames of {scene.height}x{scene.width}; "
            f"got {frames.num_frames} frames of {frames.ids.shape[1]}x{frames.ids.shape[2]}"
        )
    if noise is None:
        noise = PerceptionNoise()
    if not isinstance(noise, PerceptionNoise):
        raise TypeError(f"noise must be a PerceptionNoise or None; got {type(noise).__name__}")
    return noise, check_seed("seed", seed)


def build_tools(
    scene: SpatialScene,
    frames: Frames,
    *,
    noise: PerceptionNoise | None = None,
    seed: int = 0,
    utilities: bool = True,
    perception: bool = True,
) -> Tools:
    """The ``tools`` namespace for ``scene`` and its renders ``frames`` (module docstring). ``noise``
    defaults to ``PerceptionNoise()``; ``seed`` keys every random draw of the perception stand-ins."""
    noise, seed = _check(scene, frames, noise, seed)
    for name, flag in (("utilities", utilities), ("perception", perception)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool; got {type(flag).__name__}")
    available: dict[str, object] = {}
    removed: dict[str, str] = {}
    if perception:
        available["SAM3"] = SAM3Tool(scene, frames, noise, seed)
        available["Reconstruct"] = ReconstructTool(scene, frames, noise, seed)
    else:
        for name in PERCEPTION_TOOLS:
            removed[name] = "the 'no perception tools' ablation: work on InputImages with NumPy/SciPy"
    if utilities:
        available["Geometry"] = Geometry()
        available["Mask"] = Mask()
        available["Time"] = Time(scene.fps, scene.num_frames)
        available["Draw"] = Draw()
    else:
        for name in UTILITY_TOOLS:
            removed[name] = "the 'no utility wrappers' ablation: write it with NumPy/SciPy"
    return Tools(available, removed)


def build_vlm(
    scene: SpatialScene, frames: Frames, *, noise: PerceptionNoise | None = None, seed: int = 0
) -> VLM:
    """The isolated ``vlm`` for ``scene`` and its renders (``locate`` noise from ``noise``, keyed by
    ``seed``)."""
    noise, seed = _check(scene, frames, noise, seed)
    return VLM(scene, frames, noise, seed)


__all__ = [
    "PERCEPTION_TOOLS",
    "TOOL_NAMES",
    "UTILITY_TOOLS",
    "VLM",
    "Draw",
    "Geometry",
    "Mask",
    "PerceptionNoise",
    "ReconstructTool",
    "SAM3Tool",
    "Time",
    "Tools",
    "build_tools",
    "build_vlm",
    "keyed_rng",
]
