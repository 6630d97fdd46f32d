"""The chapter's trained models: the target, a table of drafters, their training and checkpoints (chapter 10).

``python -m neurips26.specblock.prepare --scale default`` trains the target (:mod:`.target_checkpoint`) and
every drafter of :data:`MODELS` on the distillation data of that target, and writes float16 checkpoints
into ``src/neurips26/specblock/checkpoints/`` (package data); ``--scale smoke`` trains tiny versions in
seconds into the user cache (CI runs it), ``--only NAME`` (repeatable) restricts the run. The experiments
get the target through :func:`target_for` (the committed checkpoint at default when fresh, else trained
through the cache) and a drafter through :func:`pretrained`, the rule of the chapter's
:class:`~neurips26.checkpoint_files.Registry` (:data:`REGISTRY`): the checkpoint of the drafter's scale
when it is there and fresh, otherwise the same training through :func:`neurips26.cache.cached`, so the
notebooks run before the checkpoints exist, only slower.

Choices [ours], all for the CPU budget (a SpecBlock drafter takes ~75 s per 150 steps on 2 cores):

- every drafter learns from ONE distillation set: the greedy responses (96 tokens) of the default target to
  600 prompts of the domains "code" and "dialogue" only (300 each; the domain-shift claim D8 needs a domain,
  arithmetic, the drafters never saw), prompt seed 1 (the target trained on documents of seed 0);
  validation: 64 further prompts of the same two domains, seed 2;
- one seed (0) for every drafter, so rows differ only in what the table says;
- SpecBlock variants: 300 steps, batch 16, window 48, Adam 3e-3, 3 TTT blocks (1 for "specblock-1block"),
  SwiGLU ratio 1.5 (the library default 2.0 gives 0.52M parameters, 1.04 MB in float16, over the 1 MB
  budget of a checkpoint); EAGLE-3 and Medusa with their library defaults (75 and 150 steps);
- checkpoints hold float16 weights WITHOUT the frozen token embedding (SpecBlock, EAGLE-3) and the frozen
  final norm (Medusa) copied from the target: they are rebuilt from the target at load time.

A drafter checkpoint is fresh when today's table and sizes hash as recorded, it was trained for the target
in use (:func:`~neurips26.specblock.target_checkpoint.target_identity`: the shipped target's weights hash),
its state dict fits today's drafter exactly, and it reproduces the validation metrics recorded beside it
on the recorded validation data (the shipped target's recorded responses) within relative
:data:`~neurips26.checkpoint_files.METRIC_RTOL`. Otherwise it is stale
(:class:`~neurips26.checkpoint_files.StaleCheckpointError`). No check reads source bytes: a comment in a
shared module leaves every checkpoint fresh; a changed forward does not.

``--scale paper`` trains the same target and table at :data:`PAPER` into the user cache, on the device
:func:`~neurips26.train.choose_device` picks. The paper drafts for Llama-3.1-8B-Instruct and Qwen3-8B,
trained on ShareGPT and UltraChat prompts with regenerated answers (K = 4, two drafter layers, three TTT
blocks, 20 epochs) and evaluates six benchmarks at 1,024 new tokens; none of that exists offline. So
``paper`` is the largest run our procedural corpus supports: a target of 5.3 M parameters (8 layers,
width 256, :data:`~neurips26.specblock.target.PAPER_TARGET`) trained on ~35 M tokens for ~2.3 epochs, the
drafters sized by it (SpecBlock 1.7 M, EAGLE-3 1.1 M, Medusa 0.35 M parameters) and distilled from its
greedy answers to 4,000 prompts; SpecBlock for 4,000 steps of 32 windows of 96 rows, EAGLE-3 and Medusa
for 2,000 steps of 32 sequences. About 20 min on one H100 (an estimate, not measured). ``torchrun
--nproc_per_node=N -m neurips26.specblock.prepare --scale paper`` trains the target, EAGLE-3 and Medusa
data-parallel; the SpecBlock drafters train in one process (their training-time-test loop is not
:func:`~neurips26.train.fit`), so every rank trains the same drafter and rank 0 writes it. ``--trial``
(:func:`neurips26.scales.trial_run`) trains every model for one update on 4 prompts of 8 tokens and a
20-document corpus (:func:`trial_caps`).
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

import neurips26
from neurips26.cache import cache_key, cached
from neurips26.checkpoint_files import (
    FORMAT,
    CheckpointError,
    Registry,
    Sidecar,
    StaleCheckpointError,
    check_directory_budget,
    check_layout,
    committed_form,
    config_hash,
    half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
    write_within_budget,
)
from neurips26.nn.transformer import Decoder
from neurips26.scales import pick, trial_run
from neurips26.specblock.baselines.eagle3 import Eagle3Drafter, train_eagle3
from neurips26.specblock.baselines.medusa import MedusaHeads, train_medusa
from neurips26.specblock.data import DOMAINS, DistillData, prompts, tokenizer
from neurips26.specblock.drafter import SpecBlockConfig, SpecBlockDrafter
from neurips26.specblock.protocol import fused_features
from neurips26.specblock.target import (
    EOS_ID,
    PAPER_TARGET,
    TARGET_GROWTH_FIELDS,
    TargetConfig,
    distill,
    teacher_outputs,
)
from neurips26.specblock.target_checkpoint import (
    TARGET_NAME,
    TargetMeta,
    load_target,
    make_checkpoint,
    target_identity,
    trained_target,
)
from neurips26.specblock.train_drafter import DrafterTraining, train_specblock
from neurips26.train.device import choose_device
from neurips26.validation import check_choice, check_float, check_int, check_seed

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.specblock``."""

KINDS = ("specblock", "eagle3", "medusa")
GAMMA = 0.8
"""Slot/step weight γ^k of the validation loss (as in training)."""

_NN = (("neurips26.nn", "embeddings.py"), ("neurips26.specblock", "swiglu.py"))
SOURCE_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "specblock": (
        ("neurips26.specblock", "drafter.py"),
        ("neurips26.specblock", "rank_head.py"),
        *_NN,
    ),
    "eagle3": (
        ("neurips26.specblock", "baselines/eagle3.py"),
        ("neurips26.specblock", "baselines/_common.py"),
        ("neurips26.nn", "attention.py"),
        *_NN,
    ),
    "medusa": (
        ("neurips26.specblock", "baselines/medusa.py"),
        ("neurips26.specblock", "baselines/_common.py"),
    ),
}
"""Per drafter kind, the modules whose code decides what a stored state dict computes."""

DROPPED: dict[str, tuple[str, ...]] = {
    "specblock": ("embedding",),
    "eagle3": ("embedding.weight",),
    "medusa": ("norm.weight",),
}
"""Frozen entries copied from the target, left out of a checkpoint and rebuilt from the target at load."""


# --------------------------------------------------------------------------------------------
# the table of models


@dataclass(frozen=True)
class ModelSpec:
    """One drafter of the chapter: ``kind`` and the SpecBlock ablation flags (the ablations of 03-claims).

    ``shift``: the layer-wise shift; ``ttt_blocks``: blocks unrolled in training; ``valid_prefix``: the
    chain mask. EAGLE-3 and Medusa rows keep the defaults (the flags do not apply to them).
    """

    name: str
    kind: str = "specblock"
    shift: bool = True
    ttt_blocks: int = 3
    valid_prefix: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or any(c in self.name for c in "/\\"):
            raise ValueError(f"name must be a non-empty str without path separators; got {self.name!r}")
        check_choice("kind", self.kind, KINDS)
        for flag in ("shift", "valid_prefix"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be a bool; got {type(getattr(self, flag)).__name__}")
        check_int("ttt_blocks", self.ttt_blocks, minimum=1, maximum=8)
        if self.kind != "specblock" and (not self.shift or self.ttt_blocks != 3 or not self.valid_prefix):
            raise ValueError(f"shift, ttt_blocks and valid_prefix apply to kind 'specblock' only; got {self}")


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("specblock"),
    ModelSpec("specblock-noshift", shift=False),
    ModelSpec("specblock-1block", ttt_blocks=1),
    ModelSpec("specblock-noprefix", valid_prefix=False),
    ModelSpec("eagle3", kind="eagle3"),
    ModelSpec("medusa", kind="medusa"),
)
MODEL_NAMES: tuple[str, ...] = tuple(spec.name for spec in MODELS)
ALL_NAMES: tuple[str, ...] = (TARGET_NAME, *MODEL_NAMES)
"""Every checkpoint of the chapter: the target, then the drafters of :data:`MODELS`."""


def model_spec(name: str) -> ModelSpec:
    """The row of :data:`MODELS` called ``name`` (``ValueError`` naming ``name`` otherwise)."""
    check_choice("name", name, MODEL_NAMES)
    return MODELS[MODEL_NAMES.index(name)]


@dataclass(frozen=True)
class PrepareConfig:
    """Sizes shared by every drafter of the table (one distillation set, one seed, equal budgets).

    ``target``: the target's config; ``domains``: distillation domains; ``prompts``: distillation prompts
    (split evenly over ``domains``), ``new_tokens`` greedy tokens each, prompt seed ``prompt_seed``;
    ``val_prompts`` held-out prompts (seed ``val_seed``) for the validation metric; SpecBlock: ``steps``,
    ``batch``, ``window``, ``lr``, ``mlp_ratio``; EAGLE-3/Medusa: ``eagle_steps``/``medusa_steps`` and
    ``eagle_batch``/``medusa_batch`` (sequences per step); ``seed``: weights, batches and TTT draws of every
    drafter. The fields of :data:`GROWTH_FIELDS` came with the ``paper`` scale: at their defaults they are
    left out of the configuration hash (:func:`expected_hash`), so the committed checkpoints stay fresh.
    """

    target: TargetConfig = field(default_factory=TargetConfig)
    domains: tuple[str, ...] = ("code", "dialogue")
    prompts: int = 600
    new_tokens: int = 96
    prompt_seed: int = 1
    val_prompts: int = 64
    val_seed: int = 2
    steps: int = 300
    batch: int = 16
    window: int = 48
    lr: float = 3e-3
    mlp_ratio: float = 1.5
    eagle_steps: int = 75
    medusa_steps: int = 150
    seed: int = 0
    eagle_batch: int = 8
    medusa_batch: int = 16

    def __post_init__(self) -> None:
        if not isinstance(self.target, TargetConfig):
            raise TypeError(f"target must be a TargetConfig; got {type(self.target).__name__}")
        if not isinstance(self.domains, tuple) or not self.domains:
            raise TypeError(f"domains must be a non-empty tuple of domain names; got {self.domains!r}")
        for d in self.domains:
            check_choice("domains", d, DOMAINS)
        check_int("prompts", self.prompts, minimum=len(self.domains))
        check_int("new_tokens", self.new_tokens, minimum=4)
        check_seed("prompt_seed", self.prompt_seed)
        check_int("val_prompts", self.val_prompts, minimum=len(self.domains))
        check_seed("val_seed", self.val_seed)
        if self.val_seed == self.prompt_seed or self.target.seed in (self.prompt_seed, self.val_seed):
            raise ValueError(
                "prompt_seed, val_seed and target.seed must differ (held-out prompts); "
                f"got {self.prompt_seed}, {self.val_seed}, {self.target.seed}"
            )
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_int("window", self.window, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        check_int("eagle_steps", self.eagle_steps, minimum=1)
        check_int("medusa_steps", self.medusa_steps, minimum=1)
        check_seed("seed", self.seed)
        check_int("eagle_batch", self.eagle_batch, minimum=1)
        check_int("medusa_batch", self.medusa_batch, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        """smoke: the smoke target, 24 prompts × 16 tokens, a few steps; default: the table above; paper:
        :data:`PAPER`. A trial run (:func:`~neurips26.scales.trial_run`) applies :func:`trial_caps`."""
        config = pick(
            scale,
            smoke=cls(
                target=TargetConfig.for_scale("smoke"),
                prompts=24,
                new_tokens=16,
                val_prompts=8,
                steps=4,
                batch=4,
                window=12,
                eagle_steps=3,
                medusa_steps=3,
            ),
            default=cls(),
            paper=PAPER,
        )
        return trial_caps(config) if trial_run() else config


PAPER = PrepareConfig(
    target=PAPER_TARGET,
    prompts=4000,
    steps=4000,
    batch=32,
    window=96,
    eagle_steps=2000,
    medusa_steps=2000,
    eagle_batch=32,
    medusa_batch=32,
)
"""The ``paper`` scale (module docstring): the paper target, 4,000 distillation prompts, and budgets of
128 k SpecBlock windows and 64 k EAGLE-3/Medusa sequences (~32 and ~16 epochs of the prompts)."""


def trial_caps(config: PrepareConfig) -> PrepareConfig:
    """``config`` cut to a trial run: the target trained for one update of 2 windows of 32 tokens (no
    warm-up) on 20 documents and validated on 2 windows; 4 distillation prompts of 8 new tokens and 2
    validation prompts; one update of every drafter (SpecBlock on 2 windows of 8 rows, EAGLE-3 and Medusa
    on 4 sequences). Every network keeps ``config``'s sizes."""
    target = dataclasses.replace(
        config.target, steps=1, warmup=0, batch=2, seq_len=32, documents=20, val_windows=2
    )
    return dataclasses.replace(
        config,
        target=target,
        prompts=4,
        new_tokens=8,
        val_prompts=2,
        steps=1,
        batch=2,
        window=8,
        eagle_steps=1,
        medusa_steps=1,
        eagle_batch=4,
        medusa_batch=4,
    )


GROWTH_FIELDS: dict[str, Any] = {"eagle_batch": 8, "medusa_batch": 16}
"""Fields of :class:`PrepareConfig` added with the ``paper`` scale, and the values the committed checkpoints
were trained with (the functions' defaults then): at these values a field is left out of the hash."""


def expected_hash(spec: ModelSpec, config: PrepareConfig) -> str:
    """:func:`~neurips26.checkpoint_files.config_hash` of everything that trains ``spec`` under ``config``.

    ``config`` enters as its :func:`~neurips26.checkpoint_files.committed_form`, without the
    :data:`GROWTH_FIELDS` (and the target's :data:`~neurips26.specblock.target.TARGET_GROWTH_FIELDS`) that
    hold their committed values, so the default hashes are those recorded before the fields existed."""
    form = committed_form(config, GROWTH_FIELDS)
    form["target"] = committed_form(config.target, TARGET_GROWTH_FIELDS)
    return config_hash({"model": spec, "prepare": form, "format": FORMAT})


# --------------------------------------------------------------------------------------------
# the sidecar


@dataclass(frozen=True)
class DrafterMeta(Sidecar):
    """The sidecar of a drafter checkpoint (``NAME.json``).

    name, kind; config_hash: :func:`expected_hash`; source: fingerprint of :data:`SOURCE_FILES` of the kind
    (information, shown when the behaviour check fails); target_hash: the
    :func:`~neurips26.specblock.target_checkpoint.target_identity` of the target it was trained for (checked);
    model: the drafter's config fields; spec: the training description; metrics: validation numbers measured
    with the float16 weights on the recorded held-out distillation data (``val_loss`` and ``acc{k}``, the
    behaviour check); curves: the logged training loss; weights_hash, version, torch, train_seconds, format.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "kind", "config_hash", "source", "target_hash")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("model", "spec", "metrics", "curves")

    name: str
    kind: str
    config_hash: str
    source: str
    target_hash: str
    model: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def check_target(meta: DrafterMeta, target: Decoder) -> None:
    """:class:`StaleCheckpointError` unless ``meta``'s drafter was trained for ``target``'s weights."""
    now = target_identity(target)
    if meta.target_hash != now:
        raise StaleCheckpointError(
            f"checkpoint {meta.name!r} was trained for another target (weights {meta.target_hash}, now {now})"
        )


# --------------------------------------------------------------------------------------------
# data


def _prompt_list(config: PrepareConfig, n: int, seed: int) -> list[str]:
    per = [n // len(config.domains) + (i < n % len(config.domains)) for i in range(len(config.domains))]
    lists = [prompts(d, k, seed) for d, k in zip(config.domains, per, strict=True)]
    out = []
    for i in range(max(per)):  # interleave the domains
        out.extend(lst[i] for lst in lists if i < len(lst))
    return out


def train_prompts(config: PrepareConfig) -> list[str]:
    """The distillation prompts (``config.prompts``, domains interleaved, seed ``prompt_seed``)."""
    return _prompt_list(config, config.prompts, config.prompt_seed)


def validation_prompts(config: PrepareConfig) -> list[str]:
    """The held-out prompts of the validation metric (``config.val_prompts``, seed ``val_seed``)."""
    return _prompt_list(config, config.val_prompts, config.val_seed)


@lru_cache(maxsize=2)
def _target_and_meta(config: PrepareConfig) -> tuple[Decoder, TargetMeta | None]:
    """The target of ``config`` and, when it is the shipped checkpoint, its sidecar."""
    if config.target == TargetConfig.for_scale("default"):
        try:
            return load_target(config.target, PACKAGE_DIR)
        except CheckpointError as why:
            print(f"[specblock] {why}: training the target instead, kept in the cache")
    return trained_target(config.target), None


def target_for(config: PrepareConfig) -> Decoder:
    """The chapter's target for ``config``: the shipped checkpoint (default scale) when fresh, else trained
    once through the cache and rounded to float16, saying so (kept in memory)."""
    return _target_and_meta(config)[0]


def pretrained_target(scale: str = "default") -> Decoder:
    """The chapter's target at ``scale`` (:func:`target_for` of :meth:`PrepareConfig.for_scale`)."""
    return target_for(PrepareConfig.for_scale(scale))


def forget_targets() -> None:
    """Drop the targets and distillation data kept in memory (after writing a target, between tests)."""
    _target_and_meta.cache_clear()
    distillation.cache_clear()


def on_device(target: Decoder, device: torch.device | str) -> Decoder:
    """``target`` itself when it already lives on ``device``, else a copy moved there (the chapter's target,
    which :func:`target_for` keeps in memory, stays where it is)."""
    if next(target.parameters()).device == torch.device(device):
        return target
    return copy.deepcopy(target).to(device)


def _prompt_ids(texts: Sequence[str]) -> list[list[int]]:
    tok = tokenizer()
    return [tok.encode(text, bos=True) for text in texts]


@lru_cache(maxsize=4)
def distillation(config: PrepareConfig, split: str = "train") -> DistillData:
    """The target's greedy responses and outputs on the ``"train"`` or ``"val"`` prompts (kept in memory).

    The ``"val"`` split of the shipped target uses the responses recorded in its sidecar (teacher forcing),
    so the drafters' validation metrics never hinge on a greedy tie that another CPU breaks differently.
    The ``"train"`` split is decoded on :func:`~neurips26.train.choose_device`'s device (it only feeds
    training); the ``"val"`` split on the CPU, where the recorded metrics are measured. Both come back on
    the CPU.
    """
    check_choice("split", split, ("train", "val"))
    texts = train_prompts(config) if split == "train" else validation_prompts(config)
    target, meta = _target_and_meta(config)
    if split == "val" and meta is not None and len(meta.val_responses) == len(texts):
        return teacher_outputs(target, _prompt_ids(texts), meta.responses())
    if split == "train":
        target = on_device(target, choose_device())
    return distill(target, texts, config.new_tokens, progress=False)


# --------------------------------------------------------------------------------------------
# validation metrics (measured on the float16 weights)


def _soft_ce(student: Tensor, teacher: Tensor) -> Tensor:
    return -(teacher.float().softmax(-1) * student.float().log_softmax(-1)).sum(-1)


@torch.no_grad()
def block_accuracy(drafter: SpecBlockDrafter, data: Any) -> dict[str, Tensor]:
    """First-block slot statistics of a SpecBlock drafter on distillation ``data`` (teacher forcing).

    Row ``i`` (token ``x_{i+1}``, feature ``f_i``), slot ``k`` predicts ``x_{i+2+k}`` and is scored against
    the target's argmax at position ``i+1+k`` wherever ``loss_mask[i+1+k]``. Returns ``(K,)`` tensors:
    ``correct``/``valid`` counts, ``loss`` (mean soft CE per slot), and ``chain_correct``/``chain_valid``:
    slot ``k`` correct among the valid rows whose slots ``< k`` were all valid and correct (claim D7).
    Computed on the drafter's device (``data`` is moved there).
    """
    device = drafter.embedding.device
    tokens, logits, hidden, mask = (
        x.to(device) for x in (data.tokens, data.logits, data.hidden, data.loss_mask)
    )
    t, kk = tokens.shape[1], drafter.config.block_size
    s = t - 1
    was_training = drafter.training
    drafter.eval()
    out = drafter.forward_sequence(fused_features(hidden[:, :s]).to(drafter.embedding.dtype), tokens[:, 1:])
    drafter.train(was_training)
    rows, slots = torch.arange(s, device=device), torch.arange(kk, device=device)
    cols = (rows[:, None] + 1 + slots).clamp(max=t - 1)  # teacher position i+1+k
    inside = (rows[:, None] + 1 + slots) < t
    teacher = logits[:, cols]  # (B, S, K, V)
    valid = mask[:, cols] & inside  # (B, S, K)
    right = (out.logits.argmax(-1) == teacher.argmax(-1)) & valid
    ce = _soft_ce(out.logits, teacher)
    prefix = torch.cumprod(torch.cat([torch.ones_like(right[..., :1]), right[..., :-1]], -1).int(), -1).bool()
    chain_valid = valid & prefix
    return {
        "correct": right.sum((0, 1)).double(),
        "valid": valid.sum((0, 1)).double(),
        "loss": (ce * valid).sum((0, 1)).double() / valid.sum((0, 1)).clamp_min(1).double(),
        "chain_correct": (right & chain_valid).sum((0, 1)).double(),
        "chain_valid": chain_valid.sum((0, 1)).double(),
    }


@torch.no_grad()
def validation_metrics(kind: str, model: nn.Module, data: Any) -> dict[str, float]:
    """``val_loss`` (Σ_k γ^k · mean soft CE of slot/step/head k) and top-1 ``acc{k}`` on held-out ``data``
    (computed on the model's device: ``data`` is moved there)."""
    check_choice("kind", kind, KINDS)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    tokens, logits, hidden, mask = (
        x.to(device) for x in (data.tokens, data.logits, data.hidden, data.loss_mask)
    )
    t = tokens.shape[1]
    if kind == "specblock":
        stats = block_accuracy(model, data)
        losses, acc = stats["loss"], stats["correct"] / stats["valid"].clamp_min(1)
    else:
        if kind == "eagle3":
            outs = model.ttt_forward(fused_features(hidden).to(model.fc.weight.dtype), tokens)
        else:
            outs = list(model(hidden[:, :, -1, :].to(model.norm.weight.dtype)).unbind(-2))
        losses, acc = [], []
        for k, out in enumerate(outs):  # step/head k at row i: teacher at i+1+k
            n = t - 1 - k
            student, teacher, valid = out[:, :n], logits[:, 1 + k :], mask[:, 1 + k :]
            count = valid.sum().clamp_min(1).double()
            losses.append(float((_soft_ce(student, teacher) * valid).sum() / count))
            acc.append(float(((student.argmax(-1) == teacher.argmax(-1)) & valid).sum() / count))
        losses, acc = torch.tensor(losses, dtype=torch.float64), torch.tensor(acc, dtype=torch.float64)
    model.train(was_training)
    weights = torch.tensor([GAMMA**k for k in range(len(losses))], dtype=torch.float64)
    return {"val_loss": float((weights * losses).sum())} | {f"acc{k}": float(a) for k, a in enumerate(acc)}


# --------------------------------------------------------------------------------------------
# building and training


def _specblock_config(spec: ModelSpec, config: PrepareConfig, target: Decoder) -> SpecBlockConfig:
    return SpecBlockConfig.for_target(target, mlp_ratio=config.mlp_ratio, shift=spec.shift)


def _drafter_training(spec: ModelSpec, config: PrepareConfig) -> DrafterTraining:
    """The training recipe of SpecBlock row ``spec`` under ``config`` (the hashed table row and sizes)."""
    return DrafterTraining(
        steps=config.steps,
        batch=config.batch,
        lr=config.lr,
        seed=config.seed,
        ttt_blocks=spec.ttt_blocks,
        valid_prefix=spec.valid_prefix,
        window=config.window,
    )


def build_drafter(meta: DrafterMeta, state: dict[str, Tensor], target: Decoder) -> nn.Module:
    """The drafter of ``meta`` for ``target``: frozen parts rebuilt from ``target``, ``state`` loaded (fp32).

    Every entry of the drafter's state dict must come from ``state`` (float16, today's shapes) except the
    :data:`DROPPED` ones (:class:`~neurips26.checkpoint_files.StaleCheckpointError` otherwise).
    """
    kind = check_choice("kind", meta.kind, KINDS)
    if kind == "specblock":
        fields = dict(meta.model)
        model: nn.Module = SpecBlockDrafter.from_target(target, SpecBlockConfig(**fields))
    elif kind == "eagle3":
        model = Eagle3Drafter(target)
    else:
        model = MedusaHeads(target)
    reference = model.state_dict()
    check_layout(meta.name, state, reference, dropped=DROPPED[kind])
    full = {k: v.to(reference[k].dtype) for k, v in state.items()}
    full.update({k: reference[k] for k in DROPPED[kind]})
    model.load_state_dict(full, strict=True)
    return model.eval()


def train_model(
    spec: ModelSpec, config: PrepareConfig, *, progress: bool = True
) -> tuple[dict[str, Tensor], DrafterMeta]:
    """Train drafter ``spec`` on the distillation data of ``config``; its float16 state and sidecar.

    The sidecar's metrics are measured on the float16 weights (as a loaded checkpoint has them) on the
    held-out validation distillation, on the CPU with the chapter's target, as :data:`REGISTRY` re-measures
    them. The drafter trains on :func:`~neurips26.train.choose_device`'s device, bound to a copy of the
    target there: EAGLE-3 and Medusa through :func:`~neurips26.train.fit` (data-parallel under torchrun),
    SpecBlock in its own loop, in one process.
    """
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a ModelSpec; got {type(spec).__name__}")
    if not isinstance(config, PrepareConfig):
        raise TypeError(f"config must be a PrepareConfig; got {type(config).__name__}")
    target = target_for(config)
    trainer = on_device(target, choose_device())
    data = distillation(config, "train")
    start = time.perf_counter()
    if spec.kind == "specblock":
        model_config = _specblock_config(spec, config, target)
        model, history = train_specblock(
            trainer,
            data,
            _drafter_training(spec, config),
            architecture=model_config,
            show_progress=progress,
        )
        model_fields = dataclasses.asdict(model.config)
        train = {"steps": config.steps, "batch": config.batch, "lr": config.lr, "window": config.window}
    elif spec.kind == "eagle3":
        model, history = train_eagle3(
            trainer,
            data,
            steps=config.eagle_steps,
            batch=config.eagle_batch,
            seed=config.seed,
            progress=progress,
        )
        model_fields = dataclasses.asdict(model.config)
        train = {"steps": config.eagle_steps}
    else:
        model, history = train_medusa(
            trainer,
            data,
            steps=config.medusa_steps,
            batch=config.medusa_batch,
            seed=config.seed,
            progress=progress,
        )
        model_fields = dataclasses.asdict(model.config)
        train = {"steps": config.medusa_steps}
    seconds = time.perf_counter() - start
    state = half_state(model, drop=DROPPED[spec.kind])
    stub = DrafterMeta(
        name=spec.name, kind=spec.kind, config_hash="", source="", target_hash="", model=model_fields
    )
    loaded = build_drafter(stub, state, target)
    metrics = validation_metrics(spec.kind, loaded, distillation(config, "val"))
    every = max(1, len(history.loss) // 100)
    meta = DrafterMeta(
        name=spec.name,
        kind=spec.kind,
        config_hash=expected_hash(spec, config),
        source=source_fingerprint(SOURCE_FILES[spec.kind]),
        target_hash=target_identity(target),
        model=model_fields,
        spec={
            "model": dataclasses.asdict(spec),
            "train": train,
            "parameters": sum(v.numel() for v in state.values()),
            "distillation": {
                "prompts": config.prompts,
                "new_tokens": config.new_tokens,
                "domains": config.domains,
            },
        },
        metrics=metrics,
        curves={"loss_step": [float(s) for s in history.step[::every]], "loss": history.loss[::every]},
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def _build(
    name: str, scale: str, meta: DrafterMeta, state: dict[str, Tensor], *, target: Decoder | None = None
) -> nn.Module:
    """The drafter of ``meta`` for ``target`` (default: ``scale``'s target), checked to be trained for it."""
    target = target_for(PrepareConfig.for_scale(scale)) if target is None else target
    check_target(meta, target)
    return build_drafter(meta, state, target)


def _measure(name: str, scale: str, model: nn.Module) -> dict[str, float]:
    """The validation metrics recorded in the sidecar, re-measured on the recorded validation data."""
    return validation_metrics(
        model_spec(name).kind, model, distillation(PrepareConfig.for_scale(scale), "val")
    )


def _trained(spec: ModelSpec, config: PrepareConfig, verbose: bool) -> tuple[dict[str, Tensor], DrafterMeta]:
    """``train_model(spec, config)``, kept in the user cache (keyed by the table row, sizes and code)."""
    key = {
        "hash": expected_hash(spec, config),
        "train": cache_key("source", None, "neurips26.train"),
        "nn": cache_key("source", None, "neurips26.nn"),
    }
    return cached(
        f"specblock-drafter-{spec.name}",
        key,
        lambda: train_model(spec, config, progress=verbose),
        package="neurips26.specblock",
        verbose=verbose,
    )


REGISTRY = Registry(
    chapter="specblock",
    package_dir=PACKAGE_DIR,
    names=MODEL_NAMES,
    meta_class=DrafterMeta,
    expected_hash=lambda name, scale: expected_hash(model_spec(name), PrepareConfig.for_scale(scale)),
    build=_build,
    measure=_measure,
    train=lambda name, scale, verbose: _trained(model_spec(name), PrepareConfig.for_scale(scale), verbose),
    source_files=lambda name: SOURCE_FILES[model_spec(name).kind],
    atol=1e-6,
)
"""The chapter's drafters in the :class:`~neurips26.checkpoint_files.Registry` (the target is loaded by
:func:`target_for`): the table, the hash of a row at a scale, the target a drafter is bound to, the
validation metrics a checkpoint must reproduce (relative :data:`~neurips26.checkpoint_files.METRIC_RTOL`,
plus ``1e-6`` absolute for accuracies near zero), and the cached training. ``load_checkpoint(name, scale,
target=...)`` checks a drafter against a given target instead of the scale's."""

checkpoint_dir = REGISTRY.checkpoint_dir
load_checkpoint = REGISTRY.load
pretrained = REGISTRY.pretrained


# --------------------------------------------------------------------------------------------
# the command line


def prepare(
    scale: str = "smoke",
    *,
    only: Sequence[str] | None = None,
    out: Path | str | None = None,
    progress: bool = True,
) -> list[Sidecar]:
    """Train the target and the drafters of :data:`MODELS` (or the names in ``only``) at ``scale``; write
    their checkpoints.

    The target comes first: the drafters are then trained for it (at default, for the written package
    checkpoint). ``out`` defaults to :func:`checkpoint_dir` (the package for "default"). At the shipped
    scale (default), whose checkpoints are package data, raises ``RuntimeError`` when a checkpoint or the
    directory exceeds its cap (:func:`~neurips26.checkpoint_files.check_budget`; the target is the one
    checkpoint allowed 2 MB); the other scales write to the user cache uncapped (the paper target takes
    ~10.6 MB).
    """
    config = PrepareConfig.for_scale(scale)
    capped = scale == REGISTRY.shipped_scale
    names = ALL_NAMES if only is None else tuple(check_choice("only", n, ALL_NAMES) for n in only)
    directory = Path(checkpoint_dir(scale) if out is None else out)
    written: list[Sidecar] = []
    if TARGET_NAME in names:
        state, target_meta = make_checkpoint(
            config.target, _prompt_ids(validation_prompts(config)), config.new_tokens, EOS_ID
        )
        write_within_budget(directory, state, target_meta, large=True, capped=capped)
        written.append(target_meta)
        forget_targets()  # the drafters below bind to the target just written
    for name in names:
        if name == TARGET_NAME:
            continue
        state, meta = train_model(model_spec(name), config, progress=progress)
        write_within_budget(directory, state, meta, capped=capped)
        written.append(meta)
    check_directory_budget(directory, len(written), capped=capped)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.specblock.prepare --scale smoke|default|paper [--only NAME]... [--out DIR]``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.specblock.prepare",
        description="Train and write the target and the drafters of chapter 10.",
        models=MODELS,
        extra=(TARGET_NAME,),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.specblock.prepare``, which a later process can read back.
    from neurips26.specblock import prepare as _importable

    sys.exit(_importable.main())
