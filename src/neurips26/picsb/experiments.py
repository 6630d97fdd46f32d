"""The chapter's measurements, side by side on one test split (chapter 06, claims P1–P8).

- :func:`reconstruction_table` — every method on the same test cases: the LF prior, LF with the sensors
  pasted, field TTO at several budgets (one run, snapshots), strong-constraint 4D-Var, PICSB, its four
  ablations, the HF-trained oracle bridge and DPS. Per case: rel-L2 (scoring only), ``‖R‖``, the sensor
  mismatch ``max |M ⊙ x − y|`` and the energy ``E``; per method: the declared cost per case
  (:mod:`neurips26.picsb.cost_model`) and one run's wall time per case.
- :attr:`ReconstructionTable.curve` — field TTO's rows against its iteration count (one run), and
  :func:`k_star`, the fewest iterations that match a target error.
- :func:`wall_clock` — PICSB, DPS, TTO and 4D-Var timed side by side
  (:func:`neurips26.timing.time_interleaved`, one thread, medians of paired ratios).
- :func:`diversity` — several stochastic bridge samples per case: the per-point spread against the error.

The per-instance baselines (TTO, 4D-Var, DPS) take tens of seconds at default scale: their fields are kept
in the results cache (:func:`neurips26.cache.cached`), keyed by the scale, the settings and the source.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from neurips26.cache import cached
from neurips26.picsb import cost_model, prepare
from neurips26.picsb.baselines import dps
from neurips26.picsb.baselines.field_tto import field_tto
from neurips26.picsb.baselines.fourdvar import fourdvar
from neurips26.picsb.baselines.lf_paste import lf_paste
from neurips26.picsb.burgers import relative_l2
from neurips26.picsb.cost_model import Cost
from neurips26.picsb.data import Split
from neurips26.picsb.energy import energy
from neurips26.picsb.metrics import residual_norm, sensor_mismatch, timed
from neurips26.picsb.picsb import reconstruct
from neurips26.scales import check_scale, pick
from neurips26.timing import Timing, time_interleaved
from neurips26.validation import check_int

#: The methods of the table: key → (label, family, needs HF training fields); field TTO's rows are
#: ``"tto-K"`` for each budget ``K`` (:func:`describe`).
METHODS: dict[str, tuple[str, str, bool]] = {
    "lf": ("LF prior x₁", "input", False),
    "lf-paste": ("LF + sensors pasted", "input", False),
    "4dvar": ("4D-Var (from LF)", "per-instance", False),
    "dps": ("DPS", "guided diffusion", True),
    "oracle": ("HF-trained bridge (oracle)", "amortised", True),
    "picsb": ("PICSB", "amortised", False),
    "no-refresh": ("PICSB − refresh", "ablation", False),
    "no-pde": ("PICSB − PDE loss", "ablation", False),
    "soft-obs": ("PICSB − hard conditioning", "ablation", False),
    "lf-only": ("LF-only bridge", "ablation", False),
}
#: The ablations of claim P6.
ABLATION_KEYS = ("no-refresh", "no-pde", "soft-obs", "lf-only")
#: How many cases each row keeps whole, for the figures.
EXAMPLES = 4


def describe(key: str) -> tuple[str, str, bool]:
    """``(label, family, needs HF training fields)`` of method ``key`` (:data:`METHODS` or ``"tto-K"``)."""
    if key.startswith("tto-") and key[4:].isdigit():
        return (f"field TTO, K = {int(key[4:])}", "per-instance", False)
    return METHODS[key]


#: DPS's sampler [chosen on the validation cases: ζ_obs ∈ {0.3, 1, 3, 10}, ζ_pde ∈ {0, 0.003 … 1}; residual
#: guidance at every step diverged at every weight tried, so it acts only where ᾱ ≥ 0.5].
DPS_DEFAULT = dps.DPSConfig(steps=100, zeta_obs=3.0, zeta_pde=0.1, pde_alpha_bar=0.5)


@dataclass(frozen=True)
class ExperimentConfig:
    """Sizes of the measurements at one scale: TTO's budgets and its curve's snapshots, 4D-Var's
    iterations, DPS's sampler, the timing (cases, rounds) and the diversity run (cases, samples)."""

    tto_budgets: tuple[int, ...] = (100, 300, 1000)
    tto_curve: tuple[int, ...] = (10, 20, 50, 100, 200, 300, 500, 700, 1000)
    fourdvar_iterations: int = 100
    dps: dps.DPSConfig = field(default_factory=lambda: DPS_DEFAULT)
    dps_seed: int = 0
    timing_cases: int = 8
    timing_rounds: int = 3
    diversity_cases: int = 16
    diversity_samples: int = 8

    @classmethod
    def for_scale(cls, scale: str) -> ExperimentConfig:
        """smoke: tiny budgets (the code runs, the numbers mean nothing); default: the fields' defaults."""
        check_scale(scale)
        smoke = cls(
            tto_budgets=(10, 20, 50),
            tto_curve=(10, 20, 50),
            fourdvar_iterations=10,
            dps=dps.DPSConfig(steps=5, zeta_obs=3.0, zeta_pde=0.1, pde_alpha_bar=0.5),
            timing_cases=2,
            timing_rounds=1,
            diversity_cases=4,
            diversity_samples=2,
        )
        return pick(scale, smoke=smoke, default=cls())


@dataclass(frozen=True)
class MethodRow:
    """One method on the test split: per-case ``rel_l2``, ``residual`` ``‖R‖``, ``mismatch`` and
    ``energy`` (numpy arrays), the declared ``cost`` per case, the wall ``seconds`` per case of the run
    that made the fields, and the first :data:`EXAMPLES` fields ``examples`` for the figures."""

    key: str
    rel_l2: np.ndarray
    residual: np.ndarray
    mismatch: np.ndarray
    energy: np.ndarray
    cost: Cost
    seconds: float
    examples: Tensor

    @property
    def label(self) -> str:
        return describe(self.key)[0]

    @property
    def family(self) -> str:
        return describe(self.key)[1]

    @property
    def needs_hf(self) -> bool:
        return describe(self.key)[2]

    def mean(self, metric: str) -> float:
        """The mean of ``metric`` (``"rel_l2"``, ``"residual"``, ``"mismatch"``, ``"energy"``) over cases."""
        return float(np.mean(getattr(self, metric)))


def score(key: str, fields: Tensor, data: Split, cost: Cost, seconds: float, scale: str) -> MethodRow:
    """The :class:`MethodRow` of ``fields`` (``(N, T, X)``, one per case of ``data``)."""
    config = prepare.PrepareConfig.for_scale(scale)
    burgers, energy_config = config.data.burgers, config.picsb.energy
    fields = fields.detach().to(data.truth)
    with torch.no_grad():
        e = energy(fields, data.x1, data.y, data.mask, energy_config, burgers)
        return MethodRow(
            key=key,
            rel_l2=relative_l2(fields, data.truth).numpy(),
            residual=residual_norm(fields, burgers).numpy(),
            mismatch=sensor_mismatch(fields, data.y, data.mask).numpy(),
            energy=e.numpy(),
            cost=cost,
            seconds=seconds,
            examples=fields[:EXAMPLES].clone(),
        )


# --------------------------------------------------------------------------------------------
# costs


def bridge_cost(scale: str) -> Cost:
    """A bridge reconstruction: ``N_s`` denoiser forwards per case."""
    config = prepare.PrepareConfig.for_scale(scale)
    steps = config.picsb.sample_steps
    return steps * Cost(1, cost_model.denoiser_flops(config.picsb.denoiser, config.data.burgers.grid))


def tto_cost(iterations: int, scale: str) -> Cost:
    """``K`` energy gradients (forward + backward) per case."""
    config = prepare.PrepareConfig.for_scale(scale)
    one = Cost(1, cost_model.energy_flops(config.data.burgers, config.picsb.energy))
    return iterations * one.with_backward()


def fourdvar_cost(iterations: int, scale: str) -> Cost:
    """``K`` HF solves with their backward (and one more forward) per case."""
    burgers = prepare.PrepareConfig.for_scale(scale).data.burgers
    one = Cost(1, cost_model.solve_flops(burgers))
    return iterations * one.with_backward() + one


def dps_cost(config: dps.DPSConfig, scale: str) -> Cost:
    """``S`` prior forwards, each with its backward when guided (plus the residual in the guidance)."""
    prior = prepare.PrepareConfig.for_scale(scale).prior
    grid = prior.burgers.grid
    one = Cost(1, sum(cost_model.unet_flops(prior.unet_config(), grid).values()))
    if config.zeta_obs > 0:
        one = (one + Cost(0, cost_model.residual_flops(prior.burgers))).with_backward()
    return config.steps * one


# --------------------------------------------------------------------------------------------
# the per-instance baselines (cached)


def _per_instance(data: Split, config: ExperimentConfig, prior: dps.Prior) -> dict[str, tuple[Tensor, float]]:
    """The fields and wall seconds (whole batch) of TTO (one run, snapshots), 4D-Var and DPS."""
    budgets = tuple(sorted(set(config.tto_budgets) | set(config.tto_curve)))
    out: dict[str, tuple[Tensor, float]] = {}
    tto, run = timed(lambda: field_tto(data.x1, data.y, data.mask, iterations=budgets[-1], snapshots=budgets))
    for k, fields in tto.snapshots.items():
        out[f"tto-{k}"] = (fields, run.seconds * k / budgets[-1])
    var, run = timed(lambda: fourdvar(data.x1, data.y, data.mask, iterations=config.fourdvar_iterations))
    out["4dvar"] = (var.field, run.seconds)
    generator = torch.Generator().manual_seed(config.dps_seed)
    guided, run = timed(lambda: dps.dps_sample(prior, data.y, data.mask, config.dps, generator=generator))
    out["dps"] = (guided.field, run.seconds)
    return out


def per_instance_fields(scale: str, data: Split, prior: dps.Prior) -> dict[str, tuple[Tensor, float]]:
    """:func:`_per_instance` through the results cache (keyed by scale and settings; ``data`` and
    ``prior`` are the scale's test split and checkpoint)."""
    config = ExperimentConfig.for_scale(scale)
    key = {"scale": scale, "experiments": config, "data": prepare.PrepareConfig.for_scale(scale)}
    return cached(
        f"picsb-per-instance-{scale}",
        key,
        lambda: _per_instance(data, config, prior),
        package="neurips26.picsb",
    )


# --------------------------------------------------------------------------------------------
# the table


@dataclass(frozen=True)
class ReconstructionTable:
    """Every method's :class:`MethodRow` on the test split (``rows``, in :data:`METHODS` order), the TTO
    curve's rows (``curve``: iterations → row), the test split itself and the models used."""

    rows: dict[str, MethodRow]
    curve: dict[int, MethodRow]
    data: Split
    models: dict[str, torch.nn.Module]
    scale: str

    def __getitem__(self, key: str) -> MethodRow:
        """The row of ``key``; a ``"tto-K"`` budget outside the table's rows is read from :attr:`curve`."""
        if (
            key not in self.rows
            and key.startswith("tto-")
            and key[4:].isdigit()
            and int(key[4:]) in self.curve
        ):
            return self.curve[int(key[4:])]
        return self.rows[key]

    def table_rows(self, keys: tuple[str, ...] | None = None) -> list[list[str]]:
        """Rows for :func:`neurips26.tables.markdown_table` with :data:`TABLE_HEADER`."""
        out = []
        for key in keys or tuple(self.rows):
            r = self.rows[key]
            out.append(
                [
                    r.label,
                    f"{r.mean('rel_l2'):.3f}",
                    f"{r.mean('residual'):.3f}",
                    f"{float(np.max(r.mismatch)):.1e}",
                    f"{r.cost.forwards:.0f}",
                    f"{r.cost.flops / 1e6:.1f}",
                    f"{r.seconds * 1e3:.1f}",
                    "yes" if r.needs_hf else "no",
                ]
            )
        return out


#: The header of :meth:`ReconstructionTable.table_rows`.
TABLE_HEADER = [
    "method",
    "rel-L2",
    "‖R‖",
    "max |M⊙x − y|",
    "passes / case",
    "MFLOPs / case",
    "ms / case",
    "HF fields in training",
]


def reconstruction_table(scale: str = "default", *, verbose: bool = True) -> ReconstructionTable:
    """Every method of :data:`METHODS` on the test split of ``scale`` (module docstring)."""
    check_scale(scale)
    data = prepare.split("test", scale)
    models = {name: prepare.pretrained(name, scale, verbose=verbose)[0] for name in prepare.MODEL_NAMES}
    config = ExperimentConfig.for_scale(scale)
    picsb_config = prepare.PrepareConfig.for_scale(scale).picsb
    n = len(data)
    rows: dict[str, MethodRow] = {}
    rows["lf"] = score("lf", data.x1, data, Cost(), 0.0, scale)
    pasted, run = timed(lambda: lf_paste(data.x1, data.y, data.mask), cases=n)
    rows["lf-paste"] = score("lf-paste", pasted, data, Cost(), run.per_case, scale)
    baselines = per_instance_fields(scale, data, models[prepare.PRIOR])
    curve = {}
    for k in sorted(set(config.tto_budgets) | set(config.tto_curve)):
        fields, seconds = baselines[f"tto-{k}"]
        curve[k] = score(f"tto-{k}", fields, data, tto_cost(k, scale), seconds / n, scale)
    for k in config.tto_budgets:
        rows[f"tto-{k}"] = curve[k]
    fields, seconds = baselines["4dvar"]
    rows["4dvar"] = score(
        "4dvar", fields, data, fourdvar_cost(config.fourdvar_iterations, scale), seconds / n, scale
    )
    fields, seconds = baselines["dps"]
    rows["dps"] = score("dps", fields, data, dps_cost(config.dps, scale), seconds / n, scale)
    for name in ("oracle", "picsb", *ABLATION_KEYS):
        fields, run = timed(
            lambda name=name: prepare.bridge_fields(name, models[name], data, picsb_config), cases=n
        )
        rows[name] = score(name, fields, data, bridge_cost(scale), run.per_case, scale)
    return ReconstructionTable(rows=rows, curve=curve, data=data, models=models, scale=scale)


# --------------------------------------------------------------------------------------------
# accuracy against cost


def k_star(curve: dict[int, MethodRow], target: float) -> int | None:
    """The fewest TTO iterations of ``curve`` whose mean rel-L2 is at most ``target``; None when no
    budget of the curve reaches it."""
    for k in sorted(curve):
        if curve[k].mean("rel_l2") <= target:
            return k
    return None


def wall_clock(table: ReconstructionTable, *, k: int | None = None) -> Timing:
    """PICSB, DPS, field TTO (``k`` iterations, default the largest budget) and 4D-Var on the first
    ``timing_cases`` test cases, timed side by side (one thread, interleaved rounds, PICSB the reference)."""
    scale = table.scale
    config = ExperimentConfig.for_scale(scale)
    picsb_config = prepare.PrepareConfig.for_scale(scale).picsb
    data = table.data.head(min(config.timing_cases, len(table.data)))
    k = max(config.tto_budgets) if k is None else check_int("k", k, minimum=1)
    model, prior = table.models["picsb"], table.models[prepare.PRIOR]

    def run_picsb() -> Tensor:
        return prepare.bridge_fields("picsb", model, data, picsb_config)

    def run_dps() -> Tensor:
        generator = torch.Generator().manual_seed(config.dps_seed)
        return dps.dps_sample(prior, data.y, data.mask, config.dps, generator=generator).field

    callables: dict[str, Callable[[], object]] = {
        "PICSB": run_picsb,
        "DPS": run_dps,
        f"TTO K={k}": lambda: field_tto(data.x1, data.y, data.mask, iterations=k).field,
        f"4D-Var K={config.fourdvar_iterations}": lambda: (
            fourdvar(data.x1, data.y, data.mask, iterations=config.fourdvar_iterations).field
        ),
    }
    return time_interleaved(callables, rounds=config.timing_rounds, warmup=1, threads=1, reference="PICSB")


# --------------------------------------------------------------------------------------------
# sample diversity


@dataclass(frozen=True)
class Diversity:
    """``samples`` stochastic bridge reconstructions of ``cases`` test cases: the per-point ``std`` and
    absolute ``error`` of their mean ``(cases, T, X)``, and the per-case Spearman correlation of the two
    over the unobserved points (``correlation``)."""

    mean: Tensor
    std: Tensor
    error: Tensor
    correlation: np.ndarray


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    c = np.corrcoef(ra, rb)[0, 1]
    return float(c) if math.isfinite(c) else 0.0


def diversity(model: torch.nn.Module, data: Split, scale: str = "default", *, seed: int = 0) -> Diversity:
    """``diversity_samples`` stochastic hard-conditioned samples of the bridge ``model`` for the first
    ``diversity_cases`` cases of ``data`` (seeded; ``N_s`` of the scale's PICSB config)."""
    config = ExperimentConfig.for_scale(scale)
    picsb_config = prepare.PrepareConfig.for_scale(scale).picsb
    data = data.head(min(config.diversity_cases, len(data)))
    generator = torch.Generator().manual_seed(seed)
    draws = []
    with torch.no_grad():
        for _ in range(config.diversity_samples):
            draws.append(
                reconstruct(
                    model, data.x1, data.y, data.mask, picsb_config.sample_steps, "stochastic", generator
                )
            )
    stack = torch.stack(draws)
    mean, std = stack.mean(0), stack.std(0)
    error = (mean - data.truth).abs()
    free = ~data.mask
    corr = np.array([_spearman(std[i][free[i]].numpy(), error[i][free[i]].numpy()) for i in range(len(data))])
    return Diversity(mean=mean, std=std, error=error, correlation=corr)
