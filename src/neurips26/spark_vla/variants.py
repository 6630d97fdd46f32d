"""Every model the chapter trains, as a declarative spec: SPARK, its baselines and its ablations.

A variant fixes four choices, and everything else (data, steps, batch, learning rate, seeds) is shared:

* ``pathways``: which visual tokens are candidates: ``2d`` (the frozen encoder, N tokens), ``both``
  (C = [V2D + e2D; V3D + e3D], 2N tokens), ``lora`` (one LoRA-adapted pathway only, N tokens: where
  Spatial Forcing and "distillation into the main pathway" write geometry), ``depth`` (V2D plus depth-sensor
  tokens, the explicit-3D oracle), ``tuned`` (the encoder itself fine-tuned, for the larger VLA);
* ``distill``: ``none``; ``maps`` (row-wise KL between attention maps, §3.2 (a), the default); ``response``
  (cosine between projected attention outputs and teacher tokens, §3.2 (b)); ``sf`` (Spatial Forcing: cosine
  between projected LM visual states after block 1 and teacher tokens);
* ``selection``: which candidates reach the LM: ``all``; ``router`` (top-k of a router trained on
  action-loss gradient targets, §3.3); ``random`` (random k); ``attention`` (FastV-style: the k visual tokens
  the later positions attend to most in LM block 1 of a dense pass); ``gumbel`` (top-k of a router trained
  through the action loss with straight-through Gumbel gates, no gradient targets);
* ``policy``: the tiny LM with an MLP head, VLA-Adapter's bridge attention, or the larger LM (4x parameters).
"""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.validation import check_choice, check_float, check_int

PATHWAYS = ("2d", "both", "lora", "depth", "tuned")
DISTILL = ("none", "maps", "response", "sf")
SELECTION = ("all", "router", "random", "attention", "gumbel")
POLICIES = ("policy", "bridge", "larger")


@dataclass(frozen=True)
class VariantSpec:
    """One trained model of the chapter (see the module docstring for the fields' meanings)."""

    name: str
    pathways: str
    distill: str = "none"
    selection: str = "all"
    policy: str = "policy"
    rho: float = 0.25
    lambda_d: float = 0.5
    lambda_r: float = 0.1
    lora_rank: int = 4
    route_loss: str = "soft"
    label: str = ""

    def __post_init__(self) -> None:
        check_choice("pathways", self.pathways, PATHWAYS)
        check_choice("distill", self.distill, DISTILL)
        check_choice("selection", self.selection, SELECTION)
        check_choice("policy", self.policy, POLICIES)
        check_choice("route_loss", self.route_loss, ("soft", "hard"))
        check_float("rho", self.rho, minimum=0.0, maximum=1.0, strict_min=True)
        check_float("lambda_d", self.lambda_d, minimum=0.0)
        check_float("lambda_r", self.lambda_r, minimum=0.0)
        check_int("lora_rank", self.lora_rank, minimum=1)
        if self.distill in ("maps", "response") and self.pathways not in ("both", "lora"):
            raise ValueError(f"distill={self.distill!r} needs a LoRA pathway; got pathways={self.pathways!r}")
        if self.distill == "sf" and self.pathways not in ("lora", "2d", "tuned"):
            raise ValueError(f"distill='sf' aligns a single pathway; got pathways={self.pathways!r}")
        if self.selection != "all" and self.pathways != "both":
            raise ValueError(f"selection={self.selection!r} routes 2D and 3D tokens: needs pathways='both'")

    @property
    def uses_lora(self) -> bool:
        return self.pathways in ("both", "lora")

    @property
    def uses_teacher(self) -> bool:
        """Whether training reads the 3D expert (it never runs at inference)."""
        return self.distill != "none"

    @property
    def num_candidates(self) -> int:
        return 72 if self.pathways in ("both", "depth") else 36


VARIANTS: dict[str, VariantSpec] = {
    v.name: v
    for v in (
        VariantSpec("2d", "2d", label="2D-only VLA"),
        VariantSpec("spark-dense", "both", "maps", label="SPARK, no router (all 72 tokens)"),
        VariantSpec("spark", "both", "maps", "router", label="SPARK (router, k = 18)"),
        VariantSpec("sf", "lora", "sf", label="Spatial Forcing"),
        VariantSpec("oracle", "depth", label="depth-sensor oracle"),
        VariantSpec("bridge", "2d", policy="bridge", label="VLA-Adapter-style bridge"),
        VariantSpec("larger", "tuned", policy="larger", label="larger VLA (4x LM, encoder tuned)"),
        VariantSpec("no-distill", "both", label="two pathways, no distillation"),
        VariantSpec("main-pathway", "lora", "maps", label="maps distilled into the main pathway"),
        VariantSpec("response", "both", "response", label="response alignment (b)"),
        VariantSpec("random-k", "both", "maps", "random", label="random k = 18"),
        VariantSpec("attention-k", "both", "maps", "attention", label="attention top-k = 18 (FastV)"),
        VariantSpec("gumbel", "both", "maps", "gumbel", label="Gumbel top-k router"),
    )
}


def variant(name: str) -> VariantSpec:
    """The spec called ``name`` (ValueError naming ``variant`` otherwise)."""
    if not isinstance(name, str) or name not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}; got {name!r}")
    return VARIANTS[name]


__all__ = ["DISTILL", "PATHWAYS", "POLICIES", "SELECTION", "VARIANTS", "VariantSpec", "variant"]
