"""The chapter's base editor and RL adapters: training recipes and float16 checkpoints (chapter 08).

``python -m neurips26.spatialflow_grpo.prepare --scale default`` pretrains the base editor and runs every RL
arm of :data:`ARMS`, writing float16 checkpoints into ``src/neurips26/spatialflow_grpo/checkpoints/``
(package data); ``--scale smoke`` writes tiny versions into the user cache; ``--only NAME`` restricts the run.
The notebooks get a model through :func:`pretrained` (the chapter's
:class:`~neurips26.checkpoint_files.Registry`): ``pretrained("base")`` is the editor,
``pretrained("spatial-s0")`` the editor with that run's LoRA adapters (a checkpoint stores only the
adapters and is bound to the base's weights hash).

The arms, all from the same base with the same RL settings (:class:`~neurips26.spatialflow_grpo.rl_loop
.RLConfig`), the same cases and the same initial noise per iteration and seed:

- ``flow-s{0,1,2}`` — Flow-GRPO, one advantage per image from the equal-weight mean of the region rewards;
- ``spatial-s{0,1,2}`` — SpatialFlow-GRPO, reading (a), equal region weights;
- ``flow-area`` — Flow-GRPO with the area-weighted scalar;
- ``spatial-shuffled`` — region advantages on shuffled tokens (claim S6's control);
- ``spatial-b`` — reading (b), the per-position ratio;
- ``spatial-area`` — area region weights α_k;
- ``flow-sfr``, ``spatial-sfr`` — both methods with SFReward-tiny's region scores in place of the oracle
  (claim S7).

``sfreward-tiny`` is the learned region reward itself (:mod:`~neurips26.spatialflow_grpo.reward_model`),
fitted to oracle labels of the base editor's samples; it and the arms that use it are bound to the weights
they were trained from (the base's, the reward model's).

A checkpoint is fresh when its configuration hashes as recorded, its state dict fits and it reproduces its
recorded metric within :data:`~neurips26.checkpoint_files.METRIC_RTOL` plus :data:`METRIC_ATOL`: the base,
its flow-matching loss on a fixed validation draw; an arm, the mean oracle reward of fixed-noise ODE edits
of :data:`VALIDATION_CASES` MultiEdit cases; the reward model, its Spearman ρ with the oracle on held-out
base samples.

``--scale paper`` trains the same fourteen models into the user cache (through the results cache, so the
arms find the base and the reward model they are bound to), on the device
:func:`~neurips26.train.choose_device` picks: ``torchrun --nproc_per_node=N -m
neurips26.spatialflow_grpo.prepare --scale paper`` pretrains the base data-parallel (one
:func:`~neurips26.train.fit` run); the reward model and the RL arms are custom loops that train in one
process (under torchrun every rank runs them alike, on its own GPU). The paper fine-tunes OmniGen2 and
FLUX.2-klein-4B at 512 px with Flow-GRPO's settings (G = 24, 10 training and 40 evaluation steps, LoRA at
lr 3e-4, two updates per epoch, a = 0.7) and trains SFReward on ≈14K region-annotated edits; its base models
cannot exist offline and EditWorld's images are 16 × 16 (the reward, the regions and the token grid assume
it). So ``paper`` keeps the world and takes the paper's RL settings where they apply to it:
:data:`PAPER_EDITOR` (width 192, depth 8, 6 heads, 4.34 M parameters) pretrained by
:data:`PAPER_PRETRAINING` (30,000 updates of 256 pairs at lr 1e-3, 500 warm-up); :data:`PAPER_RL` for every
arm (G = 24 over 8 conditions, 10 SDE steps with the window (0, 9), 40 evaluation steps, 150 iterations,
LoRA rank 16 with α = 32, the adapter scale α / r = 2 of Flow-GRPO's r = 32, α = 64 and of our default,
at lr 3e-4, two updates); :data:`PAPER_REWARD_MODEL` (1,500 cases × 9 edits = 13,500 labelled edits, as
SFReward-14K, drawn with the paper RL's sampler, 3,000 steps). About an hour on one H100 for the fourteen
models, a third of it the base (an estimate from FLOPs and step counts, not measured). ``--trial``
(:func:`neurips26.scales.trial_run`) applies :func:`trial_caps` (one update of every model on the smallest
data) and :class:`ValidationSizes`' trial sizes.
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

import neurips26
from neurips26.cache import cache_key, cached
from neurips26.checkpoint_files import (
    FORMAT,
    Registry,
    Sidecar,
    StaleCheckpointError,
    check_layout,
    committed_form,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.scales import pick, trial_run
from neurips26.spatialflow_grpo import reward as R
from neurips26.spatialflow_grpo.editor import (
    Editor,
    EditorConfig,
    PretrainConfig,
    add_rl_lora,
    flow_matching_loss,
    pretrain,
    to_flow,
)
from neurips26.spatialflow_grpo.editworld import make_suite, sample_cases
from neurips26.spatialflow_grpo.reward_model import (
    LabelledEdits,
    RegionRewardNet,
    RewardModelConfig,
    SFRewardTiny,
    agreement,
    collect_labelled,
    fit_sfreward,
)
from neurips26.spatialflow_grpo.rl_loop import RewardFn, RLConfig, edit, run_rl
from neurips26.train import choose_device

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.spatialflow_grpo``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = tuple(
    ("neurips26.spatialflow_grpo", f)
    for f in (
        "editor.py",
        "editworld.py",
        "reward.py",
        "sde.py",
        "regions.py",
        "grpo.py",
        "spatial.py",
        "rl_loop.py",
        "reward_model.py",
    )
)
MAX_TOTAL_BYTES = 1_000_000
METRIC_ATOL = 1e-5
VALIDATION_CASES = 32
VALIDATION_SEED = 2718
BASE = "base"
REWARD_MODEL = "sfreward-tiny"
#: Rewards an arm can train on: the oracle, or the learned SFReward-tiny.
REWARDS = ("oracle", REWARD_MODEL)
#: Held-out base samples the reward model's ρ is measured on (cases, SDE samples per case).
REWARD_VALIDATION = (100, 2)
#: Validation pairs of the base's flow-matching loss.
BASE_VALIDATION = 64

PAPER_EDITOR = EditorConfig(width=192, depth=8, heads=6, cond_dim=192)
"""The ``paper`` editor: 4,335,948 parameters (the default's 117,804) on the same 8 × 8 token grid."""
PAPER_PRETRAINING = PretrainConfig(steps=30_000, batch=256, lr=1e-3, warmup=500, editor=PAPER_EDITOR)
"""The ``paper`` pretraining: 7.7 M pairs (the default's 320 K), the default's schedule and time law."""
PAPER_RL = RLConfig(
    group_size=24,
    conditions=8,
    iterations=150,
    sde_steps=10,
    sde_window=(0, 9),
    eval_steps=40,
    lr=3e-4,
    updates=2,
    lora_rank=16,
    lora_alpha=32.0,
)
"""The ``paper`` RL run of every arm: Flow-GRPO's group of 24, 10 training and 40 evaluation steps, LoRA lr
3e-4 and two updates per iteration; 192 rollouts per iteration, 150 iterations (28,800 edits)."""
PAPER_REWARD_MODEL = RewardModelConfig(
    steps=3000, n_cases=1500, samples_per_case=6, sde_steps=10, sde_window=(0, 9)
)
"""The ``paper`` SFReward-tiny: 1,500 cases × (6 SDE + 1 ODE samples, target, source) = 13,500 labelled
edits (the paper's SFReward-14K has ≈14K), sampled as :data:`PAPER_RL` rolls out; 3,000 steps of 256."""


@dataclass(frozen=True)
class ArmSpec:
    """A row of the table: ``name``, ``role``, ``kind`` (``"base"`` the editor, ``"reward-model"``
    SFReward-tiny, ``"arm"`` an RL run); an arm's RL options that differ from the scale's :class:`RLConfig`,
    its ``reward`` (one of :data:`REWARDS`) and the run's ``seed``."""

    name: str
    role: str
    kind: str = "arm"
    method: str | None = None
    scalar: str = "equal"
    reading: str = "a"
    alpha: str = "equal"
    shuffled: bool = False
    reward: str = "oracle"
    seed: int = 0

    def __str__(self) -> str:
        return f"{self.name}  ({self.role})"


ARMS: tuple[ArmSpec, ...] = (
    ArmSpec(BASE, "the pretrained editor (flow matching on flawed pairs), no RL", kind="base"),
    ArmSpec(REWARD_MODEL, "SFReward-tiny: a CNN region reward fitted to oracle labels", kind="reward-model"),
    *(
        ArmSpec(f"flow-s{s}", f"Flow-GRPO, equal-weight scalar, seed {s}", method="flow-grpo", seed=s)
        for s in range(3)
    ),
    *(
        ArmSpec(f"spatial-s{s}", f"SpatialFlow-GRPO, reading (a), seed {s}", method="spatial", seed=s)
        for s in range(3)
    ),
    ArmSpec("flow-area", "Flow-GRPO, area-weighted scalar reward", method="flow-grpo", scalar="area"),
    ArmSpec(
        "spatial-shuffled", "SpatialFlow-GRPO on shuffled tokens (control)", method="spatial", shuffled=True
    ),
    ArmSpec("spatial-b", "SpatialFlow-GRPO, reading (b): per-position ratio", method="spatial", reading="b"),
    ArmSpec("spatial-area", "SpatialFlow-GRPO, area region weights", method="spatial", alpha="area"),
    ArmSpec("flow-sfr", "Flow-GRPO on SFReward-tiny's scores", method="flow-grpo", reward=REWARD_MODEL),
    ArmSpec(
        "spatial-sfr", "SpatialFlow-GRPO on SFReward-tiny's scores", method="spatial", reward=REWARD_MODEL
    ),
)
ARM_NAMES: tuple[str, ...] = tuple(a.name for a in ARMS)


def arm_spec(name: str) -> ArmSpec:
    """The row ``name`` of :data:`ARMS` (``ValueError`` naming ``name`` otherwise)."""
    if name not in ARM_NAMES:
        raise ValueError(f"name must be one of {', '.join(ARM_NAMES)}; got {name!r}")
    return ARMS[ARM_NAMES.index(name)]


@dataclass(frozen=True)
class PrepareConfig:
    """What trains the table at one scale: the base editor's ``pretraining`` and the arms' ``rl`` settings
    (each arm replaces its own options and seed)."""

    pretraining: PretrainConfig = field(default_factory=PretrainConfig)
    rl: RLConfig = field(default_factory=RLConfig)
    reward_model: RewardModelConfig = field(default_factory=RewardModelConfig)

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        """smoke: 40 pretraining steps, 5 tiny RL iterations; default: the dataclasses' defaults; paper:
        :data:`PAPER_PRETRAINING`, :data:`PAPER_RL`, :data:`PAPER_REWARD_MODEL` (not run here). A trial run
        (:func:`neurips26.scales.trial_run`) applies :func:`trial_caps` at any scale."""
        smoke = cls(
            pretraining=PretrainConfig(steps=40, warmup=5),
            rl=RLConfig(group_size=4, conditions=2, iterations=5, probe_size=8, eval_steps=4),
            reward_model=RewardModelConfig(steps=20, n_cases=16, samples_per_case=2),
        )
        paper = cls(pretraining=PAPER_PRETRAINING, rl=PAPER_RL, reward_model=PAPER_REWARD_MODEL)
        config = pick(scale, smoke=smoke, default=cls(), paper=paper)
        return trial_caps(config) if trial_run() else config

    def arm_config(self, spec: ArmSpec) -> RLConfig:
        """The RL settings of ``spec`` at this scale."""
        if spec.kind != "arm":
            raise ValueError(f"{spec.name} is not an RL arm")
        return self.rl.replace(
            method=spec.method,
            scalar=spec.scalar,
            reading=spec.reading,
            alpha=spec.alpha,
            shuffled=spec.shuffled,
            seed=spec.seed,
        )


def trial_caps(config: PrepareConfig) -> PrepareConfig:
    """``config`` cut to a trial run (:func:`neurips26.scales.trial_run`): one pretraining update of 4 pairs
    (no warm-up); one RL iteration of one update on one case × 2 rollouts of one (stochastic, trained) SDE
    step, a one-case probe of one step; one reward-model update of 8 edits from 2 cases (one SDE and at
    most one ODE sample each, one step). The networks keep their sizes; the caps enter the configuration
    hash."""
    rl = config.rl.replace(
        group_size=2,
        conditions=1,
        iterations=1,
        updates=1,
        sde_steps=1,
        sde_window=(0, 1),
        probe_size=1,
        eval_steps=1,
    )
    reward_model = replace(
        config.reward_model,
        steps=1,
        batch=8,
        n_cases=2,
        samples_per_case=1,
        ode_samples=min(config.reward_model.ode_samples, 1),
        sde_steps=1,
        sde_window=(0, 1),
    )
    return PrepareConfig(replace(config.pretraining, steps=1, warmup=0, batch=4), rl, reward_model)


@dataclass(frozen=True)
class ValidationSizes:
    """What the freshness metrics measure: ``base_pairs`` validation pairs of the base's loss, ``arm_cases``
    MultiEdit cases of an arm's reward, ``reward`` (cases, SDE samples per case) of the reward model's ρ."""

    base_pairs: int = BASE_VALIDATION
    arm_cases: int = VALIDATION_CASES
    reward: tuple[int, int] = REWARD_VALIDATION

    @classmethod
    def for_scale(cls, scale: str) -> ValidationSizes:
        """smoke: 16 cases × 1 sample for ρ; default and paper: the module's sizes; a trial run: 2 pairs,
        2 cases, 4 cases × 1 sample (ρ needs a few regions)."""
        sizes = pick(scale, smoke=cls(reward=(16, 1)), default=cls(), paper=cls())
        return cls(base_pairs=2, arm_cases=2, reward=(4, 1)) if trial_run() else sizes


# --------------------------------------------------------------------------------------------
# sidecar, building, measuring


def expected_hash(name: str, scale: str, bound: dict[str, str] | None = None) -> str:
    """The configuration hash of ``name`` at ``scale``; ``bound`` holds the weights hashes it was trained
    from (``"base"`` for the reward model and the arms, ``"reward_model"`` for an arm on SFReward-tiny)."""
    spec = arm_spec(name)
    config = PrepareConfig.for_scale(scale)
    payload: dict[str, Any] = {"arm": spec, "pretraining": config.pretraining, "format": FORMAT}
    # Fields added with the paper scale enter the hash only away from their earlier values.
    if spec.kind == "reward-model":
        payload["reward_model"] = committed_form(config.reward_model, RewardModelConfig.ADDED)
    if spec.kind == "arm":
        payload["rl"] = committed_form(config.arm_config(spec), RLConfig.ADDED)
    if spec.kind != "base":
        payload["bound"] = dict(bound or {})
    return config_hash(payload)


@dataclass(frozen=True)
class SFGMeta(Sidecar):
    """The sidecar of a checkpoint: name, config_hash, source, editor (the EditorConfig), spec, rl (the arm's
    RLConfig), reward_model (SFReward-tiny's config), metrics, curves (pretraining loss; RL reward, KL, clip
    fraction, the probe; the reward model's loss), base and reward (the weights hashes it was trained from),
    weights_hash, version, torch, train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("editor", "spec", "rl", "reward_model", "metrics", "curves")

    name: str
    config_hash: str
    source: str
    editor: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    rl: dict[str, Any] = field(default_factory=dict)
    reward_model: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    base: str = ""
    reward: str = ""
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def _adapter_keys(editor: Editor) -> list[str]:
    return [k for k in editor.state_dict() if "lora" in k]


def _check_bound(name: str, what: str, recorded: str, now: str) -> None:
    if recorded != now:
        raise StaleCheckpointError(f"{name}: trained from {what} {recorded}; the {what} now is {now}")


def build_model(
    name: str, scale: str, meta: SFGMeta, state: dict[str, Tensor], *, trained_from: Editor | None = None
) -> Editor | RegionRewardNet:
    """The model of ``meta`` (float32, eval mode, on the CPU): the base editor or the reward net from their
    float16 states, or, for an arm, the base of :func:`pretrained` with the arm's adapters
    (``StaleCheckpointError`` when bound to another base or reward model). ``trained_from``: the base the
    caller has just trained from (used as it is; the caller has checked what it is bound to)."""
    spec = arm_spec(name)
    if spec.kind == "base":
        editor = Editor(EditorConfig(**meta.editor))
        load_half_state(name, editor, state)
        return editor.eval()
    base = trained_from
    if base is None:
        base, base_meta = pretrained(BASE, scale, verbose=False)
        _check_bound(name, "base", meta.base, base_meta.weights_hash)
        if spec.reward == REWARD_MODEL:
            now = pretrained(REWARD_MODEL, scale, verbose=False)[1].weights_hash
            _check_bound(name, "reward model", meta.reward, now)
    if spec.kind == "reward-model":
        net = RegionRewardNet(RewardModelConfig(**meta.reward_model))
        load_half_state(name, net, state)
        return net.eval()
    editor = Editor(base.config)
    editor.load_state_dict(base.state_dict())
    alpha = float(meta.rl.get("lora_alpha", RLConfig.lora_alpha))  # sidecars before the field: 8
    add_rl_lora(editor, rank=int(meta.rl["lora_rank"]), alpha=alpha)
    keys = set(_adapter_keys(editor))
    reference = {k: v for k, v in editor.state_dict().items() if k in keys}
    check_layout(name, state, reference)
    editor.load_state_dict({k: v.to(reference[k].dtype) for k, v in state.items()}, strict=False)
    return editor.eval()


@torch.no_grad()
def validation_metrics(name: str, model: Editor | RegionRewardNet, scale: str) -> dict[str, float]:
    """Base: ``val_loss``, the flow-matching loss on validation pairs at fixed noise and times; reward
    model: ``val_rho``, its Spearman ρ with the oracle on held-out base samples; arms: ``val_reward``, the
    mean equal-weight oracle reward of fixed-noise ODE edits of MultiEdit cases (sizes:
    :class:`ValidationSizes`). Computed on the model's device (the draws are made on the CPU)."""
    kind = arm_spec(name).kind
    sizes = ValidationSizes.for_scale(scale)
    if kind == "base":
        device = next(model.parameters()).device
        n = sizes.base_pairs
        batch = sample_cases(n, VALIDATION_SEED)
        generator = torch.Generator().manual_seed(VALIDATION_SEED)
        noise = torch.randn(batch.target.shape, generator=generator).to(device)
        t = torch.rand(n, generator=generator).to(device)
        batch = batch.to(device)
        loss = flow_matching_loss(
            model, to_flow(batch.source), to_flow(batch.target), batch.instruction, noise, t
        )
        return {"val_loss": float(loss)}
    if kind == "reward-model":
        return {"val_rho": agreement(model, reward_validation(scale))["rho"]}
    cases = make_suite("multiedit", sizes.arm_cases, seed=VALIDATION_SEED)
    config = PrepareConfig.for_scale(scale).rl
    images = edit(model, cases, config.eval_steps, seed=VALIDATION_SEED)
    return {"val_reward": float(R.scalar_reward(R.region_rewards(images, cases), cases).mean())}


def reward_validation(scale: str) -> LabelledEdits:
    """Held-out labelled base samples (:class:`ValidationSizes`, drawn with the reward model's sampler) on
    which SFReward-tiny's ρ is measured."""
    base, _ = pretrained(BASE, scale, verbose=False)
    cases, samples = ValidationSizes.for_scale(scale).reward
    config = PrepareConfig.for_scale(scale).reward_model
    return collect_labelled(
        base, cases, VALIDATION_SEED, samples, sde_steps=config.sde_steps, window=config.sde_window
    )


def reward_fn(spec: ArmSpec, scale: str) -> RewardFn:
    """The reward an arm trains on: the oracle, or SFReward-tiny from its checkpoint."""
    return _reward(spec, scale, "cpu")[0]


def _reward(spec: ArmSpec, scale: str, device: torch.device | str) -> tuple[RewardFn, dict[str, str]]:
    """:func:`reward_fn` with SFReward-tiny on ``device``, and the weights hash it binds the arm to."""
    if spec.reward == "oracle":
        return R.region_rewards, {}
    net, meta = pretrained(REWARD_MODEL, scale, verbose=False)
    return SFRewardTiny(net.to(device)), {"reward_model": meta.weights_hash}


def _on(model: Editor, device: torch.device) -> Editor:
    """``model`` itself when it is on ``device``, else a copy there."""
    return model if next(model.parameters()).device == device else copy.deepcopy(model).to(device)


# --------------------------------------------------------------------------------------------
# training


def train_model(name: str, scale: str, *, progress: bool = True) -> tuple[dict[str, Tensor], SFGMeta]:
    """Train ``name`` at ``scale`` (the reward model and the arms from the base of :func:`pretrained`) on
    :func:`~neurips26.train.choose_device`'s device (the base data-parallel under torchrun, the others in
    one process); its float16 state (the adapters only, for an arm) and sidecar (metrics measured on the
    float16 weights, on the CPU, where the registry re-measures them)."""
    spec = arm_spec(name)
    config = PrepareConfig.for_scale(scale)
    device = choose_device()
    start = time.perf_counter()
    bound: dict[str, str] = {}
    rl_dict: dict[str, Any] = {}
    reward_dict: dict[str, Any] = {}
    if spec.kind == "base":
        editor, losses = pretrain(config.pretraining, progress=progress, device=device)
        curves = {"loss": losses}
        state = half_state(editor)
        editor_dict = asdict(editor.config)
    else:
        base, base_meta = pretrained(BASE, scale, verbose=progress)  # on the CPU
        trainer = _on(base, device)
        bound["base"] = base_meta.weights_hash
        editor_dict = asdict(base.config)
        if spec.kind == "reward-model":
            reward, _, losses = fit_sfreward(trainer, config.reward_model)
            curves = {"loss": losses}
            state = half_state(reward.net)
            reward_dict = asdict(config.reward_model)
        else:
            reward_of_arm, reward_bound = _reward(spec, scale, device)
            bound.update(reward_bound)
            rl = config.arm_config(spec)
            rl_dict = asdict(rl)
            run = run_rl(trainer, rl, reward_fn=reward_of_arm, progress=progress)
            h = run.history
            curves = {
                "reward": h.reward,
                "kl": h.kl,
                "approx_kl": h.approx_kl,
                "clip_fraction": h.clip_fraction,
                "probe_iteration": [float(i) for i, _ in h.probe],
                "probe_success": [s for _, s in h.probe],
                **{f"region_reward_{k}": [r[k] for r in h.region_reward] for k in range(4)},
            }
            full = half_state(run.editor)
            state = {k: full[k] for k in _adapter_keys(run.editor)}
    seconds = time.perf_counter() - start
    stub = SFGMeta(
        name=name,
        config_hash="",
        source="",
        editor=editor_dict,
        rl=rl_dict,
        reward_model=reward_dict,
        base=bound.get("base", ""),
        reward=bound.get("reward_model", ""),
    )
    trained_from = None if spec.kind == "base" else base
    metrics = validation_metrics(
        name, build_model(name, scale, stub, state, trained_from=trained_from), scale
    )
    every = {k: max(1, len(v) // 300) for k, v in curves.items()}
    meta = SFGMeta(
        name=name,
        config_hash=expected_hash(name, scale, bound),
        source=source_fingerprint(SOURCE_FILES),
        editor=editor_dict,
        spec={**asdict(spec), "parameters": sum(v.numel() for v in state.values())},
        rl=rl_dict,
        reward_model=reward_dict,
        metrics=metrics,
        curves={k: [float(x) for x in v[:: every[k]]] for k, v in curves.items()},
        base=bound.get("base", ""),
        reward=bound.get("reward_model", ""),
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def _bound(name: str, scale: str) -> dict[str, str]:
    """The weights hashes ``name`` is trained from, as they are now."""
    spec = arm_spec(name)
    if spec.kind == "base":
        return {}
    bound = {"base": pretrained(BASE, scale, verbose=False)[1].weights_hash}
    if spec.reward == REWARD_MODEL:
        bound["reward_model"] = pretrained(REWARD_MODEL, scale, verbose=False)[1].weights_hash
    return bound


def _expected(name: str, scale: str) -> str:
    return expected_hash(name, scale, _bound(name, scale))


def _trained(name: str, scale: str, verbose: bool) -> tuple[dict[str, Tensor], SFGMeta]:
    key = {
        "hash": _expected(name, scale),
        "source": source_fingerprint(SOURCE_FILES),
        "train": cache_key("source", None, "neurips26.train"),
    }
    return cached(
        f"spatialflow_grpo-model-{name}-{scale}",
        key,
        lambda: train_model(name, scale, progress=verbose),
        package="neurips26.spatialflow_grpo",
        verbose=verbose,
    )


REGISTRY = Registry(
    chapter="spatialflow_grpo",
    package_dir=PACKAGE_DIR,
    names=ARM_NAMES,
    meta_class=SFGMeta,
    expected_hash=_expected,
    build=build_model,
    measure=lambda name, scale, model: validation_metrics(name, model, scale),
    train=_trained,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)
"""The chapter's models in the :class:`~neurips26.checkpoint_files.Registry`."""

checkpoint_dir = REGISTRY.checkpoint_dir
load_checkpoint = REGISTRY.load
pretrained = REGISTRY.pretrained


def prepare(
    scale: str = "smoke",
    *,
    only: Sequence[str] | None = None,
    out: Path | str | None = None,
    progress: bool = True,
) -> list[SFGMeta]:
    """Train and write the models at ``scale`` (the base first) into ``out``; fresh ones are kept.

    Below and above the shipped scale the models are trained through the results cache (:func:`_trained`),
    where an arm's :func:`pretrained` base and reward model are then found when ``out`` is not the scale's
    checkpoint directory (rather than trained a second time)."""

    def train(name: str) -> tuple[dict[str, Tensor], SFGMeta]:
        if scale == REGISTRY.shipped_scale:
            return train_model(name, scale, progress=progress)
        return _trained(name, scale, progress)

    return REGISTRY.write(
        REGISTRY.chosen(only),
        scale,
        checkpoint_dir(scale) if out is None else out,
        train,
        max_total=MAX_TOTAL_BYTES,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.spatialflow_grpo.prepare --scale smoke|default|paper [--only NAME]...``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.spatialflow_grpo.prepare",
        description="Pretrain the base editor and run the RL arms of chapter 08.",
        models=ARMS,
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.spatialflow_grpo.prepare``, which a later process can read back.
    from neurips26.spatialflow_grpo import prepare as _importable

    sys.exit(_importable.main())


__all__ = [
    "ARMS",
    "ARM_NAMES",
    "PAPER_EDITOR",
    "PAPER_PRETRAINING",
    "PAPER_REWARD_MODEL",
    "PAPER_RL",
    "REGISTRY",
    "ArmSpec",
    "PrepareConfig",
    "SFGMeta",
    "ValidationSizes",
    "pretrained",
    "prepare",
    "trial_caps",
]
