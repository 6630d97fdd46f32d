"""The claims run: every shipped model on the same evaluation episodes, the probes, the routing statistics and
the cost model, gathered once (:func:`run_claims`) and summarised into tables and decisions
(:func:`summarise`).

Evaluation: the 200 evaluation episodes (seeds 3,000,000 on; 100 depth, 100 colour), closed loop from the
home position; action L1 on their expert demonstrations. Probes are fitted on the development episodes and
scored on the evaluation ones. Target recall: the fraction of the target object's patches that have at least
one routed token (either pathway) at the first re-plan. 3D share: the fraction of routed tokens from the 3D
pathway. The budget curve re-runs SPARK's trained router at k = 9, 18, 36, 72 of 72 (trained at 18).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.criteria import Decision, decide, decide_over_seeds
from neurips26.spark_vla import cost, data, sim, verdicts
from neurips26.spark_vla.model import VLAModel
from neurips26.spark_vla.prepare import NAMES, SEEDED, pretrained
from neurips26.spark_vla.probes import colour_probe, geometry_probe
from neurips26.spark_vla.rollout import ClosedLoop, action_l1, closed_loop
from neurips26.spark_vla.router import budget
from neurips26.spark_vla.variants import VARIANTS
from neurips26.spark_vla.vla import count_parameters

VARIANT_NAMES = tuple(n for n in NAMES if n not in ("encoder", "teacher"))
BUDGETS = (9, 18, 36, 72)


@dataclass(frozen=True, eq=False)
class ModelResult:
    """One model on the evaluation episodes."""

    success: np.ndarray  # (E,) bool
    distance: np.ndarray  # (E,) metres
    tokens: int
    selected: np.ndarray | None  # (E, k) candidate indices of the first re-plan
    l1: float
    trainable: int
    total: int


@dataclass(frozen=True, eq=False)
class ClaimsData:
    """Everything the claims need, measured in one run (see the module docstring)."""

    is_depth: np.ndarray  # (E,) bool
    target_mask: np.ndarray  # (E, 36) bool
    results: dict[str, ModelResult]
    probes: dict[str, dict[str, float]]  # tokens -> {"colour", "height"}
    identical: bool
    budget: dict[int, float]  # k -> SPARK's success
    cost: dict[str, float] = field(default_factory=dict)


def _tensor(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def _result(model: VLAModel, test: data.EpisodeSet, demos: data.Demonstrations) -> ModelResult:
    features = model.frame_features(_tensor(test.images), _tensor(test.depth))
    loop: ClosedLoop = closed_loop(model, features, test)
    # what the deployed model trains (the projector of SF / response alignment is a training-time head)
    trained = [m for m in (model.policy, model.router, model.depth_tokens, model.vit) if m is not None]
    pathways = [model.pathways] if model.pathways is not None else []
    total = count_parameters(*trained, *pathways)
    trainable = count_parameters(*trained) + (
        model.pathways.num_adapter_parameters() if model.spec.uses_lora else 0
    )
    return ModelResult(
        success=loop.success,
        distance=loop.distance,
        tokens=loop.tokens,
        selected=loop.selected,
        l1=action_l1(model, features, test, demos),
        trainable=int(trainable),
        total=int(total),
    )


def _pathway_tokens(model: VLAModel, episodes: data.EpisodeSet) -> dict[str, np.ndarray]:
    with torch.no_grad():
        prefix = model.pathways.prefix(_tensor(episodes.images))
        return {
            "2d": model.pathways.pathway(prefix, lora=False).tokens.numpy(),
            "3d": model.pathways.pathway(prefix, lora=True).tokens.numpy(),
        }


def _height(episodes: data.EpisodeSet) -> np.ndarray:
    """Height above the table per patch, NaN on table patches (there it is 0 and says nothing)."""
    height = episodes.geometry[..., 2].astype(np.float64).copy()
    height[episodes.colour_labels == 0] = np.nan
    return height


def _probes(spark: VLAModel, sf: VLAModel, dev: data.EpisodeSet, test: data.EpisodeSet) -> dict:
    fit, score = _pathway_tokens(spark, dev), _pathway_tokens(spark, test)
    fit["sf"], score["sf"] = _pathway_tokens(sf, dev)["3d"], _pathway_tokens(sf, test)["3d"]
    out = {}
    for name in ("2d", "3d", "sf"):
        out[name] = {
            "colour": colour_probe(fit[name], dev.colour_labels, score[name], test.colour_labels),
            "height": geometry_probe(fit[name], _height(dev), score[name], _height(test)),
        }
    return out


def _compute(scale: str) -> ClaimsData:
    torch.set_num_threads(1)
    test = data.episodes("eval", scale)
    dev = data.episodes("dev", scale)
    demos = data.demonstrations(test)
    encoder, _ = pretrained("encoder", scale, verbose=False)
    results = {}
    models = {}
    for name in VARIANT_NAMES:
        model, _ = pretrained(name, scale, verbose=False)
        models[name] = model
        results[name] = _result(model, test, demos)
    spark = models["spark"]
    with torch.no_grad():
        frozen = encoder(_tensor(test.images)).tokens
        prefix = spark.pathways.prefix(_tensor(test.images))
        identical = bool(torch.equal(spark.pathways.pathway(prefix, lora=False).tokens, frozen))
    curve = {}
    for k in BUDGETS:
        spark.k = k
        loop = closed_loop(spark, spark.frame_features(_tensor(test.images), _tensor(test.depth)), test)
        curve[k] = loop.rate()
    spark.k = budget(VARIANTS["spark"].rho, 2 * sim.NUM_PATCHES)
    return ClaimsData(
        is_depth=test.is_depth,
        target_mask=test.target_mask,
        results=results,
        probes=_probes(models["spark-dense"], models["sf"], dev, test),
        identical=identical,
        budget=curve,
        cost={
            "lm_ratio": cost.routed_to_dense_ratio(18, scope="lm"),
            "total_ratio": cost.routed_to_dense_ratio(18, scope="total"),
            "token_ratio": cost.token_ratio(18),
        },
    )


def run_claims(scale: str = "default") -> ClaimsData:
    """Gather :class:`ClaimsData` at ``scale`` (cached on the checkpoints' weights)."""
    hashes = [pretrained(n, scale, verbose=False)[1].weights_hash for n in NAMES]
    return cached(
        "spark-vla-claims", {"scale": scale, "weights": hashes}, lambda: _compute(scale), verbose=False
    )


# ----------------------------------------------------------------------------------------------- summary


def rates(data_: ClaimsData, name: str) -> dict[str, float]:
    """Success overall, on depth and on colour episodes."""
    s = data_.results[name].success
    return {
        "all": float(s.mean()),
        "depth": float(s[data_.is_depth].mean()),
        "colour": float(s[~data_.is_depth].mean()),
    }


def target_recall(data_: ClaimsData, name: str) -> float:
    """Mean over episodes of the fraction of target patches with at least one routed token."""
    selected = data_.results[name].selected
    covered = np.zeros_like(data_.target_mask)
    rows = np.arange(len(selected))[:, None]
    covered[rows, selected % sim.NUM_PATCHES] = True
    target = data_.target_mask
    return float(np.mean((covered & target).sum(1) / np.maximum(target.sum(1), 1)))


def share_3d(data_: ClaimsData, name: str, mask: np.ndarray) -> float:
    """Fraction of routed tokens from the 3D pathway over the episodes of ``mask``."""
    selected = data_.results[name].selected[mask]
    return float(np.mean(selected >= sim.NUM_PATCHES))


@dataclass(frozen=True)
class Summary:
    """Tables (rows of dicts) and one decision per claim id."""

    success_table: list[dict]
    routing_table: list[dict]
    probe_table: list[dict]
    decisions: dict[str, Decision]
    numbers: dict[str, float]


def summarise(d: ClaimsData) -> Summary:
    """The chapter's tables and decisions from one :class:`ClaimsData`."""
    seeds = {n: [n, f"{n}-s1", f"{n}-s2"] for n in SEEDED}
    success_rows = []
    for name in VARIANT_NAMES:
        r, res = rates(d, name), d.results[name]
        success_rows.append(
            {
                "model": name,
                "label": VARIANTS[name.split("-s")[0]].label if name in VARIANTS else name,
                "success": r["all"],
                "depth": r["depth"],
                "colour": r["colour"],
                "l1": res.l1,
                "tokens": res.tokens,
                "trainable": res.trainable,
                "total": res.total,
            }  # fmt: skip
        )
    routed = {"router": "spark", "attention": "attention-k", "random": "random-k", "gumbel": "gumbel"}
    routing_rows = [
        {
            "selection": key,
            "model": name,
            "success": rates(d, name)["all"],
            "recall": target_recall(d, name),
            "share_depth": share_3d(d, name, d.is_depth),
            "share_colour": share_3d(d, name, ~d.is_depth),
        }  # fmt: skip
        for key, name in routed.items()
    ]
    probe_rows = [{"tokens": k, **v} for k, v in d.probes.items()]

    c1 = decide_over_seeds(
        {
            seed: verdicts.distillation_criteria([rates(d, s)["depth"]], [rates(d, t)["depth"]])
            for seed, (s, t) in enumerate(zip(seeds["spark-dense"], seeds["2d"], strict=True))
        }
    )
    two_d = [rates(d, s)["depth"] for s in seeds["2d"]]
    spark_d = [rates(d, s)["depth"] for s in seeds["spark-dense"]]
    c1_pooled = decide(verdicts.distillation_criteria(spark_d, two_d))
    success = {"router": rates(d, "spark")["all"], "attention": rates(d, "attention-k")["all"],
               "random": rates(d, "random-k")["all"], "all": rates(d, "spark-dense")["all"]}  # fmt: skip
    recall = {"router": target_recall(d, "spark"), "random": target_recall(d, "random-k")}
    spark = d.results["spark"]
    depth = {
        n: rates(d, n)["depth"]
        for n in ("spark-dense", "response", "main-pathway", "no-distill", "spark", "gumbel")
    }
    decisions = {
        "c1-distillation": c1_pooled,
        "c2-preservation": decide(
            verdicts.preservation_criteria(
                d.identical,
                {"2d": d.probes["2d"]["colour"], "sf": d.probes["sf"]["colour"]},
                {"2d": d.probes["2d"]["height"], "3d": d.probes["3d"]["height"]},
            )
        ),
        "c3-routing": decide(verdicts.routing_criteria(success, recall)),
        "c4-pathways": decide(
            verdicts.pathway_share_criteria(
                share_3d(d, "spark", d.is_depth), share_3d(d, "spark", ~d.is_depth)
            )
        ),
        "c5-efficiency": decide(
            verdicts.efficiency_criteria(
                spark.trainable, spark.total, rates(d, "spark")["all"], rates(d, "larger")["all"]
            )
        ),
        "c6-compute": decide(verdicts.compute_criteria(d.cost["lm_ratio"], d.cost["total_ratio"])),
        "c7-ablations": decide(verdicts.ablation_criteria(depth)),
    }
    numbers = {
        "c1_per_seed_verdict": c1.verdict,
        "two_d_depth_mean": float(np.mean(two_d)),
        "spark_dense_depth_mean": float(np.mean(spark_d)),
        "oracle_depth_mean": float(np.mean([rates(d, s)["depth"] for s in seeds["oracle"]])),
    }
    return Summary(success_rows, routing_rows, probe_rows, decisions, numbers)


__all__ = [
    "BUDGETS",
    "VARIANT_NAMES",
    "ClaimsData",
    "ModelResult",
    "Summary",
    "rates",
    "run_claims",
    "share_3d",
    "summarise",
    "target_recall",
]
