"""Coverage-Driver: choose nodes whose effects cover the prompts consistently, rather than the nodes that
best fit the average displacement.

With the linearisation ``G_T`` ``(n, K)``, the desired displacements ``Δ`` ``(n,)`` and a per-node amplitude
cap ``c`` (in units of the site's size):

- each node gets the sign ``s_j`` that helps on average, ``sign Σ_i sign(Δ_i) G_ij``, and its *aligned
  effect* on prompt ``i`` at the cap is ``e_ij = s_j sign(Δ_i) G_ij c / |Δ_i|``: the share of the required
  displacement the node achieves alone;
- node ``j`` *covers* prompt ``i`` when ``e_ij ≥ τ`` and its leakage when covering is at most ``leak_max``:
  the root-mean-square change of the preservation readouts, ``‖G_P[:, j]‖ / √M`` per unit of amplitude,
  at the amplitude that gives a typical (median) prompt an aligned effect of ``τ``, ``c τ / median_i e_ij``
  (the cap itself is an upper limit, not the dose a node is driven at). The limit ``leak_max`` is either
  given or relative: the ``leak_quantile`` quantile of the leakage of the nodes that cover at least one
  prompt (default the least leaky quarter), because what counts as little leakage depends on how entangled
  the model's representations are (our choice; the paper's threshold is not known);
- its *stability* is the share of ``B`` bootstrap resamples of the prompts on which its coverage rate is at
  least half its full-set rate, times its consistency ``clip(mean_i e_ij / (2 sd_i e_ij), 0, 1)``;
- greedy weighted max-coverage: repeatedly add the node maximising stability × the number of still
  uncovered prompts it covers (ties: larger mean effect, then lower leakage); a prompt counts as covered
  once the chosen nodes' helpful (positive) aligned effects on it sum to at least 1 — a node that pushes
  some prompts the wrong way does not uncover them in this count (the dose fit below sees the full
  effects), so covering only grows and the marginal gains never rise;
- one shared dose per node, by non-negative least squares of ``Σ_j d_j s_j G_{:,j} ≈ Δ`` on the
  selection prompts (no per-prompt tuning), amplitudes ``a_j = s_j d_j``, projected onto ``‖a‖ ≤ E``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from neurips26.sparse_control.controllability import check_system, project_energy
from neurips26.sparse_control.driver_omp import Control
from neurips26.validation import check_float, check_int, check_seed

TAU = 0.25
BOOTSTRAPS = 20
LEAK_QUANTILE = 0.25


@dataclass(frozen=True)
class CoverageTrace:
    """What the greedy did: the marginal gain (stability × newly covered prompts) of each pick, the
    covered share after each pick, and the final covered mask ``(n,)``."""

    gains: np.ndarray
    covered_share: np.ndarray
    covered: np.ndarray


def aligned_effects(G_T: np.ndarray, delta: np.ndarray, cap: float) -> tuple[np.ndarray, np.ndarray]:
    """The aligned effects ``e`` ``(n, K)`` and each node's sign ``s`` ``(K,)``."""
    G_T, delta = check_system(G_T, delta)
    if (delta == 0).any():
        raise ValueError("delta must be non-zero for every prompt")
    toward = np.sign(delta)[:, None] * G_T
    sign = np.where(toward.sum(0) >= 0, 1.0, -1.0)
    return sign[None, :] * toward * cap / np.abs(delta)[:, None], sign


def leakage(G_P: np.ndarray | None, effects: np.ndarray, *, cap: float, tau: float) -> np.ndarray:
    """Root-mean-square change of the preservation readouts when a node covers a typical prompt, per node
    ``(K,)`` (module doc; ``inf`` for a node whose median aligned effect is not positive)."""
    median = np.median(effects, axis=0)
    dose = np.where(median > 0, cap * tau / np.where(median > 0, median, 1.0), np.inf)
    if G_P is None or not len(G_P):
        return np.where(np.isfinite(dose), 0.0, np.inf)
    per_unit = np.linalg.norm(np.asarray(G_P, dtype=float), axis=0) / np.sqrt(len(G_P))
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(dose), per_unit * dose, np.inf)


def stability(effects: np.ndarray, *, tau: float, bootstraps: int, seed: int) -> np.ndarray:
    """Stability of every node (module doc) ``(K,)``."""
    n = effects.shape[0]
    covers = effects >= tau
    rate = covers.mean(0)
    rng = np.random.default_rng(seed)
    kept = np.zeros(effects.shape[1])
    for _ in range(bootstraps):
        rows = rng.integers(0, n, n)
        kept += covers[rows].mean(0) >= 0.5 * rate
    sd = effects.std(0)
    consistency = np.clip(effects.mean(0) / (2 * np.where(sd > 0, sd, np.inf)), 0.0, 1.0)
    consistency[(sd == 0) & (effects.mean(0) > 0)] = 1.0
    return (kept / bootstraps) * consistency * (rate > 0)


def coverage_driver(
    G_T: np.ndarray,
    delta: np.ndarray,
    G_P: np.ndarray | None = None,
    *,
    k: int,
    cap: float = 1.0,
    tau: float = TAU,
    leak_max: float | None = None,
    leak_quantile: float = LEAK_QUANTILE,
    bootstraps: int = BOOTSTRAPS,
    energy: float | None = None,
    seed: int = 0,
) -> tuple[Control, CoverageTrace]:
    """Coverage-Driver (module doc): at most ``k`` nodes and their shared doses."""
    k = check_int("k", k, minimum=1)
    cap = check_float("cap", cap, minimum=0.0, strict_min=True)
    tau = check_float("tau", tau, minimum=0.0, strict_min=True)
    if leak_max is not None:
        leak_max = check_float("leak_max", leak_max, minimum=0.0)
    leak_quantile = check_float("leak_quantile", leak_quantile, minimum=0.0, maximum=1.0)
    bootstraps = check_int("bootstraps", bootstraps, minimum=1)
    seed = check_seed("seed", seed)
    if energy is not None:
        check_float("energy", energy, minimum=0.0, strict_min=True)
    effects, sign = aligned_effects(G_T, delta, cap)
    n, n_nodes = effects.shape
    leak = leakage(G_P, effects, cap=cap, tau=tau)
    if leak_max is None:
        candidates = leak[(effects >= tau).any(0) & np.isfinite(leak)]
        leak_max = float(np.quantile(candidates, leak_quantile)) if len(candidates) else 0.0
    allowed = leak <= leak_max
    stab = stability(effects, tau=tau, bootstraps=bootstraps, seed=seed) * allowed
    covers = (effects >= tau) & allowed[None, :]
    mean_effect = effects.mean(0)
    chosen: list[int] = []
    gains, shares = [], []
    total = np.zeros(n)
    covered = np.zeros(n, dtype=bool)
    while len(chosen) < min(k, n_nodes):
        gain = stab * (covers & ~covered[:, None]).sum(0)
        gain[chosen] = -1.0
        best = gain.max()
        if best <= 0:
            break
        tied = np.flatnonzero(gain == best)
        j = int(tied[np.lexsort((leak[tied], -mean_effect[tied]))[0]])
        chosen.append(j)
        gains.append(float(best))
        total += np.maximum(effects[:, j], 0.0)
        covered = total >= 1.0
        shares.append(float(covered.mean()))
    nodes = np.array(chosen, dtype=int)
    if len(nodes):
        A = np.asarray(G_T, dtype=float)[:, nodes] * sign[nodes]
        dose, _ = nnls(A, np.asarray(delta, dtype=float))
        amplitudes = sign[nodes] * dose
        residual = float(np.linalg.norm(A @ dose - delta) / np.linalg.norm(delta))
    else:
        amplitudes, residual = np.zeros(0), 1.0
    if energy is not None and len(amplitudes):
        amplitudes = project_energy(amplitudes, energy)
    trace = CoverageTrace(np.array(gains), np.array(shares), covered)
    return Control(nodes, amplitudes, residual, "coverage-driver"), trace
