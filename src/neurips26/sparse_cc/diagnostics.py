"""Diagnostics of sparse observation: witness coverage theory and the imputation-quality statistics.

Witness threshold (eq. T). Under uniform sampling of ``m`` pairs, ``q = m / P``, each third vertex
witnesses a given pair with probability about ``q^2``, so ``|W_uv| ~ Poisson(lambda)`` with
``lambda = (n - 2) q^2 ~ 4 m^2 / n^3``. At ``m = c n^{3/2}`` a typical pair has a witness with
probability ``1 - exp(-4 c^2)``; every pair has one w.h.p. once ``lambda >= 2 ln n``, i.e.
``c >= sqrt(ln n / 2)``.

Imputation quality (eq. Γ) [ours: the paper's statistic is not specified]. The oracle

    Γ̄_w = sum_{uv not in E} W_uv |x̂_uv - x*_uv| / sum_{uv in P} W_uv,    W_uv = w_plus + w_minus,

needs the full-LP marginals ``x*``; the held-out :func:`gamma_holdout` needs only the samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.sparse_cc.instances import CCInstance
from neurips26.sparse_cc.lp import metric_lp
from neurips26.sparse_cc.observed import check_observed
from neurips26.sparse_cc.witness import IMPUTE_RULES, impute, witness_counts
from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed


def coverage_theory(c: float | np.ndarray) -> float | np.ndarray:
    """Poisson witness coverage ``1 - exp(-4 c^2)`` at ``m = c n^{3/2}`` (eq. T); ``c >= 0``, array ok."""
    if isinstance(c, np.ndarray):
        arr = check_array("c", c).astype(float)
        if np.any(arr < 0):
            raise ValueError("c must be >= 0")
        return -np.expm1(-4.0 * arr**2)
    c = check_float("c", c, minimum=0.0)
    return float(-np.expm1(-4.0 * c**2))


def all_pairs_threshold(n: int) -> float:
    """``c = sqrt(ln n / 2)``: where ``lambda = 4 c^2`` reaches ``2 ln n`` and every pair gets a witness."""
    n = check_int("n", n, minimum=2)
    return float(np.sqrt(np.log(n) / 2.0))


def fractional_share(x: np.ndarray, tol: float = 1e-6) -> float:
    """Share of LP values strictly inside ``(tol, 1 - tol)``: the pairs a rounding rule has to decide.

    On a share of 0 every rounding rule of :mod:`~neurips26.sparse_cc.pivot` returns the same clustering
    (all map 0 to "join" and 1 to "separate"), so only a fractional ``x`` can tell rules apart.
    """
    arr = check_array("x", x, complex_ok=False).astype(float)
    tol = check_float("tol", tol, minimum=0.0, maximum=0.5)
    if arr.size == 0:
        raise ValueError("x must not be empty")
    return float(np.mean((arr > tol) & (arr < 1.0 - tol)))


def m_for(n: int, c: float) -> int:
    """Observed-pair budget ``m = round(c n^{3/2})``, clipped to ``[1, P]``."""
    n = check_int("n", n, minimum=2)
    c = check_float("c", c, minimum=0.0)
    P = n * (n - 1) // 2
    return int(np.clip(round(c * n**1.5), 1, P))


@dataclass(frozen=True)
class WitnessStats:
    """Witness coverage of one observed set.

    ``frac_all``: fraction of all ``P`` pairs with at least one witness; ``frac_unobserved``: the same
    among unobserved pairs (1.0 when ``E = P``); ``all_covered``: every unobserved pair has a witness;
    ``n_uncovered``: unobserved pairs without one; ``mean_count``: mean ``|W_uv|`` over all pairs.
    """

    n: int
    m: int
    frac_all: float
    frac_unobserved: float
    all_covered: bool
    n_uncovered: int
    mean_count: float


def witness_stats(n: int, observed: np.ndarray) -> WitnessStats:
    """Coverage statistics of ``E = observed`` from the sparse ``A^2`` witness counts."""
    n = check_int("n", n, minimum=2)
    idx = check_observed(n, observed)
    counts = witness_counts(n, idx)
    unseen = np.ones(counts.shape[0], dtype=bool)
    unseen[idx] = False
    covered = counts > 0
    n_uncovered = int(np.sum(unseen & ~covered))
    n_unseen = int(unseen.sum())
    return WitnessStats(
        n=n,
        m=int(idx.shape[0]),
        frac_all=float(covered.mean()),
        frac_unobserved=float(covered[unseen].mean()) if n_unseen else 1.0,
        all_covered=n_uncovered == 0,
        n_uncovered=n_uncovered,
        mean_count=float(counts.mean()),
    )


def _check_marginals(name: str, x: object, P: int) -> np.ndarray:
    x = check_array(name, x, ndim=1, shape=(P,))
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError(f"{name} must lie in [0, 1]; got range [{x.min()}, {x.max()}]")
    return x.astype(float)


def gamma_oracle(instance: CCInstance, observed: np.ndarray, x_hat: np.ndarray, x_star: np.ndarray) -> float:
    """Oracle ``Γ̄_w``: weighted imputation error on unobserved pairs over the total weight (eq. Γ) [ours].

    ``x_hat`` (imputed) and ``x_star`` (full-LP marginals) hold one value per pair, row-major.
    """
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    P = instance.n_pairs
    idx = check_observed(instance.n, observed)
    x_hat = _check_marginals("x_hat", x_hat, P)
    x_star = _check_marginals("x_star", x_star, P)
    W = instance.total_weight
    total = float(W.sum())
    if total <= 0:
        raise ValueError("instance has total weight 0: Γ̄_w is undefined")
    unseen = np.ones(P, dtype=bool)
    unseen[idx] = False
    return float(W[unseen] @ np.abs(x_hat[unseen] - x_star[unseen]) / total)


def gamma_holdout(
    instance: CCInstance,
    observed: np.ndarray,
    *,
    holdout: float = 0.1,
    seed: int,
    rule: str = "upper",
    cutting_plane: bool = True,
    x_bar: np.ndarray | None = None,
) -> float:
    """Held-out ``Γ̂_w`` [ours]: how well witnesses recover observed marginals that are hidden from them.

    Hide ``round(holdout * m)`` random pairs ``H`` of ``E`` (at least 1, at most ``m - 1``), solve the
    observed LP on ``E \\ H``, impute ``H`` by ``rule``, and return
    ``sum_{uv in H} W_uv |x̂_uv - x̄_uv| / sum_{uv in H} W_uv`` where ``x̄`` is the observed LP on the
    full ``E`` (pass it as ``x_bar``, indexed like sorted ``observed``, to skip that solve). Uses the
    samples only. It estimates the mean error per unobserved pair, not ``Γ̄_w`` itself (which also
    scales with the unobserved share of the weight), and is slightly pessimistic: ``E \\ H`` has fewer
    witnesses than ``E``.
    """
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    n = instance.n
    idx = check_observed(n, observed)
    holdout = check_float("holdout", holdout, minimum=0.0, maximum=1.0, strict_min=True)
    rng = np.random.default_rng(check_seed("seed", seed))
    rule = check_choice("rule", rule, IMPUTE_RULES)
    m = idx.shape[0]
    if m < 2:
        raise ValueError(f"observed must hold at least 2 pairs to hide some; got {m}")
    if x_bar is None:
        x_bar = metric_lp(instance, idx, cutting_plane=cutting_plane).x
    else:
        x_bar = _check_marginals("x_bar", x_bar, m)
    h = int(np.clip(round(holdout * m), 1, m - 1))
    hidden = np.zeros(m, dtype=bool)
    hidden[rng.choice(m, size=h, replace=False)] = True
    kept = idx[~hidden]
    lp = metric_lp(instance, kept, cutting_plane=cutting_plane)
    x_hat = impute(n, kept, lp.x, rule=rule).x_hat[idx[hidden]]
    W = instance.total_weight[idx[hidden]]
    if W.sum() <= 0:
        return 0.0
    return float(W @ np.abs(x_hat - x_bar[hidden]) / W.sum())
