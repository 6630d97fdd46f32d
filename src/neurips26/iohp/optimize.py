"""Minimising IOHP's objective E (§3.5): batched Adam, restarts, discrete repair, legalisation; SA ablation.

The abstract names a unified objective but no solver; §3.5 settles one, sized to the chapter's CPU budget:

1. **Restarts.** Every scene is optimised ``R`` times at once (the batch axis holds scenes x restarts).
   Restart 0 starts from the initial layout ``xi0``; restart ``r > 0`` jitters every position by
   ``N(0, 0.3^2)`` m per axis and turns every object by 180 degrees with probability 0.5, from the stream
   ``sub_seed(seed, scene, r)`` (so a scene's restarts do not depend on the rest of the batch).
2. **Adam** on ``(x_i, y_i, theta_i)`` (lr 0.02, betas 0.9 / 0.999) for ``steps`` iterations (150), with
   the temperature annealed geometrically, ``tau_t = tau_0 (tau_1 / tau_0)^(t / (steps - 1))`` from 0.05 to
   0.005 m, and the gradient clipped to norm 1 **per scene x restart** (its ``n x 3`` entries): the batch
   entries are independent problems, and one global norm would make a scene's result depend on the
   other scenes of the batch.
3. **Best so far.** The initial layout and every restart's end point are scored by E at the final ``tau``;
   the lowest wins (the initial layout on ties), so E so far never exceeds the initial E.
4. **Discrete repair.** A scene whose winner still has a penalised pair with ``phi > 1e-4`` (a penetration
   deeper than 1 cm in a term whose weight is not 0: furniture, obstacles and, with proxies on, the proxy
   terms) gets up to four candidates, built from its two worst offending objects (ranked by their summed
   offending ``phi``): a +90 degree turn, a swap of wall slots with the widest other object standing
   against a wall (objects not offending first), then the -90 degree turn and the next swap. A wall slot is
   a wall segment with an object's back-face centre within 0.1 m of it and the object facing into the room
   (within 30 degrees of the wall's inward normal); swapping puts each
   object's back on the other's slot point, facing into the room (an offender not on a wall trades its pose
   for the partner's slot). Each candidate gets ``repair_steps`` more Adam steps (50, tau annealed again)
   and is kept when its E at the final tau is lower: the repair never increases E.
5. **Legalisation** (``legalise``, on by default; ours, not in the digest). The penalty terms alone leave
   layouts physically invalid: ``phi`` is quadratic, so a proxy conflict that cannot be resolved is shared
   with furniture-wall and furniture-furniture overlap in proportion ``w_p / w_c``, and the soft minimum
   sits up to ``tau log 4`` below the true depth (overlaps of a few millimetres cost nothing yet exceed the
   metrics' 0.001 m^2). A scene whose winner breaks an exact physical rule of the metrics
   (:mod:`neurips26.iohp.metrics`: a pair overlapping by more than 0.001 m^2, a piece more than 1 cm out
   of the room, a piece in a door swing; its *violations*) goes through

   a. **push**: ``legalise_steps`` (30) Adam steps at the final tau and half the learning rate with
      ``w_c`` multiplied by ``legal_boost`` (100): the physical terms dominate the proxies;
   b. **re-placement** (``legal_moves``): while violations remain (at most 8 moves), the offending piece
      with the smallest footprint is put at the legal pose of lowest E among 8 candidates: the four axis
      headings x a 5 cm lattice within 0.6 m of its centre plus the wall-flush positions, ranked by
      displacement (+0.25 m per quarter turn) and thinned to 0.15 m apart; a pose is legal when its
      footprint lies inside the room, off the notch and the door swings, and touches the other pieces'
      axis-aligned bounding boxes at most (hard non-collision, as the Holodeck-style search). With no
      legal pose nearby, the nearest free wall slot of the room (back on a wall, facing in, 10 cm
      lattice), then any legal pose; a piece with none keeps its pose. Each move removes every violation
      of the piece and adds none; then the same ``legalise_steps`` polish steps as the push.

   Each result replaces the scene's layout when it has fewer violations, or as many and a lower E (at the
   final tau, the run's weights and margin). So the legalisation never adds a violation, and it raises E
   only to remove one; with ``legalise=False`` the returned E never exceeds the initial E.

``margin`` (m, default 0) grows every furniture footprint by that much on each side in the collision and
boundary terms (:func:`~neurips26.iohp.objective.energy`); it is an option, not the default (the
legalisation does the job without changing E). The simulated-annealing ablation has no legalisation.

Every E evaluation of a scene (a forward pass, with or without gradient, per restart or candidate) is
counted in :attr:`OptimizeResult.evaluations` (the legalisation's candidates, push and polish steps
included). :func:`anneal` is the gradient-free ablation: simulated
annealing over the same E (at the final ``tau``) from the same restarts, with fixed proposals (one object
per step: a Gaussian move of 0.1 m and 0.1 rad, or with probability 0.2 a 90 degree turn), a geometric
temperature 1 -> 1e-3, Metropolis acceptance and best-so-far tracking, seeded per scene and chain and
counted the same way (its default 200 steps per chain match Adam's 150 + 50).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.iohp.geometry import corners
from neurips26.iohp.layout import Layout, Room
from neurips26.iohp.metrics import collision_pairs, door_blocking, out_of_bounds
from neurips26.iohp.objective import (
    IOHP,
    MAX_MARGIN,
    PAIR_GROUPS,
    TAU_END,
    TERM_NAMES,
    Problem,
    Terms,
    Weights,
    check_weights,
    energy,
    pair_penetrations,
)
from neurips26.seeding import sub_seed
from neurips26.validation import check_float, check_int, check_seed

#: Adam iterations and repair iterations (the chapter's CPU budget), restarts per scene.
DEFAULT_STEPS = 150
DEFAULT_REPAIR_STEPS = 50
DEFAULT_RESTARTS = 2
#: Adam's learning rate (m and rad per step) and moment decay rates.
LR = 0.02
BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
#: The temperature schedule of the penetration measure: tau_0 -> tau_1 (m), geometric.
TAU = (0.05, TAU_END)
#: Gradient-norm clip per scene x restart.
CLIP = 1.0
#: Restart jitter (m, standard deviation per axis) and the probability of a 180-degree turn per object.
JITTER = 0.3
FLIP_PROBABILITY = 0.5
#: A pair with ``phi`` above this (a 1 cm penetration) sends its scene to the repair.
REPAIR_THRESHOLD = 1e-4
#: Repair candidates per scene, offending objects considered, and the wall-slot tolerance (m).
REPAIR_CANDIDATES = 4
REPAIR_OBJECTS = 2
WALL_SLOT_TOL = 0.1
#: Simulated annealing: steps per chain, temperature (E units) from -> to, proposal scales, turn share.
SA_STEPS = DEFAULT_STEPS + DEFAULT_REPAIR_STEPS
SA_TEMPERATURE = (1.0, 1e-3)
SA_STEP = (0.1, 0.1)
SA_TURN_PROBABILITY = 0.2

#: Legalisation: steps of the push and of the polish, their learning rate, their factor on w_c, the local
#: candidate window (m) and lattice step (m), the room-wide fallback step (m), candidates scored by E per
#: move, their spread (m), the ranking cost of a quarter turn (m), and the most pieces moved per scene.
LEGALISE_STEPS = 30
LEGAL_LR = LR / 2
LEGAL_BOOST = 100.0
LEGAL_RADIUS = 0.6
LEGAL_STEP = 0.05
LEGAL_FALLBACK_STEP = 0.1
LEGAL_CANDIDATES = 8
LEGAL_SPREAD = 0.15
LEGAL_TURN_COST = 0.25
LEGAL_MOVES = 8

_FACING_COS = math.cos(math.radians(30.0))  # "facing into the room" for a wall slot
_TOUCH = 1e-9  # AABB overlap (m^2) that counts as touching in the legal placement


@dataclass(frozen=True, eq=False)
class OptimizeResult:
    """What :func:`optimize` or :func:`anneal` returns for ``B`` scenes.

    ``poses`` (B, n, 3) float64: the best layout per scene (padded slots at ``xi0``). ``initial`` and
    ``final``: the terms of ``xi0`` and of ``poses`` at the final ``tau`` (``{name: (B,)}``,
    :data:`TERM_NAMES` and ``"total"``). ``trace``: ``{name: (T, B)}`` the terms of the returned run at
    every iteration (at that iteration's ``tau``, listed in ``tau`` (T,)); Adam: ``steps`` rows of the
    winning restart (restart 0 when the initial layout won) followed by ``repair_steps`` rows of the kept
    repair candidate (NaN where no candidate was kept); annealing: the winning chain's current state.
    ``restart`` (B,) the winning restart or chain (-1: the initial layout). ``repair_tried`` / ``repaired``
    (B,) bool: the scene needed the repair / a candidate was kept. ``evaluations`` (B,) int: E evaluations
    spent on the scene. ``legalised`` (B,) bool: the returned layout comes from the legalisation (its
    steps are not in ``trace``); ``violations`` (B,) int: exact physical violations of ``poses``
    (colliding pairs + pieces out of bounds + pieces in a door swing, the metrics' definitions).
    """

    poses: np.ndarray
    initial: dict[str, np.ndarray]
    final: dict[str, np.ndarray]
    trace: dict[str, np.ndarray]
    tau: np.ndarray
    restart: np.ndarray
    repair_tried: np.ndarray
    repaired: np.ndarray
    evaluations: np.ndarray
    method: str
    legalised: np.ndarray | None = None
    violations: np.ndarray | None = None

    def layouts(self, problem: Problem) -> tuple:
        """The optimised :class:`~neurips26.iohp.layout.Layout` of every scene of ``problem``."""
        return problem.layouts_at(self.poses)


# ----------------------------------------------------------------------------------------------------------
# Arguments
# ----------------------------------------------------------------------------------------------------------


def _check_problem(problem: object) -> Problem:
    if not isinstance(problem, Problem):
        raise TypeError(
            f"problem must be a Problem (see objective.build_problem); got {type(problem).__name__}"
        )
    return problem


def _check_tau_pair(tau: object) -> tuple[float, float]:
    """``tau``: a temperature (constant) or ``(tau_0, tau_1)`` with ``tau_0 >= tau_1 > 0``."""
    if isinstance(tau, Sequence) and not isinstance(tau, str):
        if len(tau) != 2:
            raise ValueError(f"tau must be a number or a pair (tau_0, tau_1); got {tau!r}")
        t0 = check_float("tau[0]", tau[0], minimum=0.0, strict_min=True)
        t1 = check_float("tau[1]", tau[1], minimum=0.0, strict_min=True)
        if t1 > t0:
            raise ValueError(f"tau must anneal downwards (tau_0 >= tau_1); got {tau!r}")
        return t0, t1
    t = check_float("tau", tau, minimum=0.0, strict_min=True)
    return t, t


def _check_pair(name: str, value: object) -> tuple[float, float]:
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise ValueError(f"{name} must be a pair of positive numbers; got {value!r}")
    return (
        check_float(f"{name}[0]", value[0], minimum=0.0, strict_min=True),
        check_float(f"{name}[1]", value[1], minimum=0.0, strict_min=True),
    )


def tau_schedule(steps: int, tau: float | tuple[float, float] = TAU) -> np.ndarray:
    """The temperatures of ``steps`` iterations, (steps,): geometric from ``tau_0`` to ``tau_1``, both
    included (a single step runs at ``tau_1``)."""
    steps = check_int("steps", steps, minimum=0)
    t0, t1 = _check_tau_pair(tau)
    if steps == 1:
        return np.array([t1])
    return t0 * (t1 / t0) ** (np.arange(steps) / max(steps - 1, 1))


def restart_poses(
    problem: Problem,
    restarts: int = DEFAULT_RESTARTS,
    seed: int = 0,
    *,
    jitter: float = JITTER,
    flip_probability: float = FLIP_PROBABILITY,
) -> torch.Tensor:
    """Start poses of every scene x restart, (B * restarts, n, 3), scene-major (entry ``b * R + r``).

    Restart 0 is ``xi0``; restart ``r`` adds ``N(0, jitter^2)`` to each object's ``x`` and ``y`` and ``pi``
    to its heading with probability ``flip_probability``, drawn from ``sub_seed(seed, b, r)``.
    """
    problem = _check_problem(problem)
    restarts = check_int("restarts", restarts, minimum=1)
    seed = check_seed("seed", seed)
    jitter = check_float("jitter", jitter, minimum=0.0)
    flip_probability = check_float("flip_probability", flip_probability, minimum=0.0, maximum=1.0)
    base = problem.xi0.detach().cpu().double().numpy()
    counts = problem.n_objects
    out = np.repeat(base, restarts, axis=0)
    for b in range(problem.batch):
        nb = int(counts[b])
        for r in range(1, restarts):
            rng = np.random.default_rng(sub_seed(seed, b, r))
            move = rng.normal(0.0, 1.0, size=(nb, 2)) * jitter
            flip = rng.random(nb) < flip_probability
            out[b * restarts + r, :nb, :2] += move
            out[b * restarts + r, :nb, 2] += np.where(flip, math.pi, 0.0)
    return torch.as_tensor(out, dtype=problem.dtype, device=problem.device)


# ----------------------------------------------------------------------------------------------------------
# Adam
# ----------------------------------------------------------------------------------------------------------


def _stack_trace(rows: list[Terms], like: torch.Tensor) -> dict[str, torch.Tensor]:
    """``{name: (T, E)}`` from per-iteration :class:`Terms` (``like`` (E, ...) sizes an empty trace)."""
    names = (*TERM_NAMES, "total")
    if not rows:
        return {k: like.new_zeros(0, like.shape[0]) for k in names}
    return {k: torch.stack([getattr(t, k) for t in rows]) for k in names}


def _adam(
    start: torch.Tensor,
    problem: Problem,
    taus: np.ndarray,
    weights: Weights,
    lr: float,
    clip: float,
    margin: float = 0.0,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Adam from ``start`` (E, n, 3) for ``len(taus)`` iterations; the end poses and the terms trace."""
    x = start.detach().clone()
    m = torch.zeros_like(x)
    v = torch.zeros_like(x)
    b1, b2 = BETAS
    rows: list[Terms] = []
    for t, tau in enumerate(taus):
        x.requires_grad_(True)
        terms = energy(x, problem, float(tau), weights, margin=margin)
        (grad,) = torch.autograd.grad(terms.total.sum(), x)
        rows.append(terms.detach())
        with torch.no_grad():
            norm = grad.flatten(1).norm(dim=1)
            scale = torch.where(norm > clip, clip / torch.where(norm > 0, norm, 1.0), 1.0)
            grad = grad * scale[:, None, None]
            m.mul_(b1).add_(grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
            m_hat = m / (1 - b1 ** (t + 1))
            v_hat = v / (1 - b2 ** (t + 1))
            x = x.detach() - lr * m_hat / (v_hat.sqrt() + ADAM_EPS)
    return x.detach(), _stack_trace(rows, x)


def _count(evaluations: np.ndarray, scenes: np.ndarray, times: int = 1) -> None:
    np.add.at(evaluations, scenes, times)


def optimize(
    problem: Problem,
    *,
    steps: int = DEFAULT_STEPS,
    repair_steps: int = DEFAULT_REPAIR_STEPS,
    restarts: int = DEFAULT_RESTARTS,
    weights: Weights | str = IOHP,
    lr: float = LR,
    tau: float | tuple[float, float] = TAU,
    clip: float = CLIP,
    seed: int = 0,
    jitter: float = JITTER,
    repair: bool = True,
    repair_candidates: int = REPAIR_CANDIDATES,
    margin: float = 0.0,
    legalise: bool = True,
    legalise_steps: int = LEGALISE_STEPS,
    legal_boost: float = LEGAL_BOOST,
    legal_moves: bool = True,
) -> OptimizeResult:
    """Minimise E for every scene of ``problem`` (§3.5; module docstring): :class:`OptimizeResult`.

    ``steps`` Adam iterations on ``restarts`` starts per scene (all in one batch), ``tau`` annealed from
    ``tau[0]`` to ``tau[1]``, gradients clipped to ``clip`` per scene x restart; the best of the initial
    layout and the restarts' end points at the final tau; then, if ``repair``, the discrete repair with
    ``repair_steps`` more steps for at most ``repair_candidates`` candidates per offending scene; then, if
    ``legalise``, the legalisation: ``legalise_steps`` push steps with ``legal_boost`` times ``w_c``, then,
    if ``legal_moves``, re-placement of the pieces still illegal and as many polish steps. ``margin`` (m)
    grows every furniture footprint in the physical terms of E (:func:`energy`).
    """
    problem = _check_problem(problem)
    steps = check_int("steps", steps, minimum=0)
    repair_steps = check_int("repair_steps", repair_steps, minimum=0)
    restarts = check_int("restarts", restarts, minimum=1)
    weights = check_weights(weights)
    lr = check_float("lr", lr, minimum=0.0, strict_min=True)
    tau0, tau1 = _check_tau_pair(tau)
    clip = check_float("clip", clip, minimum=0.0, strict_min=True)
    seed = check_seed("seed", seed)
    if not isinstance(repair, bool):
        raise TypeError(f"repair must be a bool; got {type(repair).__name__}")
    repair_candidates = check_int("repair_candidates", repair_candidates, minimum=1)
    margin = check_float("margin", margin, minimum=0.0, maximum=MAX_MARGIN)
    if not isinstance(legalise, bool):
        raise TypeError(f"legalise must be a bool; got {type(legalise).__name__}")
    legalise_steps = check_int("legalise_steps", legalise_steps, minimum=0)
    legal_boost = check_float("legal_boost", legal_boost, minimum=1.0)
    if not isinstance(legal_moves, bool):
        raise TypeError(f"legal_moves must be a bool; got {type(legal_moves).__name__}")

    batch = problem.batch
    scenes = np.arange(batch)
    evaluations = np.zeros(batch, dtype=np.int64)
    with torch.no_grad():
        initial = energy(problem.xi0, problem, tau1, weights, margin=margin)
    _count(evaluations, scenes)

    entry_scene = np.repeat(scenes, restarts)
    big = problem.select(entry_scene)
    start = restart_poses(problem, restarts, seed, jitter=jitter)
    taus = tau_schedule(steps, (tau0, tau1))
    end, trace = _adam(start, big, taus, weights, lr, clip, margin)
    _count(evaluations, entry_scene, steps)
    with torch.no_grad():
        end_terms = energy(end, big, tau1, weights, margin=margin)
    _count(evaluations, entry_scene)

    # best of [initial, restart 0, ..., restart R-1] at the final tau; the initial layout wins ties
    totals = torch.cat((initial.total[:, None], end_terms.total.view(batch, restarts)), dim=1)
    choice = torch.argmin(totals, dim=1).cpu().numpy()  # first minimum
    restart = choice - 1
    pick = scenes * restarts + np.maximum(restart, 0)
    kept_initial = torch.as_tensor(restart < 0, device=problem.device)
    best = torch.where(kept_initial[:, None, None], problem.xi0, end[pick])
    best_terms = _where_terms(kept_initial, initial, _select_terms(end_terms, pick))
    trace_main = {k: v[:, pick] for k, v in trace.items()}

    tried = np.zeros(batch, dtype=bool)
    repaired = np.zeros(batch, dtype=bool)
    repair_trace: dict[str, torch.Tensor] = {}
    if repair and repair_steps > 0:
        nan = torch.full((repair_steps, batch), float("nan"), dtype=problem.dtype, device=problem.device)
        repair_trace = {k: nan.clone() for k in (*TERM_NAMES, "total")}
        cand_scene, cand_poses, tried = _repair_candidates(
            problem, best, weights, tau1, repair_candidates, margin
        )
        if len(cand_scene):
            sub = problem.select(cand_scene)
            cand_end, cand_trace = _adam(
                cand_poses, sub, tau_schedule(repair_steps, (tau0, tau1)), weights, lr, clip, margin
            )
            _count(evaluations, cand_scene, repair_steps)
            with torch.no_grad():
                cand_terms = energy(cand_end, sub, tau1, weights, margin=margin)
            _count(evaluations, cand_scene)
            cand_total = cand_terms.total.detach().cpu().numpy()
            best_total = best_terms.total.detach().cpu().numpy()
            source = np.zeros(batch, dtype=np.int64)
            for b in np.unique(cand_scene):
                rows = np.flatnonzero(cand_scene == b)
                c = rows[int(np.argmin(cand_total[rows]))]
                if cand_total[c] < best_total[b]:
                    repaired[b], source[b] = True, c
            mask = torch.as_tensor(repaired, device=problem.device)
            best = torch.where(mask[:, None, None], cand_end[source], best)
            best_terms = _where_terms(mask, _select_terms(cand_terms, source), best_terms)
            for k in repair_trace:
                repair_trace[k] = torch.where(mask[None, :], cand_trace[k][:, source], repair_trace[k])

    if repair_trace:
        trace_main = {k: torch.cat((v, repair_trace[k]), dim=0) for k, v in trace_main.items()}
        taus = np.concatenate((taus, tau_schedule(repair_steps, (tau0, tau1))))
    legalised = np.zeros(batch, dtype=bool)
    if legalise:
        best, best_terms, legalised, violations = _legalise(
            problem,
            best,
            best_terms,
            weights,
            tau1,
            margin,
            (legalise_steps, legal_boost, lr * LEGAL_LR / LR, clip, legal_moves),
            evaluations,
        )
    else:
        violations = _violation_counts(problem, best.detach().cpu().double().numpy())[0]
    return OptimizeResult(
        poses=best.detach().cpu().double().numpy(),
        initial=initial.numpy(),
        final=best_terms.numpy(),
        trace={k: v.detach().cpu().double().numpy() for k, v in trace_main.items()},
        tau=taus,
        restart=restart.astype(np.int64),
        repair_tried=tried,
        repaired=repaired,
        evaluations=evaluations,
        method="adam",
        legalised=legalised,
        violations=violations,
    )


def _select_terms(terms: Terms, index: np.ndarray) -> Terms:
    idx = torch.as_tensor(index, device=terms.total.device)
    return Terms(**{k: v[idx] for k, v in terms.as_dict().items()})


def _where_terms(mask: torch.Tensor, a: Terms, b: Terms) -> Terms:
    return Terms(**{k: torch.where(mask, a.as_dict()[k], b.as_dict()[k]) for k in a.as_dict()})


# ----------------------------------------------------------------------------------------------------------
# Discrete repair
# ----------------------------------------------------------------------------------------------------------


def _offenders(
    problem: Problem, poses: torch.Tensor, weights: Weights, tau: float, margin: float = 0.0
) -> np.ndarray:
    """Summed offending ``phi`` (> threshold) per object, (B, n), over the groups with non-zero weight."""
    groups = [g for g in PAIR_GROUPS if weights.of(g) > 0.0]
    score = np.zeros((problem.batch, problem.n))
    if not groups:
        return score
    with torch.no_grad():
        phis = pair_penetrations(poses, problem, tau, groups, margin=margin)
    owner = problem.proxy_owner.cpu().numpy()
    n, k = problem.n, problem.k
    rows = np.arange(problem.batch)[:, None]
    for g, phi in phis.items():
        value = phi.detach().cpu().double().numpy()
        pairs_t, mask_t = problem.group_pairs(g)
        hit = (value > REPAIR_THRESHOLD) & mask_t.cpu().numpy()
        pairs = pairs_t.cpu().numpy()
        for end in (0, 1):
            idx = pairs[..., end]
            is_proxy = (idx >= n) & (idx < n + k)
            obj = np.where(idx < n, idx, -1)
            if k:
                obj = np.where(is_proxy, owner[rows, np.clip(idx - n, 0, k - 1)], obj)
            ok = hit & (obj >= 0)
            b_idx, p_idx = np.nonzero(ok)
            np.add.at(score, (b_idx, obj[b_idx, p_idx]), value[b_idx, p_idx])
    return score


def _wall_slots(problem: Problem, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per object: slotted (B, n) bool, slot point on the wall (B, n, 2), inward normal there (B, n, 2)."""
    start = problem.wall_start.cpu().double().numpy()
    edge = problem.wall_end.cpu().double().numpy() - start
    wall_ok = problem.wall_mask.cpu().numpy()
    length = np.linalg.norm(edge, axis=-1)
    unit = edge / np.where(length > 0, length, 1.0)[..., None]
    normal = np.stack((-unit[..., 1], unit[..., 0]), axis=-1)  # inward for a counter-clockwise outline
    sizes = problem.sizes.cpu().double().numpy()
    u = np.stack((np.cos(poses[..., 2]), np.sin(poses[..., 2])), axis=-1)
    back = poses[..., :2] - sizes[..., 1:2] / 2 * u  # (B, n, 2)
    rel = back[:, :, None, :] - start[:, None, :, :]  # (B, n, W, 2)
    t = np.clip((rel * edge[:, None]).sum(-1) / np.where(length > 0, length**2, 1.0)[:, None], 0.0, 1.0)
    point = start[:, None] + t[..., None] * edge[:, None]
    dist = np.linalg.norm(back[:, :, None] - point, axis=-1)
    facing = (u[:, :, None, :] * normal[:, None]).sum(-1) > _FACING_COS
    good = wall_ok[:, None, :] & facing & (dist <= WALL_SLOT_TOL)
    dist = np.where(good, dist, np.inf)
    w = np.argmin(dist, axis=-1)  # (B, n)
    rows = np.arange(problem.batch)[:, None]
    cols = np.arange(problem.n)[None, :]
    slotted = good.any(axis=-1) & problem.object_mask.cpu().numpy()
    return slotted, point[rows, cols, w], normal[rows, w]


def _repair_candidates(
    problem: Problem, best: torch.Tensor, weights: Weights, tau: float, per_scene: int, margin: float = 0.0
) -> tuple[np.ndarray, torch.Tensor, np.ndarray]:
    """Candidate scene indices (C,), start poses (C, n, 3) and which scenes needed the repair (B,)."""
    score = _offenders(problem, best, weights, tau, margin)
    need = (score > 0).any(axis=1)
    poses = best.detach().cpu().double().numpy()
    slotted, slot_point, slot_normal = _wall_slots(problem, poses)
    sizes = problem.sizes.cpu().double().numpy()
    scenes: list[int] = []
    starts: list[np.ndarray] = []
    for b in np.flatnonzero(need):
        offenders = [int(i) for i in np.argsort(-score[b], kind="stable") if score[b, i] > 0][:REPAIR_OBJECTS]
        plans: list[list[tuple[str, int, int]]] = []  # per offender: its moves in order
        for i in offenders:
            partners = [j for j in np.flatnonzero(slotted[b]) if j != i]
            partners.sort(key=lambda j: (score[b, j] > 0, -sizes[b, j, 0], j))
            moves = [("turn", i, +1)]
            moves += [("swap", i, int(partners[0]))] if partners else []
            moves += [("turn", i, -1)]
            moves += [("swap", i, int(partners[1]))] if len(partners) > 1 else []
            plans.append(moves)
        order: list[tuple[str, int, int]] = []
        for depth in range(4):  # interleave the offenders: +90 of each, a swap of each, ...
            order += [p[depth] for p in plans if depth < len(p)]
        for kind, i, arg in order[:per_scene]:
            x = poses[b].copy()
            if kind == "turn":
                x[i, 2] += arg * math.pi / 2
            else:
                j = arg
                x[i] = _slot_pose(slot_point[b, j], slot_normal[b, j], sizes[b, i, 1])
                if slotted[b, i]:
                    x[j] = _slot_pose(slot_point[b, i], slot_normal[b, i], sizes[b, j, 1])
                else:
                    x[j] = poses[b, i]
            scenes.append(int(b))
            starts.append(x)
    if not scenes:
        return np.zeros(0, dtype=np.int64), best[:0], need
    start = torch.as_tensor(np.stack(starts), dtype=problem.dtype, device=problem.device)
    return np.array(scenes, dtype=np.int64), start, need


def _slot_pose(point: np.ndarray, normal: np.ndarray, depth: float) -> np.ndarray:
    """The pose with the back-face centre on ``point``, facing ``normal`` (into the room)."""
    center = point + normal * depth / 2
    return np.array([center[0], center[1], math.atan2(normal[1], normal[0])])


# ----------------------------------------------------------------------------------------------------------
# Legalisation
# ----------------------------------------------------------------------------------------------------------


def _violations(layout: Layout) -> tuple[int, np.ndarray]:
    """Exact physical violations of ``layout`` (the metrics' definitions): the count and, per piece (n,),
    how many it takes part in (colliding pairs, out of bounds, in a door swing)."""
    pairs = collision_pairs(layout)
    per = np.zeros(layout.n, dtype=np.int64)
    np.add.at(per, pairs.ravel(), 1)
    per += out_of_bounds(layout).astype(np.int64) + door_blocking(layout).astype(np.int64)
    return int(per.sum() - len(pairs)), per


def _violation_counts(problem: Problem, poses: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Violations per scene (B,) int and per piece of every scene, for ``poses`` (B, n, 3)."""
    counts = np.zeros(problem.batch, dtype=np.int64)
    per: list[np.ndarray] = []
    for b, lay in enumerate(problem.layouts):
        counts[b], p = _violations(lay.with_poses(poses[b, : lay.n]))
        per.append(p)
    return counts, per


def _aabb(center: np.ndarray, size: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Axis-aligned bounding boxes (m, 4) = (x0, y0, x1, y1) of oriented rectangles."""
    c = corners(center.reshape(-1, 2), size.reshape(-1, 2), theta.reshape(-1))
    return np.concatenate((c.min(axis=1), c.max(axis=1)), axis=1)


def _free(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Whether each box (C, 4) overlaps none of ``others`` (m, 4) by more than :data:`_TOUCH`: (C,)."""
    if len(others) == 0:
        return np.ones(len(boxes), dtype=bool)
    ox = np.minimum(boxes[:, None, 2], others[None, :, 2]) - np.maximum(boxes[:, None, 0], others[None, :, 0])
    oy = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(boxes[:, None, 1], others[None, :, 1])
    return ~((np.maximum(ox, 0.0) * np.maximum(oy, 0.0)) > _TOUCH).any(axis=1)


def _legal_poses(
    layout: Layout, poses: np.ndarray, i: int, radius: float, step: float, against_wall: bool = False
) -> np.ndarray:
    """Poses (C, 3) for piece ``i`` that break no physical rule against the room and the other pieces at
    ``poses`` (n, 3), sorted by cost (centre displacement + :data:`LEGAL_TURN_COST` per quarter turn).

    Headings: the four multiples of 90 degrees (the room is axis-aligned); centres: a ``step`` lattice
    through the current centre within ``radius`` (per axis) plus the positions flush with a wall line. The
    other pieces and the door swings count by their axis-aligned bounding boxes (conservative for a piece
    a little off the axes); walls and notch exactly. ``against_wall``: only poses with the back face on a
    wall, facing into the room.
    """
    room = layout.room
    size = layout.sizes()[i, :2]
    others = np.arange(layout.n) != i
    blocked = _aabb(poses[others, :2], layout.sizes()[others, :2], poses[others, 2])
    doors = room.obstacles(kinds=("door",))
    if len(doors[0]):
        blocked = np.concatenate((blocked, _aabb(*doors)))
    if room.notch is not None:
        blocked = np.concatenate((blocked, np.array([room.notch])))
    x0, y0, x1, y1 = room.bounds
    verts = room.vertices()
    quarter = round(float(poses[i, 2]) / (math.pi / 2))
    count = math.floor(radius / step + 1e-9)
    offsets = step * np.arange(-count, count + 1)
    out, cost = [], []
    for q in range(4):
        theta = (quarter + q) * math.pi / 2
        half = size[::-1] / 2 if (quarter + q) % 2 == 0 else size / 2  # (hx, hy): depth along x at 0
        axes = []
        for a, (lo, hi, walls) in enumerate(((x0, x1, verts[:, 0]), (y0, y1, verts[:, 1]))):
            c = poses[i, a]
            values = np.concatenate((c + offsets, walls + half[a], walls - half[a]))
            keep = (np.abs(values - c) <= radius + 1e-9) & (values >= lo + half[a] - 1e-9)
            keep &= values <= hi - half[a] + 1e-9
            axes.append(np.unique(np.round(values[keep], 9)))
        gx, gy = np.meshgrid(*axes, indexing="ij")
        centers = np.stack((gx.ravel(), gy.ravel()), axis=1)
        if not len(centers):
            continue
        boxes = np.concatenate((centers - half, centers + half), axis=1)
        ok = _free(boxes, blocked)
        if len(room.outline) not in (4, 6):  # a general outline: every corner inside as well
            box = corners(centers, np.tile(size, (len(centers), 1)), np.full(len(centers), theta))
            ok &= room.contains(box).all(axis=1)
        if against_wall:
            ok &= _backs_on_wall(room, centers, half, theta)
        centers = centers[ok]
        wrapped = math.remainder(theta, 2 * math.pi)
        out.append(np.column_stack((centers, np.full(len(centers), wrapped))))
        turns = min(q, 4 - q)
        cost.append(np.linalg.norm(centers - poses[i, :2], axis=1) + LEGAL_TURN_COST * turns)
    if not out:
        return np.zeros((0, 3))
    poses_c, cost_c = np.concatenate(out), np.concatenate(cost)
    return poses_c[np.argsort(cost_c, kind="stable")]


def _backs_on_wall(room: Room, centers: np.ndarray, half: np.ndarray, theta: float) -> np.ndarray:
    """Whether a piece at ``centers`` (C, 2), heading ``theta`` (a multiple of 90 degrees), half extents
    ``half = (hx, hy)``, has its back-face centre on a wall segment whose inward normal it faces: (C,)."""
    u = np.array([math.cos(theta), math.sin(theta)])
    back = centers - u * (half[0] if abs(u[0]) > 0.5 else half[1])
    start, end, normal = room.walls()
    edge = end - start
    t = np.clip(((back[:, None] - start) * edge).sum(-1) / (edge * edge).sum(-1), 0.0, 1.0)
    gap = np.linalg.norm(back[:, None] - (start + t[..., None] * edge), axis=-1)  # (C, k)
    facing = normal @ u > 0.5
    return ((gap <= 1e-6) & facing[None, :]).any(axis=1)


def _spread(candidates: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` candidates (C, 3), skipping one within :data:`LEGAL_SPREAD` of a kept one with
    the same footprint orientation."""
    kept: list[int] = []
    parity = np.round(candidates[:, 2] / (math.pi / 2)).astype(np.int64) % 2
    for c in range(len(candidates)):
        close = [
            k
            for k in kept
            if parity[k] == parity[c] and np.linalg.norm(candidates[k, :2] - candidates[c, :2]) < LEGAL_SPREAD
        ]
        if not close:
            kept.append(c)
            if len(kept) == count:
                break
    return candidates[kept]


def _keep_better(
    problem: Problem,
    scenes: np.ndarray,
    option: torch.Tensor,
    state: tuple[torch.Tensor, Terms, np.ndarray, np.ndarray],
    weights: Weights,
    tau: float,
    margin: float,
    evaluations: np.ndarray,
) -> tuple[torch.Tensor, Terms, np.ndarray, np.ndarray]:
    """Put ``option`` (S, n, 3), poses of ``scenes``, into ``state = (poses, terms, violations, taken)``
    where it has fewer exact violations, or as many and a lower E (the legalisation's acceptance rule)."""
    best, terms, counts, taken = state
    sub = problem.select(scenes)
    with torch.no_grad():
        new_terms = energy(option, sub, tau, weights, margin=margin)
    _count(evaluations, scenes)
    new_counts = _violation_counts(sub, option.detach().cpu().double().numpy())[0]
    old_e = terms.total[torch.as_tensor(scenes, device=problem.device)].detach().cpu().numpy()
    new_e = new_terms.total.detach().cpu().numpy()
    old_c = counts[scenes]
    better = (new_counts < old_c) | ((new_counts == old_c) & (new_e < old_e))
    if not better.any():
        return state
    rows = scenes[better]
    idx = torch.as_tensor(rows, device=problem.device)
    pick = torch.as_tensor(np.flatnonzero(better), device=problem.device)
    best = best.clone()
    best[idx] = option[pick].to(best.dtype)
    merged = {k: v.clone() for k, v in terms.as_dict().items()}
    for k, v in new_terms.as_dict().items():
        merged[k][idx] = v[pick]
    counts = counts.copy()
    counts[rows] = new_counts[better]
    taken = taken.copy()
    taken[rows] = True
    return best, Terms(**merged), counts, taken


def _hard_moves(
    problem: Problem,
    poses: np.ndarray,
    scenes: np.ndarray,
    weights: Weights,
    tau: float,
    margin: float,
    evaluations: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Re-place the offending pieces of ``scenes`` one by one at legal poses (module docstring).

    ``poses`` (B, n, 3); returns the new poses of ``scenes`` (S, n, 3) and which of them changed (S,).
    """
    sizes = problem.sizes.cpu().double().numpy()
    out = poses[scenes].copy()
    moved = np.zeros(len(scenes), dtype=bool)
    for s, b in enumerate(scenes):
        lay = problem.layouts[b]
        x = out[s, : lay.n].copy()
        count, offence = _violations(lay.with_poses(x))
        rank = np.lexsort((np.arange(lay.n), sizes[b, : lay.n, 0] * sizes[b, : lay.n, 1]))  # smallest first
        tried: set[int] = set()
        for _ in range(LEGAL_MOVES):
            order = [int(i) for i in rank if offence[i] > 0 and i not in tried]
            if count == 0 or not order:
                break
            i = order[0]
            tried.add(i)
            cand = _legal_poses(lay, x, i, LEGAL_RADIUS, LEGAL_STEP)
            span = float(max(np.ptp(lay.room.vertices(), axis=0)))
            if not len(cand):  # nothing nearby: a free wall slot anywhere, then anywhere
                cand = _legal_poses(lay, x, i, span, LEGAL_FALLBACK_STEP, against_wall=True)
            if not len(cand):
                cand = _legal_poses(lay, x, i, span, LEGAL_FALLBACK_STEP)
            if not len(cand):
                continue
            cand = _spread(cand, LEGAL_CANDIDATES)
            trial = np.repeat(out[s : s + 1], len(cand), axis=0)
            trial[:, : lay.n] = x
            trial[:, i] = cand
            with torch.no_grad():
                sub = problem.select(np.full(len(cand), b))
                trial_t = torch.as_tensor(trial, dtype=problem.dtype, device=problem.device)
                total = energy(trial_t, sub, tau, weights, margin=margin).total
            _count(evaluations, np.array([b]), len(cand))
            x[i] = cand[int(torch.argmin(total))]
            count, offence = _violations(lay.with_poses(x))
            moved[s] = True
        out[s, : lay.n] = x
    return out, moved


def _legalise(
    problem: Problem,
    best: torch.Tensor,
    best_terms: Terms,
    weights: Weights,
    tau: float,
    margin: float,
    settings: tuple[int, float, float, float, bool],
    evaluations: np.ndarray,
) -> tuple[torch.Tensor, Terms, np.ndarray, np.ndarray]:
    """The legalisation (module docstring): new best poses and terms, which scenes took it, violations.

    ``settings = (steps, boost, lr, clip, hard)``: the push and polish runs' length, factor on ``w_c``,
    rate and clip, and whether offending pieces are re-placed.
    """
    steps, boost, lr, clip, hard = settings
    strong = dataclasses.replace(weights, collision=weights.collision * boost)
    counts = _violation_counts(problem, best.detach().cpu().double().numpy())[0]
    state = (best, best_terms, counts, np.zeros(problem.batch, dtype=bool))
    scenes = np.flatnonzero(counts > 0)
    if len(scenes) and steps > 0:  # push: the physical terms dominate
        pushed, _ = _adam(best[scenes], problem.select(scenes), np.full(steps, tau), strong, lr, clip, margin)
        _count(evaluations, scenes, steps)
        state = _keep_better(problem, scenes, pushed, state, weights, tau, margin, evaluations)
    scenes = np.flatnonzero(state[2] > 0)
    if hard and len(scenes):  # re-place what is still illegal, then polish
        poses = state[0].detach().cpu().double().numpy()
        placed, moved = _hard_moves(problem, poses, scenes, weights, tau, margin, evaluations)
        scenes, placed = scenes[moved], placed[moved]
        if len(scenes):
            start = torch.as_tensor(placed, dtype=problem.dtype, device=problem.device)
            state = _keep_better(problem, scenes, start, state, weights, tau, margin, evaluations)
            if steps > 0:
                sub = problem.select(scenes)
                polished, _ = _adam(start, sub, np.full(steps, tau), strong, lr, clip, margin)
                _count(evaluations, scenes, steps)
                state = _keep_better(problem, scenes, polished, state, weights, tau, margin, evaluations)
    best, best_terms, counts, taken = state
    return best, best_terms, taken, counts


# ----------------------------------------------------------------------------------------------------------
# Simulated annealing (ablation)
# ----------------------------------------------------------------------------------------------------------


def anneal(
    problem: Problem,
    *,
    steps: int = SA_STEPS,
    restarts: int = DEFAULT_RESTARTS,
    weights: Weights | str = IOHP,
    tau: float = TAU_END,
    seed: int = 0,
    temperature: tuple[float, float] = SA_TEMPERATURE,
    step_size: tuple[float, float] = SA_STEP,
    turn_probability: float = SA_TURN_PROBABILITY,
    jitter: float = JITTER,
) -> OptimizeResult:
    """Simulated annealing over E at temperature ``tau`` (the gradient-free ablation; module docstring).

    ``restarts`` chains per scene from :func:`restart_poses` (same seed, same starts as :func:`optimize`);
    each step proposes, per chain, one object (uniform) moved by ``N(0, step_size[0]^2)`` m per axis and
    turned by ``N(0, step_size[1]^2)`` rad, or with probability ``turn_probability`` turned by +-90 degrees;
    Metropolis acceptance at a temperature annealed geometrically over ``temperature``; the best state per
    chain is kept and the best over the initial layout and the chains is returned. Proposals come from
    ``sub_seed(seed, scene, chain, 1)``.
    """
    problem = _check_problem(problem)
    steps = check_int("steps", steps, minimum=0)
    restarts = check_int("restarts", restarts, minimum=1)
    weights = check_weights(weights)
    tau = check_float("tau", tau, minimum=0.0, strict_min=True)
    seed = check_seed("seed", seed)
    t_hot, t_cold = _check_pair("temperature", temperature)
    sigma_xy, sigma_th = _check_pair("step_size", step_size)
    turn_probability = check_float("turn_probability", turn_probability, minimum=0.0, maximum=1.0)

    batch = problem.batch
    scenes = np.arange(batch)
    evaluations = np.zeros(batch, dtype=np.int64)
    counts = problem.n_objects
    with torch.no_grad():
        initial = energy(problem.xi0, problem, tau, weights)
    _count(evaluations, scenes)
    entry_scene = np.repeat(scenes, restarts)
    big = problem.select(entry_scene)
    x = restart_poses(problem, restarts, seed, jitter=jitter)
    n_entries = len(entry_scene)

    # every proposal drawn up front, per scene and chain
    obj = np.zeros((steps, n_entries), dtype=np.int64)
    delta = np.zeros((steps, n_entries, 3))
    uniform = np.zeros((steps, n_entries))
    for e, b in enumerate(entry_scene):
        rng = np.random.default_rng(sub_seed(seed, int(b), e % restarts, 1))
        nb = max(int(counts[b]), 1)
        obj[:, e] = rng.integers(nb, size=steps)
        turn = rng.random(steps) < turn_probability
        sign = np.where(rng.random(steps) < 0.5, -1.0, 1.0)
        move = rng.normal(0.0, 1.0, size=(steps, 3)) * np.array([sigma_xy, sigma_xy, sigma_th])
        delta[:, e, :2] = np.where(turn[:, None], 0.0, move[:, :2])
        delta[:, e, 2] = np.where(turn, sign * math.pi / 2, move[:, 2])
        uniform[:, e] = rng.random(steps)
    temps = t_hot * (t_cold / t_hot) ** (np.arange(steps) / max(steps - 1, 1))

    rows_t = torch.arange(n_entries, device=problem.device)
    obj_t = torch.as_tensor(obj, device=problem.device)
    delta_t = torch.as_tensor(delta, dtype=problem.dtype, device=problem.device)
    log_u = torch.as_tensor(np.log(np.maximum(uniform, 1e-300)), dtype=problem.dtype, device=problem.device)
    trace_rows: list[Terms] = []
    with torch.no_grad():
        current = energy(x, big, tau, weights)
        _count(evaluations, entry_scene)
        best_x, best_terms = x.clone(), current
        for t in range(steps):
            proposal = x.clone()
            proposal[rows_t, obj_t[t]] += delta_t[t]
            terms = energy(proposal, big, tau, weights)
            gain = terms.total - current.total
            accept = (gain <= 0) | (log_u[t] < -gain / float(temps[t]))
            x = torch.where(accept[:, None, None], proposal, x)
            current = _where_terms(accept, terms, current)
            better = current.total < best_terms.total
            best_x = torch.where(better[:, None, None], x, best_x)
            best_terms = _where_terms(better, current, best_terms)
            trace_rows.append(current)
        _count(evaluations, entry_scene, steps)

    totals = torch.cat((initial.total[:, None], best_terms.total.view(batch, restarts)), dim=1)
    restart = torch.argmin(totals, dim=1).cpu().numpy() - 1
    pick = scenes * restarts + np.maximum(restart, 0)
    kept_initial = torch.as_tensor(restart < 0, device=problem.device)
    poses = torch.where(kept_initial[:, None, None], problem.xi0, best_x[pick])
    final = _where_terms(kept_initial, initial, _select_terms(best_terms, pick))
    trace = _stack_trace(trace_rows, x)
    return OptimizeResult(
        poses=poses.cpu().double().numpy(),
        initial=initial.numpy(),
        final=final.numpy(),
        trace={k: v[:, pick].cpu().double().numpy() for k, v in trace.items()},
        tau=np.full(steps, tau),
        restart=restart.astype(np.int64),
        repair_tried=np.zeros(batch, dtype=bool),
        repaired=np.zeros(batch, dtype=bool),
        evaluations=evaluations,
        method="anneal",
        legalised=np.zeros(batch, dtype=bool),
        violations=_violation_counts(problem, poses.cpu().double().numpy())[0],
    )


__all__ = [
    "ADAM_EPS",
    "BETAS",
    "CLIP",
    "DEFAULT_REPAIR_STEPS",
    "DEFAULT_RESTARTS",
    "DEFAULT_STEPS",
    "FLIP_PROBABILITY",
    "JITTER",
    "LEGALISE_STEPS",
    "LEGAL_BOOST",
    "LEGAL_CANDIDATES",
    "LEGAL_FALLBACK_STEP",
    "LEGAL_LR",
    "LEGAL_MOVES",
    "LEGAL_RADIUS",
    "LEGAL_SPREAD",
    "LEGAL_STEP",
    "LEGAL_TURN_COST",
    "LR",
    "REPAIR_CANDIDATES",
    "REPAIR_OBJECTS",
    "REPAIR_THRESHOLD",
    "SA_STEP",
    "SA_STEPS",
    "SA_TEMPERATURE",
    "SA_TURN_PROBABILITY",
    "TAU",
    "WALL_SLOT_TOL",
    "OptimizeResult",
    "anneal",
    "optimize",
    "restart_poses",
    "tau_schedule",
]
