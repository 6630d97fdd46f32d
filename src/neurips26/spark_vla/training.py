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

Under ``torchrun`` (:func:`neurips26.train.fit` trains data-parallel) the step runs inside the forward of
:class:`TrainStep`, the module ``fit`` wraps, so that DistributedDataParallel synchronises its gradients;
each rank draws its random-k subsets and Gumbel noise from its own stream, and every step adds 0 times each
trainable parameter to L, so that the router, which a routed step of SPARK leaves out, still has a gradient
(DDP runs without ``find_unused_parameters``). That gradient is 0, but AdamW's momentum and weight decay
then move the router on routed steps too, which they do not in one process. In one process none of this
changes a number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from neurips26 import distributed
from neurips26.nn import ViT
from neurips26.seeding import sub_seed
from neurips26.spark_vla.data import Demonstrations
from neurips26.spark_vla.distill import attention_distillation_loss, cosine_alignment_loss
from neurips26.spark_vla.model import FrameFeatures, VLAModel, policy_proprio, to_policy_units
from neurips26.spark_vla.router import dense_probability, hard_route_loss, soft_route_loss
from neurips26.spark_vla.variants import VariantSpec
from neurips26.spark_vla.vla import PolicyConfig, action_loss
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
        maps = rows["teacher_maps"]  # (B, blocks, N, N): one map per adapted block (2 by default)
        l_dist = attention_distillation_loss(out3.attentions, [maps[:, i] for i in range(maps.shape[1])])
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


class TrainStep(nn.Module):
    """The module :func:`train_variant` gives :func:`~neurips26.train.fit`: ``forward(batch, dense=...,
    generator=...)`` is :func:`step_loss` of ``model`` on ``features`` and ``instructions`` (the same
    parameters, in the same order), so that under ``torchrun`` the step runs inside DistributedDataParallel's
    forward, the gate gradient of a dense step included. The per-episode tensors and ``trace`` are held
    here, not passed through the forward, which DDP would copy. A routed step leaves the router out, so
    :func:`train_variant` trains it with ``find_unused_parameters=True``: under DDP the router's gradient
    is then missing on those steps, as in one process, and AdamW skips it there too.
    """

    def __init__(
        self,
        model: VLAModel,
        features: FrameFeatures,
        instructions: Tensor,
        *,
        trace: list[StepLosses] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(model, VLAModel):
            raise TypeError(f"model must be a VLAModel; got {type(model).__name__}")
        self.model = model
        self.features = features
        self.instructions = instructions
        self.trace = trace

    def forward(self, batch: dict[str, Tensor], *, dense: bool, generator: torch.Generator | None) -> Tensor:
        """The loss L of ``batch`` (``episode``, ``proprio``, ``chunks``), a scalar."""
        loss = step_loss(
            self.model,
            self.features,
            self.instructions,
            batch,
            dense=dense,
            generator=generator,
            trace=self.trace,
        )
        return loss


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
    policy: PolicyConfig | None = None,
    warmup: int | None = None,
) -> tuple[VLAModel, History]:
    """Train ``spec`` from scratch on ``demos`` (rows index ``features`` and ``instructions``); return it.

    The model is built with policy sizes ``policy`` (None: :class:`~neurips26.spark_vla.vla.PolicyConfig`'s,
    at the encoder's width) on the device of ``features``, which ``instructions`` are moved to; ``warmup``
    updates of linear warm-up (None: ``max(1, steps // 20)``). Under ``torchrun`` it trains data-parallel
    (module docstring)."""
    config = TrainConfig() if config is None else config
    seed = check_seed("seed", seed)
    if warmup is not None:
        check_int("warmup", warmup, minimum=0)
    if spec.uses_teacher and (features.teacher_maps is None or features.teacher_tokens is None):
        raise ValueError(
            f"variant {spec.name!r} distils from the 3D expert: features need its maps and tokens"
        )
    model = VLAModel(spec, encoder, seed=seed, config=policy)
    device = features.v2d.device
    model.to(device)
    instructions = instructions.to(device)
    rank = distributed.world().rank
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

    def loss_fn(m: nn.Module, batch: dict[str, Tensor]) -> Tensor:
        step = int(batch["step"])
        # Rank 0 (and a single process) keeps the step's seed; other ranks draw for their own rows.
        draws = distributed.rank_seed(sub_seed(seed, 13, step), rank)
        generator = torch.Generator(device=device).manual_seed(draws)
        return m(batch, dense=bool(batch["dense"]), generator=generator)

    module = TrainStep(model, features, instructions, trace=trace)
    history = fit(
        module,
        loss_fn,
        batches,
        steps=config.steps,
        seed=sub_seed(seed, 14),
        lr=config.lr,
        weight_decay=config.weight_decay,
        warmup=max(1, config.steps // 20) if warmup is None else warmup,
        progress=progress,
        desc=spec.name,
        find_unused_parameters=True,  # a routed step leaves the router out
    )
    model.eval()
    return model, history


__all__ = ["StepLosses", "TrainConfig", "TrainStep", "step_loss", "train_variant"]
