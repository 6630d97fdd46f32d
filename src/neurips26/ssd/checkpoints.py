"""The chapter's checkpoint files: float16 weights of an EDM denoiser plus a JSON sidecar (chapter 05).

A checkpoint ``NAME`` is two files in one directory::

    NAME.pt     the denoiser's state dict in float16 (``torch.save``; read back with ``weights_only=True``)
    NAME.json   a :class:`CheckpointMeta`: the denoiser and training configuration, its hash, a fingerprint
                of the network's source code, the validation metric(s) and the logged curves

float16 halves the files (a 106k-parameter U-Net is ~213 KB) and changes the denoiser's outputs by about
``1e-3`` relative; the validation loss in the sidecar is measured on the float16 weights, so a loaded
checkpoint reproduces it up to floating-point reordering (the test of the committed checkpoints).

A checkpoint is *stale* when the configuration that would train it now hashes differently from the one in
its sidecar, or when the network's source (:data:`SOURCE_FILES`) changed: the weights may then no longer
mean what the code expects. :func:`check_fresh` raises :class:`StaleCheckpointError` saying which.
Which names exist, and how each is trained, is the table of :mod:`neurips26.ssd.prepare`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import torch

from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.ssd``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = (
    ("neurips26.ssd", "denoiser.py"),
    ("neurips26.nn", "conv.py"),
    ("neurips26.nn", "embeddings.py"),
)
"""The modules whose code decides what a stored state dict computes (the U-Net, its time embedding, EDM)."""

FORMAT = 1


class CheckpointError(RuntimeError):
    """A checkpoint cannot be used."""


class MissingCheckpointError(CheckpointError, FileNotFoundError):
    """The weights or the sidecar of a checkpoint do not exist."""


class StaleCheckpointError(CheckpointError):
    """A checkpoint was written by another configuration or by other network code."""


@dataclass(frozen=True)
class CheckpointMeta:
    """The sidecar of a checkpoint (``NAME.json``).

    name: the checkpoint's name; config_hash: :func:`config_hash` of everything that trained it;
    source: :func:`source_fingerprint` when it was written; denoiser: the :class:`DenoiserConfig` fields;
    spec: the training description (JSON-able, for readers); metrics: validation numbers measured on the
    float16 weights (``val_loss`` is the one :mod:`tests` re-measure); curves: logged values, e.g.
    ``eval_step`` and ``proxy_fid`` every 250 updates, ``loss_step`` and a smoothed ``loss``;
    weights_hash: SHA-256 prefix of the float16 tensors; version, torch: library and torch versions;
    train_seconds: wall time of the training run.
    """

    name: str
    config_hash: str
    source: str
    denoiser: dict[str, Any]
    spec: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT

    def __post_init__(self) -> None:
        # keep the JSON form (lists, not tuples), so a sidecar read back equals the one written
        for name in ("denoiser", "spec", "metrics", "curves"):
            object.__setattr__(self, name, json.loads(json.dumps(getattr(self, name))))

    def denoiser_config(self) -> DenoiserConfig:
        """The :class:`DenoiserConfig` to build the network these weights belong to."""
        fields = dict(self.denoiser)
        fields["channels"] = tuple(fields["channels"])
        return DenoiserConfig(**fields)

    def to_json(self) -> str:
        """The sidecar's text (sorted keys, two-space indent)."""
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> CheckpointMeta:
        """Parse a sidecar; ``CheckpointError`` when fields are missing or unknown."""
        data = json.loads(text)
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or not {"name", "config_hash", "source", "denoiser"} <= data.keys():
            raise CheckpointError("the sidecar lacks name, config_hash, source or denoiser")
        unknown = set(data) - names
        if unknown:
            raise CheckpointError(f"the sidecar has unknown fields {sorted(unknown)}")
        return cls(**data)


def _canonical(value: Any) -> Any:
    """A JSON-able form of a configuration: dataclasses (with their class name), dicts, sequences, scalars."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"__class__": type(value).__qualname__, **out}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"config must hold dataclasses, dicts, sequences and scalars; got {type(value).__name__}")


def config_hash(config: Any) -> str:
    """SHA-256 prefix (16 hex digits) of the canonical JSON of ``config`` (dataclasses, dicts, scalars)."""
    text = json.dumps(_canonical(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def source_fingerprint() -> str:
    """SHA-256 prefix of the network's source files (:data:`SOURCE_FILES`), line endings normalised."""
    digest = hashlib.sha256()
    for package, filename in SOURCE_FILES:
        digest.update(f"{package}/{filename}\n".encode())
        digest.update(resources.files(package).joinpath(filename).read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]


def half_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A CPU copy of ``model.state_dict()`` with floating-point tensors in float16."""
    out = {}
    for key, value in model.state_dict().items():
        value = value.detach().to("cpu", copy=True)
        out[key] = value.half() if value.is_floating_point() else value
    return out


def weights_hash(state: dict[str, torch.Tensor]) -> str:
    """SHA-256 prefix of a state dict's names, dtypes, shapes and bytes (identifies trained weights)."""
    digest = hashlib.sha256()
    for key in sorted(state):
        tensor = state[key].detach().cpu().contiguous()
        digest.update(f"{key}:{tensor.dtype}:{tuple(tensor.shape)}".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()[:16]


def build_denoiser(meta: CheckpointMeta, state: dict[str, torch.Tensor]) -> EDMDenoiser:
    """The denoiser of ``meta`` with ``state`` loaded strictly (float32 weights), in eval mode."""
    model = EDMDenoiser(meta.denoiser_config(), seed=0)
    reference = model.state_dict()
    model.load_state_dict(
        {k: v.to(reference[k].dtype) if k in reference else v for k, v in state.items()}, strict=True
    )
    return model.eval()


def _paths(directory: Path | str, name: str) -> tuple[Path, Path]:
    if not isinstance(name, str) or not name or any(c in name for c in "/\\"):
        raise ValueError(f"name must be a non-empty str without path separators; got {name!r}")
    directory = Path(directory)
    return directory / f"{name}.pt", directory / f"{name}.json"


def save_checkpoint(directory: Path | str, state: dict[str, torch.Tensor], meta: CheckpointMeta) -> Path:
    """Write ``meta.name``.pt (the float16 ``state``) and ``meta.name``.json into ``directory``.

    ``state`` must already be float16 (see :func:`half_state`) and match ``meta.weights_hash``; the
    files are written to temporary names and renamed, so a reader never sees half a checkpoint.
    Returns the path of the weights.
    """
    if not isinstance(meta, CheckpointMeta):
        raise TypeError(f"meta must be a CheckpointMeta; got {type(meta).__name__}")
    if any(v.is_floating_point() and v.dtype != torch.float16 for v in state.values()):
        raise ValueError("state must hold float16 tensors (use half_state)")
    if meta.weights_hash != weights_hash(state):
        raise ValueError("meta.weights_hash does not match state")
    weights, sidecar = _paths(directory, meta.name)
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp_weights, tmp_sidecar = weights.with_suffix(".pt.tmp"), sidecar.with_suffix(".json.tmp")
    torch.save(dict(state), tmp_weights)
    tmp_sidecar.write_text(meta.to_json())
    tmp_weights.replace(weights)
    tmp_sidecar.replace(sidecar)
    return weights


def read_checkpoint(directory: Path | str, name: str) -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
    """The float16 state dict and the sidecar of checkpoint ``name`` in ``directory``.

    Raises :class:`MissingCheckpointError` when a file is absent and :class:`CheckpointError` when the
    sidecar is unreadable or the weights do not match its ``weights_hash`` (a truncated or edited file).
    """
    weights, sidecar = _paths(directory, name)
    for path in (weights, sidecar):
        if not path.is_file():
            raise MissingCheckpointError(f"checkpoint {name!r}: {path} does not exist")
    try:
        meta = CheckpointMeta.from_json(sidecar.read_text())
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"checkpoint {name!r}: cannot read {sidecar}: {error}") from error
    if meta.name != name:
        raise CheckpointError(f"checkpoint {name!r}: its sidecar names {meta.name!r}")
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any failure to unpickle means an unusable file
        raise CheckpointError(f"checkpoint {name!r}: cannot read {weights}: {error}") from error
    if not isinstance(state, dict) or weights_hash(state) != meta.weights_hash:
        raise CheckpointError(f"checkpoint {name!r}: {weights} does not match the hash in its sidecar")
    return state, meta


def check_fresh(meta: CheckpointMeta, expected_hash: str) -> None:
    """Raise :class:`StaleCheckpointError` unless ``meta`` matches today's configuration and network code."""
    if meta.format != FORMAT:
        raise StaleCheckpointError(
            f"checkpoint {meta.name!r} has format {meta.format}; this code reads {FORMAT}"
        )
    if meta.config_hash != expected_hash:
        raise StaleCheckpointError(
            f"checkpoint {meta.name!r} was trained with another configuration "
            f"(hash {meta.config_hash}, now {expected_hash})"
        )
    now = source_fingerprint()
    if meta.source != now:
        raise StaleCheckpointError(
            f"checkpoint {meta.name!r} was trained with other network code "
            f"(source {meta.source}, now {now}: {', '.join(f for _, f in SOURCE_FILES)} changed)"
        )
