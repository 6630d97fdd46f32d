"""The RL loop shared by Flow-GRPO and SpatialFlow-GRPO: sample groups with the SDE policy, score the edits,
turn scores into advantages, and take two clipped-surrogate updates of the LoRA adapters per iteration.

One iteration (Flow-GRPO's ``train_sd3.py``, scaled down; every setting in :class:`RLConfig`):

1. draw ``conditions`` edit cases (1–3 clauses) from the iteration's own seed stream, so every method sees
   the same cases, and repeat each ``group_size`` times;
2. roll the policy out with :func:`~neurips26.spatialflow_grpo.sde.sample` (``sde_steps`` steps, noise level
   ``a``), keeping every state and the old per-token log-probabilities. Only the steps of ``sde_window`` are
   stochastic (and trained); the last step is a deterministic Euler step by default (Flow-GRPO-Fast's SDE
   window, ours as the default: in pixel space the last step's noise stays in the image, PSNR ≈ 23 dB
   against ≈ 38 dB, and would swamp the preservation reward);
3. score the final images region by region (the oracle, or a learned reward with the same layout);
4. advantages: Flow-GRPO gives each rollout one (:func:`~neurips26.rl.group_advantages` of the ``scalar``
   mean of its region rewards); SpatialFlow-GRPO gives each region one
   (:func:`~neurips26.spatialflow_grpo.spatial.region_advantages`) and, with ``shuffled``, places them on a
   random permutation of the tokens (the control of claim S6);
5. two updates: the rollouts are split in two random halves; for each half the step losses of all
   trained steps are back-propagated (each divided by the step count, gradients accumulated) and Adam
   takes one step (gradient norm clipped to 1). The reference mean for the KL comes from the same editor with
   its adapters off.

The result keeps the adapter weights, the training curves and a probe: the MultiEdit success rate every
``probe_every`` iterations (deterministic ODE sampling on a fixed probe set), for claim S5.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import torch
from torch import Tensor

from neurips26.flow import shifted_grid
from neurips26.progress import progress as progress_bar
from neurips26.rl import group_advantages
from neurips26.seeding import sub_seed
from neurips26.spatialflow_grpo import reward as R
from neurips26.spatialflow_grpo.editor import (
    Editor,
    adapters_off,
    add_rl_lora,
    from_flow,
    to_flow,
    velocity_fn,
)
from neurips26.spatialflow_grpo.editworld import EditBatch, make_suite, sample_cases
from neurips26.spatialflow_grpo.grpo import PolicyLoss, flow_grpo_loss
from neurips26.spatialflow_grpo.regions import shuffle_tokens, token_weights
from neurips26.spatialflow_grpo.sde import (
    NOISE_LEVEL,
    check_window,
    sample,
    step_kl,
    step_log_prob,
    step_mean,
)
from neurips26.spatialflow_grpo.spatial import ALPHAS, READINGS, region_advantages, spatial_loss
from neurips26.train import torch_threads
from neurips26.validation import check_choice, check_float, check_int, check_seed

#: The two methods: one advantage per image, or one per region.
METHODS = ("flow-grpo", "spatial")

#: ``reward_fn(edited_images, batch) -> (B, K_MAX + 1)`` region rewards (the oracle's layout).
RewardFn = Callable[[Tensor, EditBatch], Tensor]

#: Seed streams of a run.
STREAM_CASES, STREAM_NOISE, STREAM_SPLIT, STREAM_SHUFFLE, STREAM_LORA = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class RLConfig:
    """One RL run. method: ``"flow-grpo"`` or ``"spatial"``; scalar: Flow-GRPO's scalarisation of the region
    rewards (``"equal"`` mean or ``"area"``); reading, alpha, shuffled, global_weight: SpatialFlow-GRPO's
    options (:mod:`~neurips26.spatialflow_grpo.spatial`); group_size, conditions, iterations, sde_steps,
    sde_window (the stochastic, trained steps ``(start, stop)``), shift (of the time grid), a (noise level),
    beta (KL weight, on the ``kl_convention`` KL), eps (clip range), lr (Adam), updates (per iteration),
    lora_rank, adv_std (Flow-GRPO's advantage std); probe_every, probe_size, eval_steps: the MultiEdit
    probe; seed; lora_alpha: the adapters' α (their scale is α / lora_rank)."""

    method: str = "spatial"
    scalar: str = "equal"
    reading: str = "a"
    alpha: str = "equal"
    shuffled: bool = False
    global_weight: float = 0.0
    group_size: int = 8
    conditions: int = 4
    iterations: int = 40
    sde_steps: int = 6
    sde_window: tuple[int, int] = (0, 5)
    shift: float = 1.0
    a: float = NOISE_LEVEL
    beta: float = 0.01
    kl_convention: str = "exact"
    eps: float = 1e-3
    lr: float = 1e-3
    updates: int = 2
    lora_rank: int = 4
    adv_std: str = "group"
    probe_every: int = 5
    probe_size: int = 128
    eval_steps: int = 12
    seed: int = 0
    lora_alpha: float = 8.0

    #: The fields added with the ``paper`` scale and their values before (the configuration hash leaves
    #: them out at these values: :func:`neurips26.checkpoint_files.committed_form`).
    ADDED: ClassVar[dict[str, object]] = {"lora_alpha": 8.0}

    def __post_init__(self) -> None:
        check_choice("method", self.method, METHODS)
        check_choice("scalar", self.scalar, R.WEIGHTINGS)
        check_choice("reading", self.reading, READINGS)
        check_choice("alpha", self.alpha, ALPHAS)
        if not isinstance(self.shuffled, bool):
            raise TypeError(f"shuffled must be a bool; got {type(self.shuffled).__name__}")
        check_float("global_weight", self.global_weight)
        check_int("group_size", self.group_size, minimum=2)
        check_int("conditions", self.conditions, minimum=1)
        check_int("iterations", self.iterations, minimum=0)
        check_int("sde_steps", self.sde_steps, minimum=1)
        check_window(self.sde_window, self.sde_steps)
        check_float("shift", self.shift, minimum=0.0, strict_min=True)
        check_float("a", self.a, minimum=0.0, strict_min=True)
        check_float("beta", self.beta, minimum=0.0)
        check_choice("kl_convention", self.kl_convention, ("exact", "code"))
        check_float("eps", self.eps, minimum=0.0)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("updates", self.updates, minimum=1, maximum=self.group_size * self.conditions)
        check_int("lora_rank", self.lora_rank, minimum=1)
        check_choice("adv_std", self.adv_std, ("group", "batch"))
        check_int("probe_every", self.probe_every, minimum=1)
        check_int("probe_size", self.probe_size, minimum=1)
        check_int("eval_steps", self.eval_steps, minimum=1)
        check_seed("seed", self.seed)
        check_float("lora_alpha", self.lora_alpha, minimum=0.0, strict_min=True)

    @property
    def grid(self) -> tuple[float, ...]:
        """The SDE training grid (``sde_steps`` steps, timestep shift ``shift``)."""
        return shifted_grid(self.sde_steps, self.shift)

    def replace(self, **changes: object) -> RLConfig:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)


@dataclass
class RLHistory:
    """Per iteration: mean scalar reward, mean region rewards ``(K_MAX + 1)`` over valid slots, surrogate,
    KL, approx-KL and clip fraction of the updates; the probe's (iteration, MultiEdit success) pairs."""

    reward: list[float] = field(default_factory=list)
    region_reward: list[list[float]] = field(default_factory=list)
    surrogate: list[float] = field(default_factory=list)
    kl: list[float] = field(default_factory=list)
    approx_kl: list[float] = field(default_factory=list)
    clip_fraction: list[float] = field(default_factory=list)
    probe: list[tuple[int, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Rollouts:
    """One iteration's samples: the repeated ``batch``, the SDE ``states`` ``(T + 1, B, 3, 16, 16)``, the
    old per-token log-probabilities ``(T, B, 64)``, the final ``images`` (in [0, 1]) and their ``rewards``."""

    batch: EditBatch
    states: Tensor
    token_log_probs: Tensor
    images: Tensor
    rewards: Tensor


def iteration_cases(config: RLConfig, iteration: int) -> EditBatch:
    """The ``conditions`` cases of ``iteration`` (the same for every method of a seed)."""
    return sample_cases(config.conditions, sub_seed(config.seed, STREAM_CASES, iteration))


@torch.no_grad()
def rollout(
    editor: Editor, config: RLConfig, cases: EditBatch, iteration: int, reward_fn: RewardFn
) -> Rollouts:
    """Sample ``group_size`` SDE edits of each case with the current policy and score them."""
    batch = cases.repeat_each(config.group_size)
    device = next(editor.parameters()).device
    batch = batch.to(device)
    generator = torch.Generator().manual_seed(sub_seed(config.seed, STREAM_NOISE, iteration))
    noise = torch.randn(batch.source.shape, generator=generator).to(device)
    trajectory = sample(
        velocity_fn(editor, to_flow(batch.source), batch.instruction),
        noise,
        config.grid,
        mode="sde",
        a=config.a,
        generator=generator,
        window=config.sde_window,
    )
    images = from_flow(trajectory.final)
    return Rollouts(batch, trajectory.states, trajectory.token_log_probs, images, reward_fn(images, batch))


def advantages(config: RLConfig, rollouts: Rollouts, iteration: int) -> tuple[Tensor, Tensor | None]:
    """Flow-GRPO: ``(B,)`` image advantages and None; spatial: ``(B, K + 1)`` region advantages and the token
    weights ``(B, K + 1, 64)`` they act on (shuffled per condition for the S6 control)."""
    batch, g = rollouts.batch, config.group_size
    scalar = R.scalar_reward(rollouts.rewards, batch, config.scalar)
    image_adv = group_advantages(scalar.reshape(-1, g), std=config.adv_std).reshape(-1)
    if config.method == "flow-grpo":
        return image_adv, None
    adv = region_advantages(
        rollouts.rewards,
        batch.region_valid,
        g,
        global_advantages=image_adv,
        global_weight=config.global_weight,
    )
    weights = token_weights(batch.masks)
    if config.shuffled:
        weights = shuffle_tokens(weights, g, sub_seed(config.seed, STREAM_SHUFFLE, iteration))
    return adv, weights


@dataclass(frozen=True)
class StepTerms:
    """What the loss of one denoising step needs from the current policy: the per-token log-probabilities
    ``(B, 64)`` of the recorded transitions (with gradient) and the KL to the reference ``(B,)`` (None when
    not asked for)."""

    token_log_prob: Tensor
    kl: Tensor | None


def step_terms(
    editor: Editor, config: RLConfig, rollouts: Rollouts, rows: Tensor, n: int, *, kl: bool = True
) -> StepTerms:
    """Denoising step ``n`` of the rollouts ``rows`` under ``editor``: log π_θ of the recorded samples per
    token and (``kl``) the KL to the same editor with its adapters off (the reference policy)."""
    grid = config.grid
    t, t_next = grid[n], grid[n + 1]
    batch = rollouts.batch
    source, instruction = to_flow(batch.source[rows]), batch.instruction[rows]
    x, x_next = rollouts.states[n][rows], rollouts.states[n + 1][rows]
    times = torch.full((x.shape[0],), t, dtype=x.dtype, device=x.device)
    v = editor(x, times, source, instruction)
    _, token_lp = step_log_prob(x, v, x_next, t, t_next, a=config.a)
    if not kl:
        return StepTerms(token_lp, None)
    mean, std, sigma = step_mean(x, v, t, t_next, config.a)
    with torch.no_grad(), adapters_off(editor):
        mean_ref, _, _ = step_mean(x, editor(x, times, source, instruction), t, t_next, config.a)
    return StepTerms(token_lp, step_kl(mean, mean_ref, std, sigma, config.kl_convention))


def step_loss(
    config: RLConfig,
    rollouts: Rollouts,
    rows: Tensor,
    n: int,
    adv: Tensor,
    weights: Tensor | None,
    terms: StepTerms,
) -> PolicyLoss:
    """The method's loss of step ``n`` on the rollouts ``rows`` (current policy's ``terms`` vs the old
    log-probabilities recorded at sampling)."""
    old = rollouts.token_log_probs[n][rows]
    if config.method == "flow-grpo":
        return flow_grpo_loss(
            terms.token_log_prob, old, adv[rows], terms.kl, eps=config.eps, beta=config.beta
        )
    return spatial_loss(
        terms.token_log_prob,
        old,
        adv[rows],
        weights[rows],
        rollouts.batch.region_valid[rows],
        terms.kl,
        eps=config.eps,
        beta=config.beta,
        reading=config.reading,
        alpha=config.alpha,
    )


def update(
    editor: Editor,
    optimizer: torch.optim.Optimizer,
    config: RLConfig,
    rollouts: Rollouts,
    iteration: int,
) -> list[PolicyLoss]:
    """The ``updates`` optimiser steps of one iteration (module docstring, step 5); every step's loss."""
    adv, weights = advantages(config, rollouts, iteration)
    size = adv.shape[0]
    generator = torch.Generator().manual_seed(sub_seed(config.seed, STREAM_SPLIT, iteration))
    order = torch.randperm(size, generator=generator).to(adv.device)
    parts: list[PolicyLoss] = []
    params = [p for p in editor.parameters() if p.requires_grad]
    for rows in order.chunk(config.updates):
        optimizer.zero_grad(set_to_none=True)
        trained = range(*config.sde_window)
        for n in trained:
            terms = step_terms(editor, config, rollouts, rows, n)
            part = step_loss(config, rollouts, rows, n, adv, weights, terms)
            (part.loss / len(trained)).backward()
            parts.append(part)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
    return parts


@torch.no_grad()
def edit(editor: Editor, batch: EditBatch, steps: int = 12, seed: int = 0) -> Tensor:
    """Deterministic edits of ``batch`` (``steps`` Euler steps of the ODE from seeded noise), in [0, 1]."""
    device = next(editor.parameters()).device
    batch = batch.to(device)
    noise = torch.randn(batch.source.shape, generator=torch.Generator().manual_seed(seed)).to(device)
    fn = velocity_fn(editor, to_flow(batch.source), batch.instruction)
    return from_flow(sample(fn, noise, shifted_grid(steps, 1.0), mode="ode").final)


@dataclass
class RLRun:
    """A finished run: its ``config``, the ``editor`` with trained adapters and its ``history``."""

    config: RLConfig
    editor: Editor
    history: RLHistory


def run_rl(
    base: Editor,
    config: RLConfig,
    *,
    reward_fn: RewardFn = R.region_rewards,
    progress: bool = False,
    probe: EditBatch | None = None,
) -> RLRun:
    """Fine-tune a copy of ``base`` (its weights untouched) with ``config``; probe MultiEdit every
    ``probe_every`` iterations (and at 0 and the end) on ``probe`` (default: the first ``probe_size`` cases of
    the MultiEdit suite).

    The run trains on ``base``'s device (cases, rollouts and advantages go there; the seeded draws are made
    on the CPU, so a seed gives the same cases and noise on every device), in one process: under torchrun
    each rank runs the same loop on its own device (it is not data-parallel)."""
    if not isinstance(base, Editor):
        raise TypeError(f"base must be an Editor; got {type(base).__name__}")
    if not isinstance(config, RLConfig):
        raise TypeError(f"config must be an RLConfig; got {type(config).__name__}")
    editor = Editor(base.config)
    editor.load_state_dict(base.state_dict())
    editor.to(next(base.parameters()).device)
    add_rl_lora(
        editor, rank=config.lora_rank, alpha=config.lora_alpha, seed=sub_seed(config.seed, STREAM_LORA)
    )
    optimizer = torch.optim.Adam([p for p in editor.parameters() if p.requires_grad], lr=config.lr)
    probe = make_suite("multiedit", config.probe_size) if probe is None else probe
    history = RLHistory()

    def run_probe(iteration: int) -> None:
        editor.eval()
        history.probe.append(
            (iteration, float(R.success(edit(editor, probe, config.eval_steps), probe).float().mean()))
        )

    with torch_threads(1):
        run_probe(0)
        for it in progress_bar(range(config.iterations), desc=f"{config.method} RL", show=progress):
            rollouts = rollout(editor, config, iteration_cases(config, it), it, reward_fn)
            parts = update(editor, optimizer, config, rollouts, it)
            valid = rollouts.batch.region_valid
            history.reward.append(
                float(R.scalar_reward(rollouts.rewards, rollouts.batch, config.scalar).mean())
            )
            per_region = (rollouts.rewards * valid).sum(0) / valid.sum(0).clamp_min(1)
            history.region_reward.append([float(r) for r in per_region])
            for name in ("surrogate", "kl", "approx_kl", "clip_fraction"):
                getattr(history, name).append(sum(getattr(p, name) for p in parts) / len(parts))
            if (it + 1) % config.probe_every == 0 or it + 1 == config.iterations:
                run_probe(it + 1)
    editor.eval()
    return RLRun(config, editor, history)
