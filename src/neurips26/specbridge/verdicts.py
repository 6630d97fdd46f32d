"""The criteria that decide chapter 19's claims, fixed before any method met the evaluation tasks.

Every rate is a share of the evaluation tasks (40 at default) passing a layer: the structural judge's
alignment, computable validation, proof validation (``lean-auto`` profile). Everything is deterministic
(the executor, z3 under a resource limit, the offline policies), so a verdict is the same on any CPU;
one task moves a rate by 0.025, and the margins below are at least two tasks. Gains are in absolute
points (the paper's unit is unknown).

* C1 :func:`gain_criteria` — SpecBridge beats few-shot + CoT by ≥ :data:`ALIGN_GAIN` (5 points) on
  alignment and ≥ :data:`CHECK_GAIN` (10 points) on computable and on proof validation; and on
  computable and proof, SpecBridge > NLFP-only > few-shot + CoT ≥ few-shot > direct.
* C2 :func:`rigour_criteria` — the gain over few-shot + CoT grows with the layer's rigour: alignment <
  computable < proof.
* C3 :func:`mining_criteria` — mining with the round trip gives fewer patterns, a higher mean precision,
  and ≥ :data:`MINING_GAIN` (5 points) more proof passes than mining without it.
* C4 :func:`leniency_criteria` — the judge is lenient: for each baseline (direct, few-shot, few-shot +
  CoT) some specs are judged aligned yet fail computable validation; for few-shot + CoT, alignment −
  computable ≥ :data:`LENIENCY_GAP` (10 points).
* C5 :func:`unbounded_criteria` — proofs reach specs that cannot be executed: among the generated specs
  with an unbounded quantifier (none of which can pass computable validation), at least one passes proof
  validation.
"""

from __future__ import annotations

from collections.abc import Mapping

from neurips26.criteria import Criterion, at_least, higher, higher_or_equal, holds, lower

ALIGN_GAIN = 0.05
CHECK_GAIN = 0.10
MINING_GAIN = 0.05
LENIENCY_GAP = 0.10
UNIT = 0.025
"""One task of 40: the natural unit of a comparison of two rates."""

LAYERS: tuple[str, ...] = ("alignment", "computable", "proof")
BASELINES: tuple[str, ...] = ("direct", "few_shot", "few_shot_cot")
CLAIM_IDS = ("c1-gains", "c2-rigour", "c3-mining", "c4-leniency", "c5-unbounded")

Rates = Mapping[str, Mapping[str, float]]
"""``rates[method][layer]``: the share of evaluation tasks passing ``layer``."""


def gain_criteria(rates: Rates) -> list[Criterion]:
    """SpecBridge's gains over few-shot + CoT per layer, and the method ordering on computable and proof."""
    sb, cot = rates["specbridge"], rates["few_shot_cot"]
    out = [
        at_least(
            f"alignment: SpecBridge − few-shot+CoT ≥ {ALIGN_GAIN:.0%}",
            sb["alignment"] - cot["alignment"],
            ALIGN_GAIN,
        ),
        at_least(
            f"computable: SpecBridge − few-shot+CoT ≥ {CHECK_GAIN:.0%}",
            sb["computable"] - cot["computable"],
            CHECK_GAIN,
        ),
        at_least(
            f"proof: SpecBridge − few-shot+CoT ≥ {CHECK_GAIN:.0%}", sb["proof"] - cot["proof"], CHECK_GAIN
        ),
    ]
    for layer in ("computable", "proof"):
        r = {m: rates[m][layer] for m in ("specbridge", "nlfp", "few_shot_cot", "few_shot", "direct")}
        out += [
            higher(f"{layer}: SpecBridge > NLFP-only", r["specbridge"], r["nlfp"], unit=UNIT),
            higher(f"{layer}: NLFP-only > few-shot+CoT", r["nlfp"], r["few_shot_cot"], unit=UNIT),
            higher_or_equal(f"{layer}: few-shot+CoT ≥ few-shot", r["few_shot_cot"], r["few_shot"], unit=UNIT),
            higher(f"{layer}: few-shot > direct", r["few_shot"], r["direct"], unit=UNIT),
        ]
    return out


def rigour_criteria(rates: Rates) -> list[Criterion]:
    """SpecBridge − few-shot + CoT per layer, ordered by rigour."""
    gain = {layer: rates["specbridge"][layer] - rates["few_shot_cot"][layer] for layer in LAYERS}
    return [
        higher("gain: computable > alignment", gain["computable"], gain["alignment"], unit=UNIT),
        higher("gain: proof > computable", gain["proof"], gain["computable"], unit=UNIT),
    ]


def mining_criteria(
    n_verified: int, n_unverified: int, precision_verified: float, precision_unverified: float, proof: Mapping
) -> list[Criterion]:
    """Pattern counts and mean precisions of mining with and without the round trip; ``proof``: the proof
    pass rates of ``specbridge`` and ``no_round_trip``."""
    return [
        lower("patterns: with round trip < without", n_verified, n_unverified, unit=1.0),
        higher(
            "mean precision: with round trip > without", precision_verified, precision_unverified, unit=0.05
        ),
        at_least(
            f"proof: with round trip − without ≥ {MINING_GAIN:.0%}",
            proof["specbridge"] - proof["no_round_trip"],
            MINING_GAIN,
        ),
    ]


def leniency_criteria(aligned_failing: Mapping[str, int], rates: Rates) -> list[Criterion]:
    """``aligned_failing[m]``: tasks whose spec from baseline ``m`` is judged aligned yet fails computable
    validation; ``rates`` for few-shot + CoT's alignment and computable rates."""
    out = [
        at_least(f"{m}: aligned yet failing computable ≥ 1 task", aligned_failing[m], 1, scale=1.0)
        for m in BASELINES
    ]
    cot = rates["few_shot_cot"]
    out.append(
        at_least(
            f"few-shot+CoT: alignment − computable ≥ {LENIENCY_GAP:.0%}",
            cot["alignment"] - cot["computable"],
            LENIENCY_GAP,
        )
    )
    return out


def unbounded_criteria(unbounded: int, proved: int, computable: int) -> list[Criterion]:
    """Counts over every method's generated specs: those with an unbounded quantifier, how many of them pass
    proof validation, and how many pass computable validation (0 by definition: a consistency check)."""
    return [
        at_least("specs with an unbounded quantifier ≥ 1", unbounded, 1, scale=1.0),
        at_least("of them, proved ≥ 1", proved, 1, scale=1.0),
        holds("of them, none passes computable validation (not executable)", computable == 0),
    ]


__all__ = [
    "ALIGN_GAIN",
    "BASELINES",
    "CHECK_GAIN",
    "CLAIM_IDS",
    "LAYERS",
    "LENIENCY_GAP",
    "MINING_GAIN",
    "UNIT",
    "gain_criteria",
    "leniency_criteria",
    "mining_criteria",
    "rigour_criteria",
    "unbounded_criteria",
]
