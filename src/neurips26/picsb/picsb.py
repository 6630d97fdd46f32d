"""PICSB training: a conditional I2SB trained on surrogate HF endpoints that it refreshes itself.

Chapter 06, its method notebook. No HF field enters training: the data are LF priors ``x₁``, sensor
values ``y`` and masks ``M`` (:class:`TrainingSet`). The bridge needs an HF end ``x₀``, so it is trained
against *surrogates* ``x̃₀`` that start as the LF prior with the sensor corrections spread around each
sensor (:func:`initial_surrogates`) and are replaced, round by round, by the bridge's own
hard-conditioned samples (an EM-like fixed point).

One round ``r = 1..R_max``:

1. ``S`` AdamW steps (one :func:`neurips26.train.fit` call) on

       L = L_SB + λ_R (1 − t)² ‖R(x̂₀)‖² + λ_o ‖M ⊙ x̂₀ − y‖²                         (eq. L)

   with ``L_SB`` the regression of I2SB's target ``(x_t − x̃₀)/σ_t`` for ``x_t ~ q(x_t | x̃₀, x₁)``,
   ``x̂₀ = x_t − σ_t · net(x_t, t, cond)`` and ``R`` the Burgers scheme's one-step defect. Every term
   is a mean over the batch and the field's elements (the ``(1 − t)²`` weight per case).
2. Refresh: ``x̂`` by hard-conditioned sampling (:func:`reconstruct`, ``N_s`` steps, OT-ODE by default),
   optionally ``K₁`` Adam steps of projected descent on the energy ``E`` of
   :mod:`neurips26.picsb.energy`, then ``x̃₀ ← (1 − κ) x̃₀ + κ x̂``.

``R_max = 0`` is plain conditional I2SB: one fit of ``S`` steps against the initial surrogates, no refresh
(on eq. L as configured; with ``residual_weight = obs_weight = 0`` it is exactly I2SB's regression).

``λ_R`` [our choice of rule]: unless given, it is set once, before the first step, from the untrained
network on a calibration batch (drawn from ``seed`` and the initial surrogates):
``λ_R = 0.1 · L_SB / mean((1 − t)² ‖R(x̂₀)‖²)``, so the weighted residual term starts at a tenth of the
bridge loss; it then stays fixed for every round.

Randomness: round ``r`` (1-based; the single fit of ``R_max = 0`` counts as round 1) draws its batch
indices and bridge noise from a ``torch.Generator`` seeded ``seed + r`` (each step: ``randint(N, (B,))``,
then :func:`neurips26.picsb.bridge.training_pair`), its refresh sampler from one seeded
``seed + 1000 + r``; the network starts from ``seed`` and the ``λ_R`` calibration batch uses ``seed``.
So a run is reproducible and never reads torch's global RNG.

Devices and processes: everything runs on ``data.x1``'s device. Under ``torchrun`` each :func:`fit` call
trains data-parallel (:mod:`neurips26.distributed`): every rank draws the same global batch indices from
the round's generator and keeps its share, while the bridge noise of its rows comes from a generator of its
own (:func:`loss_generator`); the λ_R calibration, the initial surrogates and every refresh are computed
on each rank, over all training cases, and rank 0's are broadcast, so all ranks train against the same ends.
A single process draws exactly the streams above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from neurips26 import distributed
from neurips26.picsb import bridge
from neurips26.picsb.burgers import BurgersConfig, relative_l2, residual
from neurips26.picsb.denoiser import Condition, Denoiser, DenoiserConfig
from neurips26.picsb.energy import EnergyConfig, energy, project
from neurips26.train import History, fit
from neurips26.validation import check_choice, check_float, check_int, check_seed

#: Width (grid cells) of the Gaussian that spreads the initial sensor corrections [our choice].
SPREAD_WIDTH = 3.0
#: Offset between the training and the refresh generators' seeds of a round.
REFRESH_SEED_OFFSET = 1000
#: Offset of the per-rank loss-noise seeds under torchrun (:func:`loss_generator`).
NOISE_SEED_OFFSET = 2000
#: Cases per batched solve of :func:`initial_surrogates` (bounds its ``(n, T, X, X)`` float64 systems).
SURROGATE_CHUNK = 1024


def _field(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor) or not value.is_floating_point():
        what = f"dtype {value.dtype}" if isinstance(value, Tensor) else type(value).__name__
        raise TypeError(f"{name} must be a floating torch.Tensor of shape (N, T, X); got {what}")
    if value.ndim != 3:
        raise ValueError(f"{name} must have shape (N, T, X); got {tuple(value.shape)}")
    return value


def _problem(x1: object, y: object, mask: object) -> tuple[Tensor, Tensor, Tensor]:
    """``(x1, y, mask)`` checked: floating ``(N, T, X)`` fields of one shape and a bool mask."""
    x1 = _field("x1", x1)
    y = _field("y", y)
    if y.shape != x1.shape:
        raise ValueError(f"y must have x1's shape {tuple(x1.shape)}; got {tuple(y.shape)}")
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        what = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask must be a bool torch.Tensor of x1's shape; got {what}")
    if mask.shape != x1.shape:
        raise ValueError(f"mask must have x1's shape {tuple(x1.shape)}; got {tuple(mask.shape)}")
    return x1, y.to(device=x1.device, dtype=x1.dtype), mask.to(x1.device)


@dataclass(frozen=True)
class TrainingSet:
    """PICSB's training data, shape ``(N, T, X)`` each: LF priors ``x1``, sensor values ``y`` (read on
    ``mask`` only) and the bool sensor ``mask``. It holds no HF field, by design: display-only errors
    take the truth through ``train_picsb(..., monitor=...)``."""

    x1: Tensor
    y: Tensor
    mask: Tensor

    def __post_init__(self) -> None:
        x1, y, mask = _problem(self.x1, self.y, self.mask)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "mask", mask)

    def __len__(self) -> int:
        return self.x1.shape[0]


@dataclass(frozen=True)
class PICSBConfig:
    """The settings of :func:`train_picsb`; a bad value raises naming its field.

    ``rounds`` ``R_max >= 0``; ``steps`` ``S >= 1`` AdamW steps per round at ``lr``, ``batch`` cases per
    step; ``kappa`` ``κ ∈ [0, 1]`` the refresh mixing; ``sample_steps`` ``N_s >= 1`` and ``method`` the
    refresh sampler; ``polish_steps`` ``K₁ >= 0`` Adam steps of projected descent on ``E`` (``energy``,
    at ``polish_lr``); ``obs_weight`` ``λ_o``; ``residual_weight`` ``λ_R`` (None: the module's rule; 0:
    no PDE loss); ``seed``; ``denoiser`` and ``burgers`` the network's and the PDE's sizes.
    """

    rounds: int = 2
    steps: int = 60
    batch: int = 32
    lr: float = 1e-3
    kappa: float = 1.0
    sample_steps: int = 10
    method: str = "ot-ode"
    polish_steps: int = 0
    polish_lr: float = 1e-2
    obs_weight: float = 1.0
    residual_weight: float | None = None
    seed: int = 0
    denoiser: DenoiserConfig = field(default_factory=DenoiserConfig)
    burgers: BurgersConfig = field(default_factory=BurgersConfig)
    energy: EnergyConfig = field(default_factory=EnergyConfig)

    def __post_init__(self) -> None:
        check_int("rounds", self.rounds, minimum=0)
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("kappa", self.kappa, minimum=0.0, maximum=1.0)
        check_int("sample_steps", self.sample_steps, minimum=1)
        check_choice("method", self.method, bridge.METHODS)
        check_int("polish_steps", self.polish_steps, minimum=0)
        check_float("polish_lr", self.polish_lr, minimum=0.0, strict_min=True)
        check_float("obs_weight", self.obs_weight, minimum=0.0)
        if self.residual_weight is not None:
            check_float("residual_weight", self.residual_weight, minimum=0.0)
        check_seed("seed", self.seed)
        for name, kind in (
            ("denoiser", DenoiserConfig),
            ("burgers", BurgersConfig),
            ("energy", EnergyConfig),
        ):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}; got {type(getattr(self, name)).__name__}")


@dataclass
class RoundLog:
    """One row of the per-round log: ``round`` (0: the initial surrogates), the surrogates' mean energy
    ``energy``, the round's mean training ``loss`` (NaN for row 0; with ``R_max = 0`` row 1 is the fit
    and the surrogates are the initial ones), the display-only ``rel_l2`` from the
    monitor (NaN without one) and the round's fit :class:`History` (None for row 0)."""

    round: int
    energy: float
    loss: float
    rel_l2: float
    history: History | None = None


@dataclass
class PICSBResult:
    """What :func:`train_picsb` returns: the trained ``model`` (eval mode), the final ``surrogates``
    ``(N, T, X)``, the fixed ``residual_weight`` ``λ_R`` and the per-round ``logs``."""

    model: Denoiser
    surrogates: Tensor
    residual_weight: float
    logs: list[RoundLog]

    @property
    def losses(self) -> list[float]:
        """Every training step's loss, all rounds concatenated."""
        return [v for log in self.logs if log.history is not None for v in log.history.loss]


def initial_surrogates(x1: Tensor, y: Tensor, mask: Tensor, width: float = SPREAD_WIDTH) -> Tensor:
    """``x̃₀ = x₁ + K w`` per frame: the sensor corrections spread by a circular Gaussian (§3.5, step 0).

    For each case and frame with sensor sites ``S``, ``c_s = y_s − x1_s`` and the kernel
    ``K(i, j) = exp(−d(i, j)² / (2 width²))``, ``d`` the circular distance in cells. The weights solve
    ``K_SS w = c`` (Gaussian kernel interpolation; ``K_SS`` is positive definite), so ``x̃₀ = y`` at the
    sensors and ``x̃₀ → x₁`` away from them; a frame without sensors keeps ``x₁``. Solved in float64, then
    the sensors are set to ``y`` exactly. Returns ``x1``'s dtype and device. The systems are solved
    :data:`SURROGATE_CHUNK` cases at a time (one batch up to that many cases).
    """
    x1, y, mask = _problem(x1, y, mask)
    width = check_float("width", width, minimum=0.0, strict_min=True)
    n_x = x1.shape[-1]
    idx = torch.arange(n_x, device=x1.device, dtype=torch.float64)
    gap = (idx[:, None] - idx[None, :]).abs()
    dist = torch.minimum(gap, n_x - gap)
    kernel = torch.exp(-dist.square() / (2.0 * width**2))
    # The systems take N·T·X² float64 numbers: at most SURROGATE_CHUNK cases at a time (one piece below).
    parts = [
        _spread(
            x1[i : i + SURROGATE_CHUNK], y[i : i + SURROGATE_CHUNK], mask[i : i + SURROGATE_CHUNK], kernel
        )
        for i in range(0, max(x1.shape[0], 1), SURROGATE_CHUNK)
    ]
    spread = parts[0] if len(parts) == 1 else torch.cat(parts)
    return torch.where(mask, y, (x1.to(torch.float64) + spread).to(x1.dtype))


def _spread(x1: Tensor, y: Tensor, mask: Tensor, kernel: Tensor) -> Tensor:
    """``K w`` of :func:`initial_surrogates` for the cases given (float64)."""
    m = mask.to(torch.float64)
    corr = m * (y.to(torch.float64) - x1.to(torch.float64))
    # Rows off the sensors become identity rows with right-hand side 0, so their weights are 0.
    system = m[..., :, None] * kernel * m[..., None, :] + torch.diag_embed(1.0 - m)
    weights = torch.linalg.solve(system, corr.unsqueeze(-1)).squeeze(-1)
    return weights @ kernel  # kernel is symmetric: (K w)_i = Σ_j w_j K(j, i)


def _loss_terms(
    model: Denoiser | torch.nn.Module,
    x0: Tensor,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    generator: torch.Generator,
    burgers: BurgersConfig,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(L_SB, mean (1 − t)² ‖R(x̂₀)‖², mean ‖M ⊙ x̂₀ − y‖²)`` on one batch (eq. L, unweighted).

    ``model`` is called once (it may be the data-parallel wrapper of the denoiser under torchrun)."""
    t, x_t, target = bridge.training_pair(x0, x1, generator)
    pred = model(x_t, t, Condition(x1, y, mask))
    l_sb = (pred - target).square().mean()
    x0_hat = bridge.predict_x0(x_t, pred, t)
    per_case = residual(x0_hat, burgers).square().mean(dim=(-2, -1))
    l_r = ((1.0 - t) ** 2 * per_case).mean()
    l_o = torch.where(mask, x0_hat - y, torch.zeros((), dtype=x0.dtype, device=x0.device)).square().mean()
    return l_sb, l_r, l_o


def loss_generator(batches: torch.Generator, seed: int) -> torch.Generator:
    """The generator of the noise a training loss draws: ``batches`` itself in one process (one stream
    for the batch indices and the noise, as the module docstring says); under torchrun a generator of
    rank r's own on ``batches``' device, seeded ``rank_seed(seed + NOISE_SEED_OFFSET, r)``, so the ranks
    draw different noise for their different rows while the indices, drawn from ``batches``, agree."""
    me = distributed.world()
    if not me.distributed:
        return batches
    noise_seed = distributed.rank_seed(seed + NOISE_SEED_OFFSET, me.rank)
    return torch.Generator(device=batches.device).manual_seed(noise_seed)


def _agree(x: Tensor) -> Tensor:
    """Rank 0's ``x`` on every rank of a torchrun group (a copy), ``x`` itself in one process."""
    if distributed.is_initialized() and torch.distributed.get_world_size() > 1:
        x = x.detach().clone(memory_format=torch.contiguous_format)
        torch.distributed.broadcast(x, src=0)
    return x


def _calibrate(model: Denoiser, data: TrainingSet, x0: Tensor, config: PICSBConfig) -> float:
    """``λ_R = 0.1 · L_SB / mean((1 − t)² ‖R(x̂₀)‖²)`` at the untrained network (module docstring);
    rank 0's value under torchrun."""
    if config.residual_weight is not None:
        return float(config.residual_weight)
    generator = torch.Generator(device=x0.device).manual_seed(config.seed)
    idx = torch.randint(len(data), (config.batch,), generator=generator, device=x0.device)
    with torch.no_grad():
        l_sb, l_r, _ = _loss_terms(
            model, x0[idx], data.x1[idx], data.y[idx], data.mask[idx], generator, config.burgers
        )
    weight = 0.1 * l_sb.item() / l_r.item() if l_r.item() > 0 else 0.0
    return distributed.broadcast_object(weight)


def _fit_round(
    model: Denoiser,
    data: TrainingSet,
    x0: Tensor,
    config: PICSBConfig,
    residual_weight: float,
    round_index: int,
    progress: bool,
) -> History:
    """One :func:`neurips26.train.fit` call of ``S`` steps against the surrogates ``x0`` (eq. L); the
    bridge noise from :func:`loss_generator` (the batch generator itself in one process)."""
    generator = torch.Generator(device=x0.device).manual_seed(config.seed + round_index)
    noise = loss_generator(generator, config.seed + round_index)

    def batches(step: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        idx = torch.randint(len(data), (config.batch,), generator=generator, device=x0.device)
        return x0[idx], data.x1[idx], data.y[idx], data.mask[idx]

    def loss_fn(net: torch.nn.Module, batch: tuple[Tensor, Tensor, Tensor, Tensor]) -> Tensor:
        l_sb, l_r, l_o = _loss_terms(net, *batch, noise, config.burgers)
        loss = l_sb
        if residual_weight > 0:
            loss = loss + residual_weight * l_r
        if config.obs_weight > 0:
            loss = loss + config.obs_weight * l_o
        return loss

    return fit(
        model,
        loss_fn,
        batches,
        steps=config.steps,
        seed=config.seed + round_index,
        lr=config.lr,
        progress=progress,
        desc=f"PICSB round {round_index}",
    )


def polish(x: Tensor, data: TrainingSet, config: PICSBConfig, *, hard: bool = True) -> Tensor:
    """``K₁`` Adam steps (``polish_lr``) on ``E`` from ``x``, each followed by the projection
    ``M ⊙ x = y`` (``σ_o = 0``: the energy's data term is the constraint); ``hard=False`` (the
    soft-observation ablation) never projects."""
    x = (project(x.detach(), data.mask, data.y) if hard else x.detach().clone()).requires_grad_(True)
    optimiser = torch.optim.Adam([x], lr=config.polish_lr)
    with torch.enable_grad():
        for _ in range(config.polish_steps):
            optimiser.zero_grad(set_to_none=True)
            energy(x, data.x1, data.y, data.mask, config.energy, config.burgers).sum().backward()
            optimiser.step()
            if hard:
                with torch.no_grad():
                    x.copy_(project(x, data.mask, data.y))
    return x.detach()


def refresh(
    model: Denoiser,
    data: TrainingSet,
    x0: Tensor,
    config: PICSBConfig,
    round_index: int,
    *,
    hard: bool = True,
) -> Tensor:
    """New surrogates ``(1 − κ) x̃₀ + κ x̂`` (§3.5, step 2); ``κ = 0`` returns ``x0`` itself, untouched.
    ``hard=False`` samples and polishes without the sensor constraint (the soft-observation ablation)."""
    if config.kappa == 0.0:
        return x0
    generator = torch.Generator(device=x0.device).manual_seed(config.seed + REFRESH_SEED_OFFSET + round_index)
    fresh = reconstruct(
        model,
        data.x1,
        data.y,
        data.mask,
        config.sample_steps,
        method=config.method,
        generator=generator,
        batch=config.batch * 4,
        hard=hard,
    )
    if config.polish_steps:
        fresh = polish(fresh, data, config, hard=hard)
    if config.kappa == 1.0:
        return fresh
    return (1.0 - config.kappa) * x0 + config.kappa * fresh


def _log(
    round_index: int,
    x0: Tensor,
    data: TrainingSet,
    config: PICSBConfig,
    monitor: Callable[[Tensor], float] | None,
    history: History | None,
) -> RoundLog:
    with torch.no_grad():
        e = energy(x0, data.x1, data.y, data.mask, config.energy, config.burgers).mean().item()
    loss = float(sum(history.loss) / len(history.loss)) if history is not None else math.nan
    rel = float(monitor(x0.detach().clone())) if monitor is not None else math.nan
    return RoundLog(round=round_index, energy=e, loss=loss, rel_l2=rel, history=history)


def truth_monitor(truth: Tensor) -> Callable[[Tensor], float]:
    """A display-only monitor: the mean rel-L2 of the surrogates to ``truth`` (never used in training)."""
    truth = _field("truth", truth)

    def monitor(surrogates: Tensor) -> float:
        return relative_l2(surrogates, truth.to(surrogates)).mean().item()

    return monitor


def train_picsb(
    data: TrainingSet,
    config: PICSBConfig | None = None,
    *,
    monitor: Callable[[Tensor], float] | None = None,
    progress: bool = False,
    surrogates: Tensor | None = None,
    refresh_with: Callable[..., Tensor] | None = None,
) -> PICSBResult:
    """Train PICSB on ``data`` (no HF field) per ``config``; see the module docstring for the rounds.

    ``monitor(surrogates) -> float`` (e.g. :func:`truth_monitor`) is called on a copy of the surrogates
    after initialisation and after every refresh, for the logs only; nothing it returns reaches training.
    The network runs in ``data.x1``'s dtype and device; under torchrun the fits train data-parallel
    (module docstring).

    Hooks for the baselines and ablations built from the same loop: ``surrogates`` replaces the initial
    x₀ ends (the HF-trained oracle passes the true fields); ``refresh_with(model, data, x0, config, round)``
    replaces :func:`refresh` (the soft-observation ablation), and ``refresh_with=keep`` never refreshes.
    """
    if not isinstance(data, TrainingSet):
        raise TypeError(f"data must be a TrainingSet; got {type(data).__name__}")
    config = PICSBConfig() if config is None else config
    if not isinstance(config, PICSBConfig):
        raise TypeError(f"config must be a PICSBConfig; got {type(config).__name__}")
    if monitor is not None and not callable(monitor):
        raise TypeError(
            f"monitor must be a callable monitor(surrogates) -> float; got {type(monitor).__name__}"
        )
    shape = (config.burgers.frames, config.burgers.grid)
    if tuple(data.x1.shape[1:]) != shape or config.denoiser.frames != shape[0]:
        raise ValueError(
            f"data must have fields (N, {shape[0]}, {shape[1]}) matching config.burgers and "
            f"config.denoiser.frames = {config.denoiser.frames}; got {tuple(data.x1.shape)}"
        )
    if len(data) == 0:
        raise ValueError("data must hold at least one case")
    x1 = data.x1
    model = Denoiser(config.denoiser, seed=config.seed).to(device=x1.device, dtype=x1.dtype)
    if surrogates is None:
        x0 = initial_surrogates(data.x1, data.y, data.mask)
    else:
        x0 = _field("surrogates", surrogates).to(device=x1.device, dtype=x1.dtype)
        if x0.shape != x1.shape:
            raise ValueError(f"surrogates must have data.x1's shape {tuple(x1.shape)}; got {tuple(x0.shape)}")
    step_refresh = refresh if refresh_with is None else refresh_with
    if not callable(step_refresh):
        raise TypeError(f"refresh_with must be callable; got {type(refresh_with).__name__}")
    distributed.init()  # a no-op in one process; under torchrun the ranks agree on x0 and λ_R below
    x0 = _agree(x0)
    weight = _calibrate(model, data, x0, config)
    logs = [_log(0, x0, data, config, monitor, None)]
    if config.rounds == 0:
        history = _fit_round(model, data, x0, config, weight, 1, progress)  # round 1's data and noise
        logs.append(_log(1, x0, data, config, monitor, history))
    for r in range(1, config.rounds + 1):
        history = _fit_round(model, data, x0, config, weight, r, progress)
        model.eval()
        fresh = step_refresh(model, data, x0, config, r)
        x0 = fresh if fresh is x0 else _agree(fresh)
        logs.append(_log(r, x0, data, config, monitor, history))
    model.eval()
    return PICSBResult(model=model, surrogates=x0, residual_weight=weight, logs=logs)


def keep(model: Denoiser, data: TrainingSet, x0: Tensor, config: PICSBConfig, round_index: int) -> Tensor:
    """A refresh that keeps the surrogates (for :func:`train_picsb`'s ``refresh_with``): rounds of training
    against fixed ends, as the HF-trained oracle needs."""
    return x0


def reconstruct(
    model: Denoiser,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    steps: int,
    method: str = "ot-ode",
    generator: torch.Generator | None = None,
    *,
    batch: int | None = None,
    hard: bool = True,
) -> Tensor:
    """HF fields from LF priors ``x1`` and sensors ``(y, mask)`` ``(N, T, X)``: hard-conditioned bridge
    sampling (:func:`neurips26.picsb.bridge.sample`, eq. B3–B4) in ``steps`` network calls, so
    ``M ⊙ x = y`` exactly. ``method`` ``"ot-ode"`` (deterministic) or ``"stochastic"`` (needs
    ``generator``); ``batch`` cases per network call (None: all at once; the result does not depend on it
    for the OT-ODE). ``hard=False`` (the soft-observation ablation): the network still sees
    ``(x1, M ⊙ y, M)`` as its condition, but no step overwrites the sensors."""
    if not callable(model):
        raise TypeError(f"model must be a callable net(x_t, t, cond); got {type(model).__name__}")
    x1, y, mask = _problem(x1, y, mask)
    steps = check_int("steps", steps, minimum=1)
    method = check_choice("method", method, bridge.METHODS)
    size = x1.shape[0] if batch is None else check_int("batch", batch, minimum=1)
    out = []
    for start in range(0, x1.shape[0], max(size, 1)):
        part = slice(start, start + size)
        cond = Condition(x1[part], y[part], mask[part])
        out.append(
            bridge.sample(
                model,
                x1[part],
                steps,
                method=method,
                cond=cond,
                mask=mask[part] if hard else None,
                y=y[part] if hard else None,
                generator=generator,
            )
        )
    return torch.cat(out) if out else x1.clone()
