"""The chapter's cases: seeded Burgers runs split into training, validation and test (chapter 06, "Data").

A case is an initial state ``u_0 = Σ_{k<=3} a_k sin(k x + φ_k)``, its HF field ``u`` (64 × 32, the truth),
its LF prior ``x_1`` and its sensors ``(y, M)``. :class:`Split` keeps all four, but PICSB only ever sees
:meth:`Split.training_set` (LF + sensors); the truth is for scoring and for the HF-trained baselines
(the oracle bridge, DPS's prior), which are the point of comparison because they need it.

Seeds: split ``s`` (``train``, ``validation``, ``test``) draws its initial states from ``seed · 10 + i_s``
(``i_s`` = 0, 1, 2) and its sensor noise from the same seed; the probe columns are fixed for the whole
data set (one seeded draw from ``seed``: the sensors are installed once). The fields are made in float64
and stored in float32, the networks' dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from neurips26.picsb.burgers import BurgersConfig, initial_conditions, low_fidelity, solve
from neurips26.picsb.observations import ObservationConfig, make_masks, observe
from neurips26.picsb.picsb import TrainingSet
from neurips26.validation import check_choice, check_int, check_seed

#: The split names, in seed order.
SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class DataConfig:
    """How many cases per split, the seed, the PDE and the sensors (defaults: the chapter's default scale:
    512 / 32 / 64 cases, four probe columns, noiseless)."""

    train: int = 512
    validation: int = 32
    test: int = 64
    seed: int = 0
    burgers: BurgersConfig = field(default_factory=BurgersConfig)
    observations: ObservationConfig = field(default_factory=ObservationConfig)

    def __post_init__(self) -> None:
        for name in SPLITS:
            check_int(name, getattr(self, name), minimum=1)
        check_seed("seed", self.seed)
        if not isinstance(self.burgers, BurgersConfig):
            raise TypeError(f"burgers must be a BurgersConfig; got {type(self.burgers).__name__}")
        if not isinstance(self.observations, ObservationConfig):
            kind = type(self.observations).__name__
            raise TypeError(f"observations must be an ObservationConfig; got {kind}")


@dataclass(frozen=True)
class Split:
    """``n`` cases, ``(n, T, X)`` float32 each: the HF ``truth``, the LF prior ``x1``, the observations ``y``
    (zero off the sensors) and the bool sensor ``mask``."""

    truth: Tensor
    x1: Tensor
    y: Tensor
    mask: Tensor

    def __len__(self) -> int:
        return self.truth.shape[0]

    def training_set(self) -> TrainingSet:
        """What PICSB may train on: LF priors and sensors, no HF field."""
        return TrainingSet(self.x1, self.y, self.mask)

    def head(self, n: int) -> Split:
        """The first ``n`` cases (a split is already in random order)."""
        n = check_int("n", n, minimum=1, maximum=len(self))
        return Split(self.truth[:n], self.x1[:n], self.y[:n], self.mask[:n])

    def to(self, device: torch.device | str) -> Split:
        """The split on ``device``."""
        return Split(*(t.to(device) for t in (self.truth, self.x1, self.y, self.mask)))


def split_seed(name: str, config: DataConfig) -> int:
    """The seed of split ``name``: ``config.seed · 10 + index``."""
    return config.seed * 10 + SPLITS.index(check_choice("name", name, SPLITS))


def make_split(name: str, config: DataConfig | None = None) -> Split:
    """The cases of split ``name`` (``"train"``, ``"validation"`` or ``"test"``) under ``config``."""
    config = DataConfig() if config is None else config
    if not isinstance(config, DataConfig):
        raise TypeError(f"config must be a DataConfig; got {type(config).__name__}")
    seed = split_seed(name, config)
    n = getattr(config, name)
    u0 = initial_conditions(n, seed, config.burgers)
    truth = solve(u0, config.burgers)
    x1 = low_fidelity(u0, config.burgers)
    frames, grid = config.burgers.shape
    mask = make_masks(n, frames, grid, config.observations, config.seed if _fixed(config) else seed)
    y = observe(truth, mask, config.observations.sigma_o, seed)
    return Split(truth.float(), x1.float(), y.float(), mask)


def _fixed(config: DataConfig) -> bool:
    """Probe columns are installed once for the data set; random masks are drawn per split."""
    return config.observations.kind == "probes"


__all__ = ["SPLITS", "DataConfig", "Split", "make_split", "split_seed"]
