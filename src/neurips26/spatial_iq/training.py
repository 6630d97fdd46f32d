"""The four training conditions of the paper's Table 4, at toy scale.

- **backbone** (the zero-shot model's stand-in): brief multi-task SFT, one question per example over all
  twelve questions (the rotation questions with their two images), a plain answer each;
- **SFT-plain**: the backbone fine-tuned on the total question only, answer = the integer;
- **SFT-CoT**: the backbone fine-tuned on the total question only, answer = the chain of sub-answers in the
  released order, then the total (:func:`~neurips26.spatial_iq.tokens.chain_answer`);
- **DAPO-tight-lite**: SFT-CoT on 10 % of the views (the warm-up), then GRPO with the DAPO recipe on the
  other 90 %, rewarding the total only (:func:`reward`): ``r = 0.1 g + 0.9 g max(0, 1 - |n̂ - n| / 4)`` with
  the format gate ``g`` (a well-formed ``ANSWER n EOS`` ending; the distance shaping is ours, the
  released one lives in NeMo-RL), leave-one-out advantages over the group's std, the clip-higher
  surrogate ``clip(ρ, 0.8, 1.28)``, a token-level mean, a k3 KL penalty of 0.05 to the warm-up policy
  (log-ratio clamped to ±20, the penalty to 10), dynamic sampling (a group whose rewards are all equal
  is replaced, up to 10 extra draws), temperature 1.

A GRPO step draws 8 prompts x 8 replies from the current policy and takes ``updates`` optimiser steps
on minibatches of them, so later minibatches see ratios away from 1 and the clip acts.

Both loops are our own (:func:`sft` keeps its AdamW with weight decay on every parameter and its schedule,
which :func:`neurips26.train.fit` does not reproduce) and train in one process, not data-parallel, on the
device the model is on: every tensor they make lives there or is moved there by the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from neurips26.progress import progress as progress_bar
from neurips26.rl import clipped_surrogate, group_advantages
from neurips26.seeding import sub_seed
from neurips26.spatial_iq.dataset import ViewSet
from neurips26.spatial_iq.tasks import TASKS
from neurips26.spatial_iq.tokens import (
    PAD,
    chain_answer,
    plain_answer,
    question,
    read_answer,
    well_formed,
)
from neurips26.spatial_iq.vlm import TinyVLM, VLMConfig, answer_loss, completion_logprobs, generate
from neurips26.train.device_check import check_first_step
from neurips26.validation import check_choice, check_float, check_int

TARGETS = ("multitask", "plain", "cot")
#: Questions shown with two images.
PAIRED = ("T2a", "T2b")
SINGLE = tuple(t for t in TASKS if t not in PAIRED)


@dataclass(frozen=True)
class SFTRecipe:
    """Supervised fine-tuning: steps, batch, learning rate, seed."""

    steps: int = 1000
    batch: int = 64
    lr: float = 2e-3
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=0)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)


@dataclass(frozen=True)
class GRPOConfig:
    """The DAPO-style GRPO recipe (module doc); ``lr`` is ours (toy scale)."""

    steps: int = 500
    prompts: int = 8
    group: int = 8
    updates: int = 2
    lr: float = 1e-4
    eps_low: float = 0.2
    eps_high: float = 0.28
    kl: float = 0.05
    temperature: float = 1.0
    extra_draws: int = 10
    format_weight: float = 0.1
    distance_scale: float = 4.0
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=0)
        check_int("group", self.group, minimum=2)
        check_int("prompts", self.prompts, minimum=1)
        check_int("updates", self.updates, minimum=1)
        if (self.prompts * self.group) % self.updates:
            raise ValueError("updates must divide prompts * group")


@dataclass
class TrainLog:
    """Loss per step (SFT) or, for GRPO, mean reward, exact-total rate, KL, clip fraction, extra draws."""

    loss: list[float] = field(default_factory=list)
    reward: list[float] = field(default_factory=list)
    exact: list[float] = field(default_factory=list)
    kl: list[float] = field(default_factory=list)
    clipped: list[float] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)


def images_for(data: ViewSet, rows: np.ndarray, task: str) -> Tensor:
    """(B, n, S, S, 3) images of ``rows``: the view, and for rotation questions its partner after it."""
    first = data.images[rows]
    if task in PAIRED:
        return torch.as_tensor(np.stack([first, data.images[data.partner[task][rows]]], axis=1))
    return torch.as_tensor(first[:, None])


def _pad(seqs: list[list[int]]) -> Tensor:
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [PAD] * (width - len(s)) for s in seqs])


def _batch(data: ViewSet, rows: np.ndarray, tasks: list[str], target: str) -> tuple[Tensor, Tensor, Tensor]:
    """Images, questions and padded answers; one question per row (all paired or all single-image)."""
    labels = [data.labels[int(r)] for r in rows]
    if target == "cot":
        answers = [chain_answer(lab.answers) for lab in labels]
    else:
        answers = [plain_answer(lab[t]) for lab, t in zip(labels, tasks, strict=True)]
    prompt = torch.tensor([question(t) for t in tasks])
    if tasks[0] in PAIRED:
        partner = np.array([data.partner[t][r] for t, r in zip(tasks, rows, strict=True)])
        images = torch.as_tensor(np.stack([data.images[rows], data.images[partner]], axis=1))
    else:
        images = torch.as_tensor(data.images[rows][:, None])
    return images, prompt, _pad(answers)


def cosine_schedule(step: int, steps: int, warmup: float = 0.05) -> float:
    """The learning-rate factor: a linear warm-up over the first 5 % of the steps, then a cosine to 0.1."""
    ramp = max(1, round(warmup * steps))
    if step < ramp:
        return (step + 1) / ramp
    done = (step - ramp) / max(1, steps - ramp)
    return 0.1 + 0.45 * (1.0 + float(np.cos(np.pi * min(done, 1.0))))


def _batch_loss(model: TinyVLM, batch: tuple[Tensor, Tensor, Tensor]) -> Tensor:
    """:func:`answer_loss` of one ``(images, prompt, answer)`` batch."""
    return answer_loss(model, *batch)


def sft(
    model: TinyVLM,
    data: ViewSet,
    target: str,
    recipe: SFTRecipe,
    *,
    rows: np.ndarray | None = None,
    progress: bool = False,
) -> TrainLog:
    """Fine-tune ``model`` in place: ``target`` "multitask" (every question, plain answers), "plain" (the
    total, plain) or "cot" (the total, chain of thought), on ``rows`` of ``data`` (default all). One process,
    on the model's device (the batches are moved there by the model's forward and :func:`answer_loss`)."""
    target = check_choice("target", target, TARGETS)
    pool = np.arange(len(data)) if rows is None else np.asarray(rows)
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_schedule(s, recipe.steps))
    log = TrainLog()
    model.train()
    for step in progress_bar(range(recipe.steps), desc=f"SFT ({target})", show=progress):
        rng = np.random.default_rng(sub_seed(recipe.seed, 155, step))
        chosen = pool[rng.integers(0, len(pool), recipe.batch)]
        if target != "multitask":
            tasks = ["T1"] * recipe.batch
        else:  # every question in proportion: a two-image batch 2 times in 12, else single-image ones mixed
            group = PAIRED if rng.random() < len(PAIRED) / len(TASKS) else SINGLE
            tasks = [group[int(i)] for i in rng.integers(0, len(group), recipe.batch)]
        images, prompt, answer = _batch(data, chosen, tasks, target)
        if step == 0:  # a trial run on the CPU tries the step on the meta device
            check_first_step(model, _batch_loss, (images, prompt, answer), desc=f"SFT ({target})")
        loss = answer_loss(model, images, prompt, answer)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        log.loss.append(float(loss.detach()))
    model.eval()
    return log


def reward(tokens: Tensor, truth: np.ndarray, config: GRPOConfig) -> np.ndarray:
    """``0.1 g + 0.9 g max(0, 1 - |n̂ - n| / 4)`` per reply (B, A) with the format gate ``g`` (module doc)."""
    out = np.zeros(len(truth))
    for i, row in enumerate(tokens.tolist()):
        if not well_formed(row):
            continue
        guess = int(read_answer(row, "T1"))
        shaped = max(0.0, 1.0 - abs(guess - int(truth[i])) / config.distance_scale)
        out[i] = config.format_weight + (1.0 - config.format_weight) * shaped
    return out


def k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    """The k3 estimator of KL(π‖π_ref) per token, ``e^d − d − 1`` with ``d = log π_ref − log π`` clamped to
    ±20 and the result to ≤ 10 (as NeMo-RL clamps it)."""
    d = (ref_logp - logp).clamp(-20.0, 20.0)
    return (torch.exp(d) - d - 1.0).clamp(max=10.0)


def grpo(
    model: TinyVLM,
    reference: TinyVLM,
    data: ViewSet,
    rows: np.ndarray,
    config: GRPOConfig,
    *,
    progress: bool = False,
) -> TrainLog:
    """DAPO-style GRPO on the total question (module doc); ``model`` is updated in place, ``reference``
    (the warm-up policy, on the same device) stays frozen. One process, on the model's device: the replies
    are sampled there with a generator of that device, and the advantages are moved there."""
    if not isinstance(reference, TinyVLM):
        raise TypeError(f"reference must be a TinyVLM; got {type(reference).__name__}")
    rows = np.asarray(rows)
    reference.eval()
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
    log = TrainLog()
    device = model.device
    noise = torch.Generator(device=device).manual_seed(sub_seed(config.seed, 156))
    truth = data.truth["T1"]
    prompt_one = question("T1")
    for step in progress_bar(range(config.steps), desc="GRPO", show=progress):
        rng = np.random.default_rng(sub_seed(config.seed, 157, step))
        kept: list[tuple[np.ndarray, Tensor, np.ndarray]] = []  # (rows, replies, rewards) per group
        draws = 0
        model.eval()
        while len(kept) < config.prompts and draws <= config.extra_draws:
            need = config.prompts - len(kept)
            chosen = rows[rng.integers(0, len(rows), need)]
            rep = np.repeat(chosen, config.group)
            images = images_for(data, rep, "T1")
            prompt = torch.tensor([prompt_one] * len(rep))
            replies = generate(
                model, images, prompt, strategy="temperature", temperature=config.temperature, generator=noise
            )
            r = reward(replies, truth[rep], config).reshape(need, config.group)
            for g in range(need):
                if r[g].std() > 0 or draws == config.extra_draws:
                    sl = slice(g * config.group, (g + 1) * config.group)
                    kept.append((rep[sl], replies[sl], r[g]))
            draws += 1
        kept = kept[: config.prompts]
        rep = np.concatenate([k[0] for k in kept])
        width = max(k[1].shape[1] for k in kept)
        replies = torch.cat(
            [torch.nn.functional.pad(k[1], (0, width - k[1].shape[1]), value=PAD) for k in kept]
        )
        rewards = torch.as_tensor(np.stack([k[2] for k in kept]), dtype=torch.float32)
        adv = group_advantages(rewards, leave_one_out=True, clip=None).reshape(-1).to(device)
        images = images_for(data, rep, "T1")
        prompt = torch.tensor([prompt_one] * len(rep))
        with torch.no_grad():
            old = completion_logprobs(model, images, prompt, replies)
            ref = completion_logprobs(reference, images, prompt, replies)
        mask = (replies != PAD).float()
        model.train()
        order = np.random.default_rng(sub_seed(config.seed, 158, step)).permutation(len(rep))
        kls, clips = [], []
        for part in np.array_split(order, config.updates):
            idx = torch.as_tensor(part)
            logp = completion_logprobs(model, images[idx], prompt[idx], replies[idx])
            log_ratio = (logp - old[idx]) * mask[idx]
            surrogate = clipped_surrogate(log_ratio, adv[idx, None], config.eps_low, config.eps_high)
            kl = k3(logp, ref[idx]) * mask[idx]
            tokens = mask[idx].sum()
            loss = -(surrogate * mask[idx]).sum() / tokens + config.kl * kl.sum() / tokens
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            ratio = torch.exp(log_ratio.detach())
            outside = ((ratio < 1 - config.eps_low) | (ratio > 1 + config.eps_high)).float() * mask[idx]
            kls.append(float(kl.detach().sum() / tokens))
            clips.append(float(outside.detach().sum() / tokens))
        model.eval()
        log.loss.append(float(loss.detach()))
        log.reward.append(float(rewards.mean()))
        exact = [
            int(read_answer(row, "T1")) == int(truth[i]) for row, i in zip(replies.tolist(), rep, strict=True)
        ]
        log.exact.append(float(np.mean(exact)))
        log.kl.append(float(np.mean(kls)))
        log.clipped.append(float(np.mean(clips)))
        log.draws.append(draws)
    return log


def new_model(config: VLMConfig | None = None, *, seed: int = 0) -> TinyVLM:
    torch.manual_seed(seed)
    return TinyVLM(config).eval()


def warmup_split(n: int, fraction: float = 0.1, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint (warm-up, RL) view indices: ``fraction`` of the views for the warm-up, the rest for RL."""
    order = np.random.default_rng(seed).permutation(n)
    cut = max(1, round(fraction * n))
    return np.sort(order[:cut]), np.sort(order[cut:])


__all__ = [
    "PAIRED",
    "TARGETS",
    "GRPOConfig",
    "SFTRecipe",
    "TrainLog",
    "grpo",
    "images_for",
    "k3",
    "new_model",
    "reward",
    "sft",
    "warmup_split",
]
