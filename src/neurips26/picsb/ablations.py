"""PICSB's ablations (chapter 06): named variants of a :class:`PICSBConfig`, each a pure
function of the base config, and the training/reconstruction entry points that honour them.

- ``no-refresh`` — ``R_max = 0`` with the same TOTAL steps: ``S' = S · R_max`` in the single fit
  (plain conditional I2SB on the initial surrogates, eq. L as configured).
- ``no-pde`` — residual weight ``λ_R = 0`` (no PDE loss); everything else as PICSB.
- ``soft-obs`` — the sensors enter only as the loss term ``λ_o ‖M ⊙ x̂₀ − y‖²`` (and the energy's data
  term in a polish): the refresh and the final reconstruction sample the bridge WITHOUT the hard
  conditioning (:func:`neurips26.picsb.bridge.sample` with no mask), and a polish runs Adam on ``E``
  without the projection. ``PICSBConfig`` has no flag for that, so the variant carries ``hard=False``
  and :func:`train_variant` runs PICSB's rounds with a soft refresh (same seeds and steps).
- ``lf-only`` — our reading of "LF-only bridge": the bridge learns only the map from the LF prior to
  the LF prior with the sensors pasted in (the initial surrogates ``x̃₀``), with no PDE loss and no
  refresh: ``R_max = 0`` with the same total steps and ``λ_R = 0`` (the sensor term stays as configured).

A variant changes only the fields it names; :data:`ABLATIONS` maps the names to the functions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.picsb import picsb
from neurips26.picsb.denoiser import Denoiser
from neurips26.picsb.picsb import PICSBConfig, PICSBResult, TrainingSet
from neurips26.validation import check_choice


@dataclass(frozen=True)
class Variant:
    """A named ablation: its ``config`` and whether sampling is ``hard``-conditioned on the sensors."""

    name: str
    config: PICSBConfig
    hard: bool = True


def _base(cfg: object) -> PICSBConfig:
    if not isinstance(cfg, PICSBConfig):
        raise TypeError(f"cfg must be a PICSBConfig; got {type(cfg).__name__}")
    return cfg


def _total_steps(cfg: PICSBConfig) -> int:
    """PICSB's total training steps ``max(R_max, 1) · S`` (``R_max = 0`` fits once)."""
    return max(cfg.rounds, 1) * cfg.steps


def picsb_full(cfg: PICSBConfig) -> Variant:
    """The unablated method, for a uniform comparison loop."""
    return Variant("picsb", _base(cfg))


def no_refresh(cfg: PICSBConfig) -> Variant:
    """``R_max = 0`` and ``S' = S · R_max``: the same total steps, no refresh."""
    cfg = _base(cfg)
    return Variant("no-refresh", dataclasses.replace(cfg, rounds=0, steps=_total_steps(cfg)))


def no_pde(cfg: PICSBConfig) -> Variant:
    """``λ_R = 0``: no residual term in eq. L."""
    return Variant("no-pde", dataclasses.replace(_base(cfg), residual_weight=0.0))


def soft_obs(cfg: PICSBConfig) -> Variant:
    """Same config, sensors only as a loss/energy term: no hard conditioning when sampling."""
    return Variant("soft-obs", _base(cfg), hard=False)


def lf_only(cfg: PICSBConfig) -> Variant:
    """The bridge trained on the initial surrogates only: ``R_max = 0`` (same total steps), ``λ_R = 0``."""
    cfg = _base(cfg)
    return Variant(
        "lf-only", dataclasses.replace(cfg, rounds=0, steps=_total_steps(cfg), residual_weight=0.0)
    )


#: The ablations by name .
ABLATIONS: dict[str, Callable[[PICSBConfig], Variant]] = {
    "no-refresh": no_refresh,
    "no-pde": no_pde,
    "soft-obs": soft_obs,
    "lf-only": lf_only,
}


def ablate(name: str, cfg: PICSBConfig) -> Variant:
    """The ablation ``name`` (a key of :data:`ABLATIONS`) of ``cfg``."""
    return ABLATIONS[check_choice("name", name, tuple(ABLATIONS))](cfg)


def sample_soft(
    model: Denoiser,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    steps: int,
    method: str = "ot-ode",
    generator: torch.Generator | None = None,
    *,
    batch: int | None = None,
) -> Tensor:
    """Like :func:`neurips26.picsb.picsb.reconstruct` but unconditioned at sampling: the network still
    sees ``(x1, M ⊙ y, M)`` as its condition, yet no step overwrites the sensors (no mask to the sampler)."""
    return picsb.reconstruct(model, x1, y, mask, steps, method, generator, batch=batch, hard=False)


def _soft_refresh(model: Denoiser, data: TrainingSet, x0: Tensor, config: PICSBConfig, r: int) -> Tensor:
    """:func:`neurips26.picsb.picsb.refresh` with soft sampling and an unprojected polish on ``E``."""
    return picsb.refresh(model, data, x0, config, r, hard=False)


def train_variant(
    data: TrainingSet,
    variant: Variant,
    *,
    monitor: Callable[[Tensor], float] | None = None,
    progress: bool = False,
) -> PICSBResult:
    """Train ``variant``: :func:`neurips26.picsb.picsb.train_picsb` for hard variants; for soft ones the
    same rounds (seeds, steps, ``λ_R`` rule, logs) with :func:`_soft_refresh` in place of the refresh."""
    if not isinstance(variant, Variant):
        raise TypeError(f"variant must be a Variant; got {type(variant).__name__}")
    config = variant.config
    if variant.hard or config.rounds == 0:
        return picsb.train_picsb(data, config, monitor=monitor, progress=progress)
    return picsb.train_picsb(data, config, monitor=monitor, progress=progress, refresh_with=_soft_refresh)


def reconstruct_variant(
    variant: Variant,
    result: PICSBResult,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    generator: torch.Generator | None = None,
) -> Tensor:
    """The variant's test-time reconstruction with ``config.sample_steps`` and ``config.method``: hard
    (:func:`neurips26.picsb.picsb.reconstruct`) or soft (:func:`sample_soft`)."""
    if not isinstance(variant, Variant):
        raise TypeError(f"variant must be a Variant; got {type(variant).__name__}")
    cfg = variant.config
    if variant.hard:
        with torch.no_grad():
            return picsb.reconstruct(result.model, x1, y, mask, cfg.sample_steps, cfg.method, generator)
    return sample_soft(result.model, x1, y, mask, cfg.sample_steps, cfg.method, generator)
