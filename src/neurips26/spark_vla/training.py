"""One training recipe for every variant: same data, steps, batch, optimiser; only the losses differ (§3.5).

Each step draws a batch of demonstration samples and builds the candidates C of their frames. The loss is

    L = L_act + λ_d L_dist + λ_r L_route,      L_act = mean |â - a|  (L1 over the chunk, §3.4)

with L_dist the variant's alignment loss (attention-map KL, response or Spatial Forcing cosine; the 3D
expert's maps and tokens are per-frame constants computed once) and L_route the router's loss. With
probability p_dense (0.5 annealed to 0.2) a routed variant takes a *dense* step: every candidate enters the
LM multiplied by a gate m_i = 1, the gates' gradient gives the targets s_i = -∂L_act/∂m_i, and the router
is fitted to softmax(s / std(s)) by KL (§3.3); the router sees C detached, so no routing gradient reaches
the backbone. Otherwise the step is *routed*: only the k = 18 selected tokens enter, as at test time. The
gate gradient is taken with ``torch.autograd.grad`` before the backward pass of L, which back-propagates
through the LM a second time (the paper gets it from the same backward pass: a training-cost deviation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from neurips26.nn import ViT
from neurips26.seeding import sub_seed
from neurips26.spark_vla.data import Demonstrations
from neurips26.spark_vla.distill import attention_distillation_loss, cosine_alignment_loss
from neurips26.spark_vla.model import FrameFeatures, VLAModel, policy_proprio, to_policy_units
from neurips26.spark_vla.router import dense_probability, hard_route_loss, soft_route_loss
from neurips26.spark_vla.variants import VariantSpec
from neurips26.spark_vla.vla import action_loss
from neurips26.train import History, fit
from neurips26.validation import check_float, check_int, check_seed


@dataclass(frozen=True)
class TrainConfig:
    """The budget every variant shares."""

    steps: int = 250
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    p_dense: tuple[float, float] = (0.5, 0.2)

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        check_int("batch_size", self.batch_size, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("weight_decay", self.weight_decay, minimum=0.0)


@dataclass(frozen=True)
class StepLosses:
    """The parts of one step's loss (floats), for tracing a step in the notebooks."""

    action: float
    distill: float
    route: float
    dense: bool


def _order(num_samples: int, batch: int, steps: int, seed: int) -> np.ndarray:
    """Sample indices for every step: epoch-wise permutations from a private generator."""
    rng = np.random.default_rng(sub_seed(seed, 11))
    need = batch * steps
    perms = [rng.permutation(num_samples) for _ in range(-(-need // num_samples))]
    return np.concatenate(perms)[:need].reshape(steps, batch)


def step_loss(
    model: VLAModel,
    features: FrameFeatures,
    instructions: Tensor,
    batch: dict[str, Tensor],
    *,
    dense: bool,
    generator: torch.Generator | None,
    trace: list[StepLosses] | None = None,
) -> Tensor:
    """The loss L of one batch (module docstring); ``batch`` holds ``episode``, ``proprio``, ``chunks``."""
    spec = model.spec
    policy = model.policy
    index = batch["episode"]
    rows = features.rows(index)
    instruction = instructions[index]
    proprio, target = policy_proprio(batch["proprio"]), to_policy_units(batch["chunks"])
    candidates, out3 = model.candidates(rows, need_weights=spec.distill == "maps")

    l_dist = candidates.new_zeros(())
    if spec.distill == "maps":
        maps = rows["teacher_maps"]
        l_dist = attention_distillation_loss(out3.attentions, [maps[:, 0], maps[:, 1]])
    elif spec.distill == "response":
        l_dist = cosine_alignment_loss(model.projector(out3.responses[-1]), rows["teacher_tokens"])

    l_route = candidates.new_zeros(())
    routed = spec.selection != "all" and (spec.selection == "gumbel" or not dense)
    if routed:
        visual, _, gates = model.select(candidates, instruction, proprio, generator=generator, training=True)
        out = policy(instruction, visual, proprio, gates=gates)
        l_act = action_loss(out.actions, target)
    else:
        want_gates = spec.selection == "router"
        gates = torch.ones(candidates.shape[:2], device=candidates.device, requires_grad=want_gates)
        out = policy(
            instruction,
            candidates,
            proprio,
            gates=gates if want_gates else None,
            return_visual_states=spec.distill == "sf",
        )
        l_act = action_loss(out.actions, target)
        if spec.distill == "sf":
            l_dist = cosine_alignment_loss(model.projector(out.visual_states), rows["teacher_tokens"])
        if want_gates:
            (grad,) = torch.autograd.grad(l_act, gates, retain_graph=True)
            scores = -grad.detach()  # s_i = -dL_act/dm_i
            logits = model.router(candidates.detach(), policy.instruction_vector(instruction).detach())
            if spec.route_loss == "soft":
                l_route = soft_route_loss(scores, logits)
            else:
                l_route = hard_route_loss(scores, logits, model.k)
    if trace is not None:
        trace.append(
            StepLosses(float(l_act.detach()), float(l_dist.detach()), float(l_route.detach()), not routed)
        )
    return l_act + spec.lambda_d * l_dist + spec.lambda_r * l_route


def train_variant(
    spec: VariantSpec,
    encoder: ViT,
    features: FrameFeatures,
    instructions: Tensor,
    demos: Demonstrations,
    *,
    config: TrainConfig | None = None,
    seed: int = 0,
    progress: bool = False,
    trace: list[StepLosses] | None = None,
) -> tuple[VLAModel, History]:
    """Train ``spec`` from scratch on ``demos`` (rows index ``features`` and ``instructions``); return it."""
    config = TrainConfig() if config is None else config
    seed = check_seed("seed", seed)
    if spec.uses_teacher and (features.teacher_maps is None or features.teacher_tokens is None):
        raise ValueError(
            f"variant {spec.name!r} distils from the 3D expert: features need its maps and tokens"
        )
    model = VLAModel(spec, encoder, seed=seed)
    device = features.v2d.device
    model.to(device)
    order = torch.from_numpy(_order(len(demos), min(config.batch_size, len(demos)), config.steps, seed))
    episode = torch.from_numpy(demos.episode)
    proprio = torch.from_numpy(demos.proprio)
    chunks = torch.from_numpy(demos.chunks)
    coin = np.random.default_rng(sub_seed(seed, 12)).random(config.steps)
    p0, p1 = config.p_dense

    def batches(step: int) -> dict[str, Tensor]:
        rows = order[step]
        dense = coin[step] < dense_probability(step, config.steps, p0, p1)
        return {
            "episode": episode[rows],
            "proprio": proprio[rows],
            "chunks": chunks[rows],
            "dense": torch.tensor(bool(dense)),
            "step": torch.tensor(step),
        }

    def loss_fn(m: VLAModel, batch: dict[str, Tensor]) -> Tensor:
        step = int(batch["step"])
        generator = torch.Generator(device=device).manual_seed(sub_seed(seed, 13, step))
        return step_loss(
            m, features, instructions, batch, dense=bool(batch["dense"]), generator=generator, trace=trace
        )

    history = fit(
        model,
        loss_fn,
        batches,
        steps=config.steps,
        seed=sub_seed(seed, 14),
        lr=config.lr,
        weight_decay=config.weight_decay,
        warmup=max(1, config.steps // 20),
        progress=progress,
        desc=spec.name,
    )
    model.eval()
    return model, history


__all__ = ["StepLosses", "TrainConfig", "step_loss", "train_variant"]
