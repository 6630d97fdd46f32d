"""The criteria that decide chapter 17's claims, fixed before any model met the evaluation episodes (rates as
fractions of the 200 evaluation episodes, 100 depth and 100 colour; a re-run on another CPU may flip about 2
of them, 0.02 of a task group, so every margin below is at least twice that).

* C1 :func:`distillation_criteria` — on depth tasks, SPARK without router beats the 2D-only VLA by
  ≥ :data:`DEPTH_GAIN` (10 points) averaged over 3 seeds, and in every seed.
* C2 :func:`preservation_criteria` — SPARK's 2D pathway is the frozen encoder bit for bit (so its colour
  probe is unchanged); Spatial Forcing's single pathway loses ≥ :data:`PROBE_DROP` (4 points) of colour-probe
  accuracy; SPARK's 3D pathway explains ≥ :data:`HEIGHT_GAIN` (0.05) more of the height above the table
  (R², held-out episodes) than its 2D pathway.
* C3 :func:`routing_criteria` — at k = 18 of 72: success router ≥ attention top-k ≥ random k; the router
  within :data:`ROUTER_BAND` (5 points) of the all-token model; the router's target recall ≥ random's +
  :data:`RECALL_GAIN` (0.2).
* C4 :func:`pathway_share_criteria` — the share of 3D-pathway tokens among the routed ones is higher on depth
  episodes than on colour episodes, and neither pathway is starved (share within [0.1, 0.9]) on depth ones.
* C5 :func:`efficiency_criteria` — SPARK's trainable parameters < :data:`TRAINABLE_SHARE` (40 %) of its
  total, and its success within :data:`LARGER_BAND` (5 points) of the larger VLA's.
* C6 :func:`compute_criteria` — the declared cost model's LM FLOPs of a routed forward ≤
  :data:`LM_RATIO_MAX` (0.40) of a dense one, and the whole forward (encoder included) cheaper.
* C7 :func:`ablation_criteria` — the paper's design choices each at least match their ablation on depth
  success: attention maps vs responses, the LoRA branch vs the main pathway, distillation vs none (all at
  72 tokens), gradient-supervised routing vs Gumbel top-k (at 18).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from neurips26.criteria import Criterion, at_least, at_most, below, higher, higher_or_equal, holds

DEPTH_GAIN = 0.10
PROBE_DROP = 0.04
HEIGHT_GAIN = 0.05
ROUTER_BAND = 0.05
RECALL_GAIN = 0.2
SHARE_RANGE = (0.1, 0.9)
TRAINABLE_SHARE = 0.40
LARGER_BAND = 0.05
LM_RATIO_MAX = 0.40

CLAIM_IDS = (
    "c1-distillation",
    "c2-preservation",
    "c3-routing",
    "c4-pathways",
    "c5-efficiency",
    "c6-compute",
    "c7-ablations",
)


def distillation_criteria(spark_depth: Sequence[float], two_d_depth: Sequence[float]) -> list[Criterion]:
    """Per-seed depth-task success of SPARK without router and of the 2D-only VLA (same seeds, in order)."""
    gains = [s - t for s, t in zip(spark_depth, two_d_depth, strict=True)]
    return [
        at_least(
            f"mean depth-task gain over the 2D-only VLA ≥ {DEPTH_GAIN:.0%}",
            sum(gains) / len(gains),
            DEPTH_GAIN,
        ),
        at_least("smallest per-seed gain > 0", min(gains), 0.01, scale=DEPTH_GAIN),
    ]


def preservation_criteria(
    identical: bool, probe: Mapping[str, float], height_r2: Mapping[str, float]
) -> list[Criterion]:
    """``identical``: SPARK's V2D equals the frozen encoder's tokens; ``probe``: colour-probe accuracy of the
    ``2d`` and ``sf`` tokens; ``height_r2``: R² of the ``2d`` and ``3d`` pathways."""
    return [
        holds("SPARK's 2D pathway equals the frozen encoder bit for bit", identical),
        at_least(
            f"Spatial Forcing's colour-probe drop ≥ {PROBE_DROP:.0%}", probe["2d"] - probe["sf"], PROBE_DROP
        ),
        at_least(
            f"height R²: 3D pathway − 2D pathway ≥ {HEIGHT_GAIN}",
            height_r2["3d"] - height_r2["2d"],
            HEIGHT_GAIN,
        ),
    ]


def routing_criteria(success: Mapping[str, float], recall: Mapping[str, float]) -> list[Criterion]:
    """``success`` of ``router``, ``attention``, ``random`` (k = 18) and ``all`` (72 tokens); ``recall``:
    target recall of ``router`` and ``random``."""
    return [
        higher_or_equal(
            "success: router ≥ attention top-k", success["router"], success["attention"], unit=0.05
        ),
        higher_or_equal(
            "success: attention top-k ≥ random k", success["attention"], success["random"], unit=0.05
        ),
        at_least(
            f"router − all tokens ≥ −{ROUTER_BAND:.0%}",
            success["router"] - success["all"],
            -ROUTER_BAND,
            scale=ROUTER_BAND,
        ),
        at_least(
            f"target recall: router − random ≥ {RECALL_GAIN}",
            recall["router"] - recall["random"],
            RECALL_GAIN,
        ),
    ]


def pathway_share_criteria(share_depth: float, share_colour: float) -> list[Criterion]:
    """Shares of 3D-pathway tokens among the routed ones, on depth and colour episodes."""
    lo, hi = SHARE_RANGE
    return [
        higher("3D share: depth episodes > colour episodes", share_depth, share_colour, unit=0.05),
        at_least(f"3D share on depth episodes ≥ {lo}", share_depth, lo),
        at_most(f"3D share on depth episodes ≤ {hi}", share_depth, hi),
    ]


def efficiency_criteria(trainable: int, total: int, spark: float, larger: float) -> list[Criterion]:
    """Parameter counts of SPARK and the overall success of SPARK and of the larger VLA."""
    return [
        below(f"trainable share < {TRAINABLE_SHARE:.0%}", trainable / total, TRAINABLE_SHARE),
        at_least(
            f"success: SPARK − larger VLA ≥ −{LARGER_BAND:.0%}",
            spark - larger,
            -LARGER_BAND,
            scale=LARGER_BAND,
        ),
    ]


def compute_criteria(lm_ratio: float, total_ratio: float) -> list[Criterion]:
    """Declared-cost ratios routed / dense at k = 18: the LM alone and the whole forward."""
    return [
        at_most(f"LM FLOPs routed / dense ≤ {LM_RATIO_MAX}", lm_ratio, LM_RATIO_MAX),
        below("whole forward routed / dense < 1", total_ratio, 1.0),
    ]


def ablation_criteria(depth: Mapping[str, float]) -> list[Criterion]:
    """Depth-task success of ``spark-dense``, ``response``, ``main-pathway``, ``no-distill``, ``spark`` and
    ``gumbel``."""
    return [
        higher_or_equal("maps ≥ responses", depth["spark-dense"], depth["response"], unit=0.05),
        higher_or_equal("LoRA branch ≥ main pathway", depth["spark-dense"], depth["main-pathway"], unit=0.05),
        higher_or_equal("distillation ≥ none", depth["spark-dense"], depth["no-distill"], unit=0.05),
        higher_or_equal(
            "gradient-supervised router ≥ Gumbel top-k", depth["spark"], depth["gumbel"], unit=0.05
        ),
    ]


__all__ = [
    "CLAIM_IDS",
    "DEPTH_GAIN",
    "HEIGHT_GAIN",
    "LARGER_BAND",
    "LM_RATIO_MAX",
    "PROBE_DROP",
    "RECALL_GAIN",
    "ROUTER_BAND",
    "SHARE_RANGE",
    "TRAINABLE_SHARE",
    "ablation_criteria",
    "compute_criteria",
    "distillation_criteria",
    "efficiency_criteria",
    "pathway_share_criteria",
    "preservation_criteria",
    "routing_criteria",
]
