"""The criteria that decide chapter 13's claims, fixed before the claims were measured. Success margins are
in episodes out of the 12 shared ones (8 in the sweep and the architecture study).

* success-half-tokens :func:`success_criteria` — at ``K = P/2`` COSTGRAD succeeds in at least Full's
  episodes minus :data:`SLACK` (2) and in at least Random's plus :data:`SLACK`.
* planning-speed :func:`speed_criteria` — at ``P = 256`` the declared cost of a Full step is at least
  :data:`SPEEDUP` (2.0) times COSTGRAD's at ``K = 128``, and the probe is at most :data:`PROBE_SHARE` (5%)
  of COSTGRAD's step.
* half-iterations :func:`half_iterations_criteria` — COSTGRAD with half the CEM iterations succeeds in at
  least Full's episodes (all iterations) minus :data:`SLACK`, at a declared cost at least
  :data:`HALF_SPEEDUP` (3.5) times lower.
* sparsity-sweep :func:`sweep_criteria` — COSTGRAD's lead over Random at ``K/P = 1/4`` is at least its lead
  at ``3/4``, and COSTGRAD at ``1/8`` succeeds less often than at ``1/2``.
* inverted :func:`inverted_criteria` — the inverted selection succeeds at most as often as Random.
* architecture :func:`architecture_criteria` — COSTGRAD's lead over Random, averaged over three seeds, is
  smaller on the input-concat predictors than on the AdaLN-Zero ones.
* drift :func:`drift_criteria` — the drift of COSTGRAD's selection over a random one's is below 1 on
  AdaLN-Zero and higher on input-concat.
* stability :func:`stability_criteria` — the mean top-K IoU of COSTGRAD across three seeds exceeds
  PREDATTN's by :data:`IOU_GAIN` (0.1).
* probe-robustness :func:`probe_criteria` — the mean Spearman correlation of COSTGRAD's scores under the
  nine other probes with the zero probe's is at least :data:`SPEARMAN` (0.8).
"""

from __future__ import annotations

from neurips26.criteria import Criterion, at_least, at_most, below, higher

SLACK = 2
SPEEDUP = 2.0
PROBE_SHARE = 0.05
HALF_SPEEDUP = 3.5
IOU_GAIN = 0.1
SPEARMAN = 0.8

CLAIM_IDS = (
    "success-half-tokens",
    "planning-speed",
    "half-iterations",
    "sparsity-sweep",
    "inverted",
    "architecture",
    "drift",
    "stability",
    "probe-robustness",
)


def success_criteria(costgrad: int, full: int, random: int) -> list[Criterion]:
    """Successes (episodes) of each."""
    return [
        at_least(f"COSTGRAD ≥ Full − {SLACK} episodes", costgrad - (full - SLACK), 0, scale=1.0),
        at_least(f"COSTGRAD ≥ Random + {SLACK} episodes", costgrad - (random + SLACK), 0, scale=1.0),
    ]


def speed_criteria(full_cost: float, costgrad_cost: float, probe_share: float) -> list[Criterion]:
    return [
        at_least(f"declared cost Full / COSTGRAD ≥ {SPEEDUP}", full_cost / costgrad_cost, SPEEDUP),
        at_most(f"probe ≤ {PROBE_SHARE:.0%} of COSTGRAD's step", probe_share, PROBE_SHARE),
    ]


def half_iterations_criteria(costgrad_half: int, full: int, ratio: float) -> list[Criterion]:
    margin = costgrad_half - (full - SLACK)
    return [
        at_least(f"COSTGRAD (half the iterations) ≥ Full − {SLACK} episodes", margin, 0, scale=1.0),
        at_least(f"declared cost Full / COSTGRAD (half) ≥ {HALF_SPEEDUP}", ratio, HALF_SPEEDUP),
    ]


def sweep_criteria(
    gap_quarter: float, gap_three_quarters: float, eighth: float, half: float
) -> list[Criterion]:
    """Leads over Random (success rates) at K/P = 1/4 and 3/4; COSTGRAD's success at 1/8 and 1/2."""
    return [
        at_least("lead over Random at 1/4 ≥ lead at 3/4", gap_quarter - gap_three_quarters, 0.0, scale=1.0),
        below("success at 1/8 < success at 1/2", eighth - half, 0.0, scale=1.0),
    ]


def inverted_criteria(inverted: int, random: int) -> list[Criterion]:
    return [at_most("inverted ≤ Random (episodes)", inverted - random, 0, scale=1.0)]


def architecture_criteria(lead_adaln: float, lead_concat: float) -> list[Criterion]:
    """Mean COSTGRAD − Random success rates over seeds."""
    return [higher("lead on AdaLN-Zero > lead on concat", lead_adaln, lead_concat, unit=1.0)]


def drift_criteria(ratio_adaln: float, ratio_concat: float) -> list[Criterion]:
    return [
        below("drift ratio (selected / random) on AdaLN-Zero < 1", ratio_adaln, 1.0),
        higher("drift ratio on concat > on AdaLN-Zero", ratio_concat, ratio_adaln, unit=1.0),
    ]


def stability_criteria(iou_costgrad: float, iou_predattn: float) -> list[Criterion]:
    return [at_least(f"IoU COSTGRAD − PREDATTN ≥ {IOU_GAIN}", iou_costgrad - iou_predattn, IOU_GAIN)]


def probe_criteria(spearman: float) -> list[Criterion]:
    return [at_least(f"mean Spearman across probes ≥ {SPEARMAN}", spearman, SPEARMAN)]
