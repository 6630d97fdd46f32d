"""The frozen system of the chapter: a small multi-task transformer trained on the four behaviours and
the neutral text, then never changed.

A :class:`~neurips26.nn.Decoder` of three layers of width 64 (four heads, MLP 256, rotary positions,
tied embeddings; about 0.17 M parameters) learns, in one run of :func:`neurips26.train.fit`, to answer
the four tasks of :mod:`~neurips26.sparse_control.tasks` at their final position and to predict the next
word of the neutral text. Each update sees a fresh batch of every task (the answer token scored) and of
neutral windows (every next word scored); the loss is their mean.

**Label noise.** In training, a prompt's answer is replaced by one of its other options with probability
:data:`LABEL_NOISE` (0.1). A model trained on clean labels to saturation separates its options by 10–20
nats, far beyond a real language model's few nats, and a control would then have to move the logits by
that much; with the noise, the best the model can do is put about 0.9 on the right option, so its margins
settle near ``log 9 ≈ 2.2`` nats for two options. The evaluation prompts are clean.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.nn import Decoder, DecoderConfig
from neurips26.seeding import sub_seed
from neurips26.sparse_control.tasks import TASKS, PromptSet, make_prompts, neutral_windows
from neurips26.sparse_control.vocabulary import WordTokenizer
from neurips26.train import choose_device, fit

NEUTRAL_LENGTH = 16
LABEL_NOISE = 0.1
CONTEXT = 16


@dataclass(frozen=True)
class ModelSpec:
    """Sizes and training: ``steps`` updates of ``batch`` prompts per task (answers flipped with probability
    ``label_noise``) and ``batch`` neutral windows."""

    width: int = 64
    depth: int = 3
    heads: int = 4
    steps: int = 4000
    batch: int = 32
    lr: float = 3e-3
    label_noise: float = LABEL_NOISE
    seed: int = 0

    def config(self) -> DecoderConfig:
        return DecoderConfig(
            vocab_size=WordTokenizer().vocab_size,
            width=self.width,
            depth=self.depth,
            heads=self.heads,
            context=CONTEXT,
        )


def final_logits(model: Decoder, ids: torch.Tensor) -> torch.Tensor:
    """Logits at the last position of every prompt ``(N, V)``."""
    return model(ids).logits[:, -1]


def noisy_answers(prompts: PromptSet, noise: float, seed: int) -> np.ndarray:
    """The prompts' answers, each replaced with probability ``noise`` by one of its other options."""
    rng = np.random.default_rng(seed)
    answers = prompts.answer.copy()
    for i in np.flatnonzero(rng.random(len(answers)) < noise):
        others = prompts.options[i][prompts.options[i] != answers[i]]
        answers[i] = others[rng.integers(len(others))]
    return answers


def training_batch(spec: ModelSpec, step: int) -> dict[str, torch.Tensor]:
    """One update's data: every task's prompts and answers, and neutral windows."""
    out = {}
    for i, task in enumerate(TASKS):
        p = make_prompts(task, spec.batch, split="train", seed=sub_seed(spec.seed, step, i))
        out[f"{task}-ids"] = torch.from_numpy(p.ids)
        out[f"{task}-answer"] = torch.from_numpy(
            noisy_answers(p, spec.label_noise, sub_seed(spec.seed, step, 50 + i))
        )
    out["neutral"] = torch.from_numpy(
        neutral_windows(spec.batch, NEUTRAL_LENGTH, seed=sub_seed(spec.seed, step, 99))
    )
    return out


def training_loss(model: Decoder, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean of the four tasks' answer cross-entropies and the neutral next-word cross-entropy."""
    losses = [F.cross_entropy(final_logits(model, batch[f"{t}-ids"]), batch[f"{t}-answer"]) for t in TASKS]
    neutral = batch["neutral"]
    logits = model(neutral[:, :-1]).logits
    losses.append(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), neutral[:, 1:].reshape(-1)))
    return torch.stack(losses).mean()


def train_model(spec: ModelSpec, *, progress: bool = False) -> tuple[Decoder, list[float]]:
    """Train the multi-task model from ``spec``'s seed on :func:`~neurips26.train.choose_device`'s device
    (data-parallel under torchrun); returns it frozen (eval mode, no gradients on its weights) and its
    loss curve."""
    model = Decoder(spec.config(), seed=spec.seed).to(choose_device())
    history = fit(
        model,
        training_loss,
        lambda s: training_batch(spec, s),
        steps=spec.steps,
        seed=spec.seed,
        lr=spec.lr,
        warmup=min(100, spec.steps // 10),
        weight_decay=0.01,
        progress=progress,
        desc="multi-task model",
    )
    return freeze(model), list(history.loss)


def freeze(model: Decoder) -> Decoder:
    """``model`` in eval mode with every weight's ``requires_grad`` off."""
    for p in model.parameters():
        p.requires_grad_(False)
    return model.eval()


EVAL_PROMPTS = 256


@torch.no_grad()
def task_accuracy(model: Decoder, prompts: PromptSet) -> float:
    """Share of prompts whose arg-max among the options is the right answer."""
    device = next(model.parameters()).device
    logits = final_logits(model, torch.from_numpy(prompts.ids).to(device)).cpu()
    options = torch.from_numpy(prompts.options)
    chosen = options.gather(1, logits.gather(1, options).argmax(1, keepdim=True))[:, 0]
    return float((chosen.numpy() == prompts.answer).mean())


@torch.no_grad()
def evaluate_model(model: Decoder) -> dict[str, float]:
    """Accuracy on :data:`EVAL_PROMPTS` fixed training-distribution prompts of each task, and the
    neutral next-word loss on fixed windows."""
    device = next(model.parameters()).device
    out = {
        t: task_accuracy(model, make_prompts(t, EVAL_PROMPTS, split="train", seed=50_000 + i))
        for i, t in enumerate(TASKS)
    }
    neutral = torch.from_numpy(neutral_windows(EVAL_PROMPTS, NEUTRAL_LENGTH, seed=50_099)).to(device)
    logits = model(neutral[:, :-1]).logits
    out["neutral_loss"] = float(
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), neutral[:, 1:].reshape(-1))
    )
    return out


def as_float64(model: Decoder) -> Decoder:
    """A float64 copy of a frozen model: node selection and the axes run in float64, so the low bits of
    another CPU cannot flip an arg-max of the selectors."""
    copy = Decoder(model.config, seed=0)
    copy.load_state_dict(model.state_dict())
    return freeze(copy.double())
