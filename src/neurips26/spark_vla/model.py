"""A trained model of the chapter: encoder pathways, optional router, depth tokens and projector, policy.

:class:`VLAModel` assembles what a :class:`~neurips26.spark_vla.variants.VariantSpec` asks for around one
frozen 2D encoder, and :class:`FrameFeatures` holds what never changes during training for one set of
episodes (the shared prefix of blocks 0–1 and the 2D pathway's tokens of every frame, the depth images, and,
for training only, the 3D expert's attention maps and tokens). The steps the training loop and the closed
loop share live here: the candidates of a batch (§3.0), and the selection of the tokens that reach the LM
(§3.3 and the token-selection baselines).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from neurips26.nn import ViT
from neurips26.seeding import sub_seed
from neurips26.spark_vla import sim
from neurips26.spark_vla.baselines import BridgePolicy, DepthTokens
from neurips26.spark_vla.distill import ResponseProjector
from neurips26.spark_vla.encoder import PathwayOutput, TwoPathwayEncoder
from neurips26.spark_vla.router import (
    Router,
    attention_topk,
    budget,
    gumbel_topk_gates,
    random_indices,
    topk_indices,
)
from neurips26.spark_vla.variants import VariantSpec
from neurips26.spark_vla.vla import Policy, PolicyConfig, larger_config

DEPTH_MEAN, DEPTH_STD = 0.9, 0.3  # metres: a fixed standardisation of the depth sensor's image
#: The policy reads proprio as (e - home) / 0.2 m and predicts actions in units of (5 cm, 5 cm, 5 cm, 1), so
#: that every input and target is of order one.
PROPRIO_SCALE = 0.2
ACTION_SCALE = (0.05, 0.05, 0.05, 1.0)


def policy_proprio(ee: Tensor) -> Tensor:
    """End-effector positions (B, 3) in metres -> the policy's proprio input."""
    home = torch.tensor(sim.HOME, dtype=ee.dtype, device=ee.device)
    return (ee - home) / PROPRIO_SCALE


def to_policy_units(chunks: Tensor) -> Tensor:
    """Action chunks (B, H, 4) in metres -> the policy's targets."""
    return chunks / torch.tensor(ACTION_SCALE, dtype=chunks.dtype, device=chunks.device)


def from_policy_units(actions: Tensor) -> Tensor:
    """The policy's outputs (B, H, 4) -> metres (and the gripper value)."""
    return actions * torch.tensor(ACTION_SCALE, dtype=actions.dtype, device=actions.device)


@dataclass(frozen=True, eq=False)
class FrameFeatures:
    """Per-episode tensors (E rows) that training and evaluation index by episode.

    ``prefix`` (E, N, d): the encoder after blocks 0–1; ``v2d`` (E, N, d): the 2D pathway's tokens;
    ``images`` (E, 3, 48, 48); ``depth`` (E, 1, 48, 48) standardised; ``teacher_maps`` (E, 2, N, N) and
    ``teacher_tokens`` (E, N, d_T), or None when no 3D expert is given (evaluation never needs them).
    """

    prefix: Tensor
    v2d: Tensor
    images: Tensor
    depth: Tensor
    teacher_maps: Tensor | None = None
    teacher_tokens: Tensor | None = None

    def rows(self, index: Tensor) -> dict[str, Tensor]:
        out = {"prefix": self.prefix[index], "v2d": self.v2d[index], "images": self.images[index]}
        out["depth"] = self.depth[index]
        if self.teacher_maps is not None:
            out["teacher_maps"] = self.teacher_maps[index]
        if self.teacher_tokens is not None:
            out["teacher_tokens"] = self.teacher_tokens[index]
        return out


class VLAModel(nn.Module):
    """Everything one variant trains or reads at inference (the 3D expert is not part of it)."""

    def __init__(self, spec: VariantSpec, encoder: ViT, *, seed: int = 0, config: PolicyConfig | None = None):
        super().__init__()
        if not isinstance(spec, VariantSpec):
            raise TypeError(f"spec must be a VariantSpec; got {type(spec).__name__}")
        self.spec = spec
        # The candidates keep the encoder's width (64 for ENCODER_CONFIG, PolicyConfig's default).
        config = PolicyConfig(vision_width=encoder.config.width) if config is None else config
        if spec.pathways == "tuned":
            self.vit = copy.deepcopy(encoder)
            for p in self.vit.parameters():
                p.requires_grad_(True)
            self.pathways = None
        else:
            self.vit = None
            rank = spec.lora_rank
            self.pathways = TwoPathwayEncoder(encoder, rank=rank, alpha=2.0 * rank, seed=sub_seed(seed, 1))
            if not spec.uses_lora:
                for p in self.pathways.adapter_parameters():
                    p.requires_grad_(False)
        if spec.policy == "bridge":
            self.policy: Policy = BridgePolicy(config, seed=sub_seed(seed, 2))
        elif spec.policy == "larger":
            self.policy = Policy(larger_config(config), seed=sub_seed(seed, 2))
        else:
            self.policy = Policy(config, seed=sub_seed(seed, 2))
        width = self.policy.config.width
        self.router = (
            Router(config.vision_width, width, seed=sub_seed(seed, 3))
            if spec.selection in ("router", "gumbel")
            else None
        )
        self.depth_tokens = (
            DepthTokens(config.vision_width, seed=sub_seed(seed, 4)) if spec.pathways == "depth" else None
        )
        teacher_width = encoder.config.width  # the 3D expert has the encoder's sizes
        self.projector = (
            ResponseProjector(
                width if spec.distill == "sf" else config.vision_width, teacher_width, seed=sub_seed(seed, 5)
            )
            if spec.distill in ("response", "sf")
            else None
        )
        self.k = budget(spec.rho, 72)

    # ------------------------------------------------------------------------------------------- features

    def frame_features(
        self,
        images: Tensor,
        depth: Tensor,
        teacher_maps: Tensor | None = None,
        teacher_tokens: Tensor | None = None,
    ) -> FrameFeatures:
        """The per-frame constants of ``images`` (E, 3, 48, 48) and ``depth`` (E, 1, 48, 48) (z-depth, m)."""
        with torch.no_grad():
            if self.pathways is not None:
                prefix = self.pathways.prefix(images)
                v2d = self.pathways.pathway(prefix, lora=False).tokens
            else:  # the tuned encoder reads the images themselves; nothing of it is constant
                shape = (images.shape[0], sim.NUM_PATCHES, self.policy.config.vision_width)
                prefix = v2d = torch.zeros(shape, device=images.device)
        return FrameFeatures(
            prefix=prefix,
            v2d=v2d,
            images=images,
            depth=(depth - DEPTH_MEAN) / DEPTH_STD,
            teacher_maps=teacher_maps,
            teacher_tokens=teacher_tokens,
        )

    def candidates(
        self, rows: dict[str, Tensor], *, need_weights: bool = False
    ) -> tuple[Tensor, PathwayOutput | None]:
        """Candidate tokens C (B, M, d) of a batch of frame rows, and the LoRA pathway's output if it ran."""
        spec, policy = self.spec, self.policy
        if spec.pathways == "tuned":
            return policy.candidates(self.vit(rows["images"]).tokens), None
        if spec.pathways == "2d":
            return policy.candidates(rows["v2d"]), None
        if spec.pathways == "depth":
            return policy.candidates(rows["v2d"], self.depth_tokens(rows["depth"])), None
        out3 = self.pathways.pathway(rows["prefix"], lora=True, need_weights=need_weights)
        if spec.pathways == "lora":
            return policy.candidates(out3.tokens), out3
        return policy.candidates(rows["v2d"], out3.tokens), out3

    # ------------------------------------------------------------------------------------------ selection

    def select(
        self,
        candidates: Tensor,
        instruction: Tensor,
        proprio: Tensor,
        *,
        generator: torch.Generator | None = None,
        training: bool = False,
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """The tokens that reach the LM: (visual (B, k or M, d), indices (B, k) or None, gates or None).

        ``router``: top-k of the router's scores; ``gumbel``: the same at inference, straight-through Gumbel
        top-k gates while training (the gathered tokens carry gates whose forward value is 1); ``random``:
        k random candidates from ``generator``; ``attention``: the k most attended in LM block 1 of a dense
        pass; ``all``: every candidate.
        """
        spec = self.spec
        if spec.selection == "all":
            return candidates, None, None
        batch, m = candidates.shape[:2]
        k = self.k
        if spec.selection in ("router", "gumbel"):
            u = self.policy.instruction_vector(instruction)
            logits = self.router(candidates.detach(), u.detach())
            if spec.selection == "gumbel" and training:
                gates, index = gumbel_topk_gates(logits, k, generator)
                return self.policy.gather(candidates, index), index, gates.gather(1, index)
            index = topk_indices(logits.detach(), k)
        elif spec.selection == "random":
            if generator is None:
                raise ValueError("generator is required for selection='random'")
            index = random_indices(batch, m, k, generator).to(candidates.device)
        else:
            with torch.no_grad():
                out = self.policy(instruction, candidates, proprio, return_attention=True)
            layout = self.policy.layout(m)
            rows = torch.arange(layout["queries"].start, layout["proprio"].stop, device=candidates.device)
            index = attention_topk(out.attention, layout["visual"], rows, k)
        return self.policy.gather(candidates, index), index, None

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]


__all__ = [
    "ACTION_SCALE",
    "DEPTH_MEAN",
    "DEPTH_STD",
    "PROPRIO_SCALE",
    "FrameFeatures",
    "VLAModel",
    "from_policy_units",
    "policy_proprio",
    "to_policy_units",
]
