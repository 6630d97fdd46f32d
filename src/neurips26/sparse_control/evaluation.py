"""The six axes of control, measured on the model itself (never on its linearisation).

A control (nodes and shared amplitudes ``a``, :class:`~neurips26.sparse_control.driver_omp.Control`) is run
on prompts and judged by:

1. **reach** — the share of prompts whose target becomes the model's choice, ``y_T(a) > 0``;
2. **reversal** — the share where ``−a`` moves ``y_T`` the other way by at least ``γ = 0.5`` of what ``a``
   moved it: ``sign(y(−a) − y(0)) = −sign(y(a) − y(0))`` and ``|y(−a) − y(0)| ≥ γ |y(a) − y(0)|``;
3. **dose response** — for ``α ∈ {−2, −1.5, …, 2}``, the mean over prompts of Spearman's
   ``ρ(α, y(α a))`` (the target readout should rise with the dose), the number of monotonicity
   violations, and the ``R²`` of a straight line through ``y(α a)`` on ``|α| ≤ 1``;
4. **feedback** — per prompt and set-point ``y* ∈ {−3, −1, 0, 1, 3}``, the controller
   ``a_{t+1} = a_t + κ G_C(a_t)⁺ (y* − y(a_t))`` with the Jacobian of the chosen nodes re-measured at
   ``a_t`` (``κ = 1``, ``t ≤ 5``, ``‖a‖ ≤ E``); success when ``|y − y*| ≤ 0.25``. The open-loop reference
   takes one step from ``a = 0`` with the Jacobian at 0 and never looks again;
5. **preservation** — the mean ``KL(p_0 ‖ p_a)`` at the last position of neutral windows, and the other
   tasks' accuracy change;
6. **held-out reuse** — reach and reversal again on held-out prompts (new templates) with the control
   frozen (preservation on neutral text does not depend on the prompts); reported as the held-out /
   held-in ratio of reach.

:func:`sparsely_controllable` applies the pass thresholds (reach ≥ 0.8, reversal ≥ 0.8, Spearman ≥ 0.9,
feedback ≥ 0.8, KL ≤ 0.05, held-out ratio ≥ 0.8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
from scipy.stats import spearmanr

from neurips26.nn import Decoder
from neurips26.sparse_control.driver_omp import Control
from neurips26.sparse_control.intervene import intervened, logits_with
from neurips26.sparse_control.model import task_accuracy
from neurips26.sparse_control.nodes import NodeSet
from neurips26.sparse_control.readouts import kl_last, target_readout
from neurips26.sparse_control.tasks import PromptSet
from neurips26.validation import check_int

GAMMA = 0.5
DOSES = np.linspace(-2.0, 2.0, 9)
SET_POINTS = (-3.0, -1.0, 0.0, 1.0, 3.0)
FEEDBACK_STEPS = 5
FEEDBACK_TOL = 0.25
KAPPA = 1.0
ENERGY = 4.0
PASS = {"reach": 0.8, "reversal": 0.8, "spearman": 0.9, "feedback": 0.8, "kl": 0.05, "held_out_ratio": 0.8}


def _dtype(model: Decoder) -> torch.dtype:
    return next(model.parameters()).dtype


@torch.no_grad()
def readout_at(
    model: Decoder, nodes: NodeSet, control: Control, prompts: PromptSet, alpha: float = 1.0
) -> np.ndarray:
    """``y_T`` of every prompt with the control at ``alpha`` times its amplitudes ``(N,)``."""
    ids = torch.from_numpy(prompts.ids)
    amps = torch.tensor(alpha * control.amplitudes, dtype=_dtype(model))
    return target_readout(logits_with(model, ids, nodes, control.nodes, amps), prompts).cpu().numpy()


def reach(y: np.ndarray) -> float:
    """Share of prompts whose target is the model's choice."""
    return float(np.mean(y > 0))


def reversal(y0: np.ndarray, y_plus: np.ndarray, y_minus: np.ndarray, *, gamma: float = GAMMA) -> float:
    """Share of prompts where the negated control moves ``y`` the other way by ≥ ``gamma`` of the effect."""
    up, down = y_plus - y0, y_minus - y0
    ok = (np.sign(down) == -np.sign(up)) & (np.abs(down) >= gamma * np.abs(up)) & (up != 0)
    return float(np.mean(ok))


def dose_response(doses: np.ndarray, ys: np.ndarray) -> dict[str, float]:
    """``ys`` ``(D, N)`` at ``doses`` ``(D,)``: mean Spearman, monotonicity violations per prompt, and the
    mean ``R²`` of a line on ``|α| ≤ 1``."""
    rho = []
    for col in ys.T:
        r = spearmanr(doses, col).statistic if np.ptp(col) > 0 else 0.0
        rho.append(float(r))
    direction = np.sign(ys[-1] - ys[0])
    steps = np.diff(ys, axis=0) * direction[None, :]
    small = np.abs(doses) <= 1.0
    r2 = []
    for col in ys[small].T:
        x = doses[small]
        fit = np.polyval(np.polyfit(x, col, 1), x)
        total = ((col - col.mean()) ** 2).sum()
        r2.append(1.0 - ((col - fit) ** 2).sum() / total if total > 0 else 0.0)
    return {
        "spearman": float(np.mean(rho)),
        "violations": float(np.mean((steps < 0).sum(0))),
        "r2": float(np.mean(r2)),
    }


def feedback(
    model: Decoder,
    nodes: NodeSet,
    control: Control,
    prompts: PromptSet,
    *,
    set_points: Sequence[float] = SET_POINTS,
    steps: int = FEEDBACK_STEPS,
    kappa: float = KAPPA,
    energy: float = ENERGY,
) -> dict[str, float]:
    """Closed- and open-loop set-point tracking with the control's nodes (module doc): success rates and the
    mean number of closed-loop iterations to success."""
    n, k = len(prompts), len(control)
    if k == 0:
        return {"closed": 0.0, "open": 0.0, "iterations": float("nan")}
    rep = prompts.subset(np.repeat(np.arange(n), len(set_points)))
    goal = np.tile(np.asarray(set_points, dtype=float), n)
    ids = torch.from_numpy(rep.ids)
    sub = nodes.subset(control.nodes)
    dtype = _dtype(model)

    def y_at(a_rows: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return (
                target_readout(
                    logits_with(model, ids, sub, np.arange(k), torch.tensor(a_rows, dtype=dtype)), rep
                )
                .cpu()
                .numpy()
            )

    def jac(a_rows: np.ndarray) -> np.ndarray:
        amps = torch.tensor(a_rows, dtype=dtype, requires_grad=True)
        with intervened(model, sub, np.arange(k), amps):
            y = target_readout(model(ids).logits[:, -1], rep)
        (g,) = torch.autograd.grad(y.sum(), amps)
        return g.detach().cpu().numpy()

    return track(y_at, jac, goal, k, steps=steps, kappa=kappa, energy=energy)


def track(
    y_at: Callable[[np.ndarray], np.ndarray],
    jac: Callable[[np.ndarray], np.ndarray],
    goal: np.ndarray,
    k: int,
    *,
    steps: int = FEEDBACK_STEPS,
    kappa: float = KAPPA,
    energy: float = ENERGY,
    tol: float = FEEDBACK_TOL,
) -> dict[str, float]:
    """Set-point tracking of ``len(goal)`` independent rows, each with its own ``k`` amplitudes: the
    readouts ``y_at(A)`` and their Jacobians ``jac(A)`` ``(rows, k)`` at amplitudes ``A`` ``(rows, k)``.
    Closed loop: ``steps`` updates ``a ← a + κ g⁺ (y* − y)`` re-measuring ``y`` and ``g``; open loop: one
    update from 0. Returns the success rates and the closed loop's mean iterations to success."""
    check_int("k", k, minimum=1)

    def step(a_rows: np.ndarray, y: np.ndarray, g: np.ndarray) -> np.ndarray:
        pinv = g / np.maximum((g * g).sum(1, keepdims=True), 1e-300)  # the pseudo-inverse of a 1 x k row
        new = a_rows + kappa * pinv * (goal - y)[:, None]
        norms = np.linalg.norm(new, axis=1, keepdims=True)
        return np.where(norms > energy, new * energy / np.maximum(norms, 1e-300), new)

    zero = np.zeros((len(goal), k))
    y0 = y_at(zero)
    open_ok = np.abs(y_at(step(zero, y0, jac(zero))) - goal) <= tol
    a, y = zero, y0
    done = np.abs(y - goal) <= tol
    iterations = np.zeros(len(goal))
    for t in range(1, steps + 1):
        a = step(a, y, jac(a))
        y = y_at(a)
        hit = (np.abs(y - goal) <= tol) & ~done
        iterations[hit] = t
        done |= hit
    return {
        "closed": float(done.mean()),
        "open": float(open_ok.mean()),
        "iterations": float(iterations[done].mean()) if done.any() else float("nan"),
    }


@torch.no_grad()
def neutral_kl(
    model: Decoder, nodes: NodeSet, control: Control, neutral_ids: np.ndarray, alpha: float = 1.0
) -> float:
    """Mean ``KL(p_0 ‖ p_a)`` at the last position of the neutral windows."""
    ids = torch.from_numpy(neutral_ids)
    base = model(ids).logits[:, -1]
    amps = torch.tensor(alpha * control.amplitudes, dtype=_dtype(model))
    return float(kl_last(base, logits_with(model, ids, nodes, control.nodes, amps)).mean())


@torch.no_grad()
def other_task_change(model: Decoder, nodes: NodeSet, control: Control, others: Sequence[PromptSet]) -> float:
    """The largest drop of another task's accuracy under the control (a positive number is a loss)."""
    drops = []
    for p in others:
        before = task_accuracy(model, p)
        with intervened(model, nodes, control.nodes, torch.tensor(control.amplitudes, dtype=_dtype(model))):
            after = task_accuracy(model, p)
        drops.append(before - after)
    return float(max(drops)) if drops else 0.0


@dataclass(frozen=True)
class Axes:
    """The six axes of one control on one task (module doc); ``held_*`` on the held-out prompts."""

    k: int
    reach: float
    reversal: float
    spearman: float
    violations: float
    r2: float
    feedback: float
    open_loop: float
    kl: float
    other_drop: float
    held_reach: float
    held_reversal: float

    @property
    def held_out_ratio(self) -> float:
        return self.held_reach / self.reach if self.reach > 0 else 0.0

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "held_out_ratio": self.held_out_ratio}


def six_axes(
    model: Decoder,
    nodes: NodeSet,
    control: Control,
    prompts: PromptSet,
    held_out: PromptSet,
    neutral_ids: np.ndarray,
    others: Sequence[PromptSet] = (),
    *,
    feedback_prompts: int = 16,
) -> Axes:
    """Every axis of ``control`` (feedback on the first ``feedback_prompts`` prompts)."""
    y0 = readout_at(model, nodes, control, prompts, 0.0)
    yp = readout_at(model, nodes, control, prompts, 1.0)
    ym = readout_at(model, nodes, control, prompts, -1.0)
    ys = np.stack([readout_at(model, nodes, control, prompts, float(a)) for a in DOSES])
    dose = dose_response(DOSES, ys)
    fb = feedback(model, nodes, control, prompts.subset(np.arange(min(feedback_prompts, len(prompts)))))
    h0 = readout_at(model, nodes, control, held_out, 0.0)
    hp = readout_at(model, nodes, control, held_out, 1.0)
    hm = readout_at(model, nodes, control, held_out, -1.0)
    kl = neutral_kl(model, nodes, control, neutral_ids)
    return Axes(
        k=len(control),
        reach=reach(yp),
        reversal=reversal(y0, yp, ym),
        spearman=dose["spearman"],
        violations=dose["violations"],
        r2=dose["r2"],
        feedback=fb["closed"],
        open_loop=fb["open"],
        kl=kl,
        other_drop=other_task_change(model, nodes, control, others),
        held_reach=reach(hp),
        held_reversal=reversal(h0, hp, hm),
    )


def sparsely_controllable(axes: Axes) -> dict[str, bool]:
    """Which axes pass their thresholds, and ``"all"``."""
    passed = {
        "reach": axes.reach >= PASS["reach"],
        "reversal": axes.reversal >= PASS["reversal"],
        "spearman": axes.spearman >= PASS["spearman"],
        "feedback": axes.feedback >= PASS["feedback"],
        "kl": axes.kl <= PASS["kl"],
        "held_out_ratio": axes.held_out_ratio >= PASS["held_out_ratio"],
    }
    return {**passed, "all": all(passed.values())}


def matched_kl(
    model: Decoder,
    nodes: NodeSet,
    control: Control,
    prompts: PromptSet,
    neutral_ids: np.ndarray,
    *,
    goal: float = 0.0,
    energy: float = ENERGY,
    iterations: int = 30,
) -> dict[str, float]:
    """The neutral KL of the control scaled to a matched effect: ``α ≥ 0`` found by bisection so that the
    mean target readout reaches ``goal``, within ``‖α a‖ ≤ energy``; ``reached`` says whether it did (else
    ``α`` is the largest allowed)."""
    norm = float(np.linalg.norm(control.amplitudes))
    if norm == 0:
        return {"alpha": 0.0, "kl": 0.0, "reached": 0.0}
    top = energy / norm

    def mean_y(alpha: float) -> float:
        return float(readout_at(model, nodes, control, prompts, alpha).mean())

    reached = mean_y(top) >= goal
    lo, hi = 0.0, top
    if reached:
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if mean_y(mid) < goal else (lo, mid)
    alpha = hi if reached else top
    return {
        "alpha": alpha,
        "kl": neutral_kl(model, nodes, control, neutral_ids, alpha),
        "reached": float(reached),
    }


LINEAR_DOSES = np.linspace(-0.5, 0.5, 5)


def linearisation_r2(
    model: Decoder,
    nodes: NodeSet,
    control: Control,
    prompts: PromptSet,
    G_T: np.ndarray,
    doses: np.ndarray = LINEAR_DOSES,
) -> float:
    """How well the linearisation predicts the model: ``R²`` of the measured ``y_T(α a)`` against
    ``y_T(0) + α G_T[:, C] a``, pooled over prompts and doses ``α``."""
    y0 = readout_at(model, nodes, control, prompts, 0.0)
    slope = np.asarray(G_T)[:, control.nodes] @ control.amplitudes
    measured = np.stack([readout_at(model, nodes, control, prompts, float(a)) - y0 for a in doses])
    predicted = np.stack([a * slope for a in doses])
    total = ((measured - measured.mean()) ** 2).sum()
    return float(1.0 - ((measured - predicted) ** 2).sum() / total) if total > 0 else 0.0
