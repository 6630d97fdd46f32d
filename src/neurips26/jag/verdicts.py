"""The criteria that decide claims J1–J7 of chapter 07, on :mod:`neurips26.jag.experiments`, with the
margins of the chapter's claims table fixed before the evaluation loops were scored.

J2–J7 are decided per noise seed of the rollouts and then over the seeds
(:func:`~neurips26.criteria.decide_over_seeds`); J1 on its one long run, by exact facts read off the KV cache
and the memory (the wall clock is shown beside it and decides nothing).

* J1 :func:`j1_criteria` — the windowed model's keys per query equal the cost model's ``b·n·min(k, W)`` at
  every frame of a 200-frame rollout (constant from frame ``W`` on) and its cache bytes stop growing; the
  memory's bytes never change; the full-history model's keys grow by ``b·n`` every frame.
* J2 :func:`j2_criteria` — revisit PSNR of JAG (SGF) at least :data:`J2_GAIN` (0.5 dB) above Self Forcing
  RGB-only and above Teacher Forcing; and its place-specific part (the revisit PSNR minus the PSNR between
  frames at other poses) at least 0.5 dB above SF RGB-only's.
* J3 :func:`j3_criteria` — the co-visible PSNR of JAG (SGF) decays more slowly than Self Forcing
  RGB-only's (a larger slope) and its co-visible AbsRel grows more slowly than the memoryless dual-branch
  student's (the RGB-only baseline has no depth).
* J4 :func:`j4_criteria` — reprojection error of JAG (SGF) below the memoryless student's, and its
  co-visible depth AbsRel too (consistent and closer to the truth).
* J5 :func:`j5_criteria` — SGF without the reward (memory from its own frames in training) against the
  teacher-forced memory: a larger co-visible PSNR slope and a higher PSNR over the second half of the loop.
* J6 :func:`j6_criteria` — SGF against SGF without the reward: higher revisit PSNR, lower reprojection
  error, a PSNR at most :data:`J6_COST` (0.5 dB) lower, and at least :data:`J6_DETAIL` (half) of its image
  detail (the frames' spatial standard deviation).

Three criteria were added after the first default run, and only ever make a verdict harder: the first
filmstrips showed the SGF student drawing smooth, nearly identical frames, which wins revisit PSNR, PSNR
and reprojection error without drawing the place. The place-specific revisit gain (J2), the depth AbsRel
beside the reprojection error (J4) and the detail ratio (J6) test for exactly that.
* J7 :func:`j7_criteria` — Diffusion Forcing's counted network evaluations per frame at least
  :data:`J7_RATIO` (5×) JAG's, at a PSNR at most :data:`J7_COST` (0.5 dB) below Diffusion Forcing's.
"""

from __future__ import annotations

import numpy as np

from neurips26.criteria import Criterion, Decision, at_least, decide, decide_over_seeds, higher, holds, lower
from neurips26.jag.experiments import CostRun, RolloutTable, Scores

J2_GAIN = 0.5
J6_COST = 0.5
J6_DETAIL = 0.5
J7_RATIO = 5.0
J7_COST = 0.5
#: Natural units of the compared quantities (the scale of a comparison when both values are 0).
DB = 1.0
SLOPE_DB = 0.01
SLOPE_ABSREL = 0.001
REPROJECTION = 0.01

CLAIM_IDS: tuple[str, ...] = (
    "j1-constant-cost",
    "j2-revisit",
    "j3-drift",
    "j4-reprojection",
    "j5-self-forced-memory",
    "j6-reward",
    "j7-few-step",
)


def _at(table: RolloutTable, key: str, seed: int) -> Scores:
    return table[key][seed]


def j1_criteria(run: CostRun) -> list[Criterion]:
    """J1 on the 200-frame run (module docstring)."""
    window, full = run.keys["window"], run.keys["full"]
    settled = slice(run.window - 1, None)  # frame index k ≥ W − 1: the window is full
    kv = run.kv_bytes["window"][settled]
    return [
        holds(
            "windowed keys per query = cost model b·n·min(k, W) at every frame",
            bool(np.array_equal(window, run.model_keys("window"))),
        ),
        holds("windowed KV cache bytes constant once the window is full", bool((kv == kv[0]).all())),
        holds(
            "voxel memory bytes constant over the run",
            bool(np.unique(run.memory_bytes["window"]).size == 1 and run.memory_bytes["window"][0] > 0),
        ),
        holds(
            "full-history keys per query = cost model b·n·k (linear)",
            bool(np.array_equal(full, run.model_keys("full"))),
        ),
    ]


def j2_criteria(table: RolloutTable, seed: int) -> list[Criterion]:
    """J2: revisit PSNR gains of JAG (SGF) over SF RGB-only and TF ≥ 0.5 dB."""
    sgf = _at(table, "jag-sgf", seed).mean("revisit")
    return [
        at_least(
            f"revisit PSNR JAG (SGF) − SF RGB-only ≥ {J2_GAIN:g} dB",
            sgf - _at(table, "sf-rgb", seed).mean("revisit"),
            J2_GAIN,
        ),
        at_least(
            f"revisit PSNR JAG (SGF) − Teacher Forcing ≥ {J2_GAIN:g} dB",
            sgf - _at(table, "tf", seed).mean("revisit"),
            J2_GAIN,
        ),
        at_least(
            f"place-specific revisit gain (revisit − other pairs) JAG (SGF) − SF RGB-only ≥ {J2_GAIN:g} dB",
            _at(table, "jag-sgf", seed).mean("specificity") - _at(table, "sf-rgb", seed).mean("specificity"),
            J2_GAIN,
        ),
    ]


def j3_criteria(table: RolloutTable, seed: int) -> list[Criterion]:
    """J3: co-visible PSNR slope above SF RGB-only's; co-visible AbsRel slope below the memoryless
    student's."""
    sgf = _at(table, "jag-sgf", seed)
    return [
        higher(
            "co-visible PSNR slope JAG (SGF) > SF RGB-only",
            sgf.slope("cov_psnr"),
            _at(table, "sf-rgb", seed).slope("cov_psnr"),
            unit=SLOPE_DB,
        ),
        lower(
            "co-visible AbsRel slope JAG (SGF) < JAG without memory",
            sgf.slope("cov_absrel"),
            _at(table, "jag-nosgf", seed).slope("cov_absrel"),
            unit=SLOPE_ABSREL,
        ),
    ]


def j4_criteria(table: RolloutTable, seed: int) -> list[Criterion]:
    """J4: reprojection error and co-visible AbsRel of JAG (SGF) below JAG without memory."""
    sgf, plain = _at(table, "jag-sgf", seed), _at(table, "jag-nosgf", seed)
    return [
        lower(
            "reprojection error JAG (SGF) < JAG without memory",
            sgf.mean("reprojection"),
            plain.mean("reprojection"),
            unit=REPROJECTION,
        ),
        lower(
            "co-visible depth AbsRel JAG (SGF) < JAG without memory",
            sgf.mean("cov_absrel"),
            plain.mean("cov_absrel"),
            unit=SLOPE_ABSREL,
        ),
    ]


def j5_criteria(table: RolloutTable, seed: int) -> list[Criterion]:
    """J5: the self-forced memory (SGF without reward) drifts less than the teacher-forced one."""
    own, forced = _at(table, "jag-sgf-noreward", seed), _at(table, "jag-tfmem", seed)
    return [
        higher(
            "co-visible PSNR slope: self-forced > teacher-forced memory",
            own.slope("cov_psnr"),
            forced.slope("cov_psnr"),
            unit=SLOPE_DB,
        ),
        higher(
            "PSNR over the second half: self-forced > teacher-forced memory",
            own.late(),
            forced.late(),
            unit=DB,
        ),
    ]


def j6_criteria(table: RolloutTable, seed: int) -> list[Criterion]:
    """J6: the reward improves revisits and reprojection at ≤ 0.5 dB PSNR cost, keeping half the detail."""
    sgf, plain = _at(table, "jag-sgf", seed), _at(table, "jag-sgf-noreward", seed)
    return [
        higher("revisit PSNR: SGF > SGF without reward", sgf.mean("revisit"), plain.mean("revisit"), unit=DB),
        lower(
            "reprojection error: SGF < SGF without reward",
            sgf.mean("reprojection"),
            plain.mean("reprojection"),
            unit=REPROJECTION,
        ),
        at_least(
            f"PSNR SGF − SGF without reward ≥ −{J6_COST:g} dB",
            sgf.mean("psnr") - plain.mean("psnr"),
            -J6_COST,
        ),
        at_least(
            f"image detail SGF / SGF without reward ≥ {J6_DETAIL:g}",
            sgf.mean("detail") / plain.mean("detail"),
            J6_DETAIL,
        ),
    ]


def j7_criteria(table: RolloutTable, seed: int) -> list[Criterion]:
    """J7: ≥ 5× fewer counted network evaluations per frame than DF, at ≤ 0.5 dB PSNR cost."""
    sgf, df = _at(table, "jag-sgf", seed), _at(table, "df", seed)
    return [
        at_least(f"NFE per frame DF / JAG (SGF) ≥ {J7_RATIO:g}", df.nfe / sgf.nfe, J7_RATIO),
        at_least(f"PSNR JAG (SGF) − DF ≥ −{J7_COST:g} dB", sgf.mean("psnr") - df.mean("psnr"), -J7_COST),
    ]


SEEDED = {
    "j2-revisit": j2_criteria,
    "j3-drift": j3_criteria,
    "j4-reprojection": j4_criteria,
    "j5-self-forced-memory": j5_criteria,
    "j6-reward": j6_criteria,
    "j7-few-step": j7_criteria,
}


def decide_claim(claim: str, table: RolloutTable, run: CostRun | None = None) -> Decision:
    """The decision of ``claim`` (one of :data:`CLAIM_IDS`): J1 needs ``run``; the others are decided over
    the table's seeds."""
    if claim == "j1-constant-cost":
        if run is None:
            raise ValueError("run must be given for j1-constant-cost (the cost_run of the scale)")
        return decide(j1_criteria(run))
    if claim not in SEEDED:
        raise ValueError(f"claim must be one of {', '.join(CLAIM_IDS)}; got {claim!r}")
    return decide_over_seeds({seed: SEEDED[claim](table, seed) for seed in table.seeds})


__all__ = [
    "CLAIM_IDS",
    "J2_GAIN",
    "J6_COST",
    "J6_DETAIL",
    "J7_COST",
    "J7_RATIO",
    "decide_claim",
    "j1_criteria",
    "j2_criteria",
    "j3_criteria",
    "j4_criteria",
    "j5_criteria",
    "j6_criteria",
    "j7_criteria",
]
