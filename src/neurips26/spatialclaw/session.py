"""One sample's kernel session: what the kernel is pre-loaded with, rebuilt from a small JSON-able spec.

The paper's kernel starts every sample with the frames, the metadata, the tools and the scientific
libraries already bound (§3.1). Here the harness sends a :class:`SessionSpec` (scene seed and kind, the
perception noise, which tools exist) and the bootstrap cell of :func:`bootstrap_code` rebuilds the same
objects inside the kernel with :func:`build_namespace` — renders come from the cache, so a pooled kernel
resets in milliseconds. The in-process executor calls :func:`build_namespace` directly, which is why the
two executors see identical state. Nothing here imports torch.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field

from neurips26.spatialclaw.scene_types import KINDS, SpatialScene
from neurips26.validation import check_choice, check_seed

#: Modules bound in every kernel (paper §3.1 "pre-imported").
PRE_IMPORTED: tuple[tuple[str, str], ...] = (
    ("np", "numpy"),
    ("math", "math"),
    ("collections", "collections"),
    ("itertools", "itertools"),
    ("functools", "functools"),
    ("matplotlib", "matplotlib"),
    ("plt", "matplotlib.pyplot"),
    ("scipy", "scipy"),
)


@dataclass(frozen=True)
class SessionSpec:
    """What a sample's kernel holds: the scene (``scene_seed``, ``scene_kind``, ``mover``), the perception
    noise (``noise``: keyword arguments of ``PerceptionNoise``; empty = its defaults; ``None`` = no noise),
    the tools' ``tool_seed``, and the ablations ``utilities`` (Geometry, Mask, Time, Draw) and
    ``perception`` (SAM3, Reconstruct)."""

    scene_seed: int
    scene_kind: str = "video"
    mover: bool = False
    noise: dict[str, float] | None = field(default_factory=dict)
    tool_seed: int = 0
    utilities: bool = True
    perception: bool = True

    def __post_init__(self) -> None:
        check_seed("scene_seed", self.scene_seed)
        check_choice("scene_kind", self.scene_kind, KINDS)
        check_seed("tool_seed", self.tool_seed)
        for name in ("mover", "utilities", "perception"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {type(getattr(self, name)).__name__}")
        if self.noise is not None and not isinstance(self.noise, dict):
            raise TypeError(f"noise must be a dict of PerceptionNoise fields or None; got {self.noise!r}")

    def scene(self) -> SpatialScene:
        """The sample's scene (memoised by :func:`~.scenes.make_scene`)."""
        from neurips26.spatialclaw.scenes import make_scene

        return make_scene(self.scene_seed, self.scene_kind, mover=self.mover)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys): the bootstrap cell's only input."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> SessionSpec:
        return cls(**json.loads(text))


def build_namespace(spec: SessionSpec) -> dict[str, object]:
    """The names a sample's kernel starts with: ``InputImages``, ``Metadata``, ``tools``, ``vlm``,
    ``ReturnAnswer``, ``show`` and the pre-imported modules (:data:`PRE_IMPORTED`)."""
    import importlib

    from neurips26.spatialclaw import kernel_types
    from neurips26.spatialclaw.scenes import frames_for
    from neurips26.spatialclaw.tools import build_tools, build_vlm
    from neurips26.spatialclaw.tools.noise import PerceptionNoise

    if not isinstance(spec, SessionSpec):
        raise TypeError(f"spec must be a SessionSpec; got {type(spec).__name__}")
    scene = spec.scene()
    frames = frames_for(scene)
    noise = PerceptionNoise.none() if spec.noise is None else PerceptionNoise(**spec.noise)
    images = kernel_types.InputImages(
        [kernel_types.FrameImage(frames.rgb[f], frame_index=f) for f in range(frames.num_frames)]
    )
    metadata = kernel_types.Metadata(
        is_video=scene.kind == "video",
        fps=scene.fps,
        total_frames=scene.num_frames,
        num_images=scene.num_frames,
        duration_sec=scene.num_frames / scene.fps,
        video_source=f"procedural scene {scene.seed}",
        num_videos=1 if scene.kind == "video" else 0,
        videos=(),
    )
    namespace: dict[str, object] = {name: importlib.import_module(mod) for name, mod in PRE_IMPORTED}
    for sub in ("ndimage", "spatial", "signal", "optimize"):
        importlib.import_module(f"scipy.{sub}")
    namespace.update(
        InputImages=images,
        Metadata=metadata,
        tools=build_tools(
            scene,
            frames,
            noise=noise,
            seed=spec.tool_seed,
            utilities=spec.utilities,
            perception=spec.perception,
        ),
        vlm=build_vlm(scene, frames, noise=noise, seed=spec.tool_seed),
    )
    kernel_types.bind_session(namespace)  # ReturnAnswer, show and the session state behind them
    return namespace


def tool_docs_for(spec: SessionSpec) -> str:
    """The tool documentation the prompts show for ``spec``'s kernel: every bound tool (fewer under the
    ablations) and ``vlm``, one line per method from the docstrings (:func:`~.prompts.tool_documentation`).
    It depends only on which tools are bound, not on the scene."""
    if not isinstance(spec, SessionSpec):
        raise TypeError(f"spec must be a SessionSpec; got {type(spec).__name__}")
    return _tool_docs(spec.utilities, spec.perception)


@functools.lru_cache(maxsize=4)
def _tool_docs(utilities: bool, perception: bool) -> str:
    from neurips26.spatialclaw.prompts import tool_documentation

    namespace = build_namespace(SessionSpec(0, utilities=utilities, perception=perception))
    tools = namespace["tools"]
    bound = {f"tools.{name}": getattr(tools, name) for name in tools.names}  # type: ignore[attr-defined]
    return tool_documentation(bound | {"vlm": namespace["vlm"]})


def bootstrap_code(spec: SessionSpec) -> str:
    """The kernel's first (hidden) cell: rebuild :func:`build_namespace` from ``spec`` inside the kernel."""
    if not isinstance(spec, SessionSpec):
        raise TypeError(f"spec must be a SessionSpec; got {type(spec).__name__}")
    return (
        "from neurips26.spatialclaw.session import SessionSpec as _SessionSpec, build_namespace as _build\n"
        f"globals().update(_build(_SessionSpec.from_json({spec.to_json()!r})))\n"
        "del _SessionSpec, _build\n"
    )
