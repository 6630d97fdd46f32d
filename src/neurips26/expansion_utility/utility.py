"""Expansion utility: how much resampling a chain from step ``k`` raises its chance of a right answer.

With ``p̂_k(c)`` the fraction of ``r`` continuations from step ``k`` (steps before ``k`` kept, the rest and
the answer regenerated) that answer right and ``y₀(c)`` the chain's own correctness:

- the allocation value ``U_k(c) = p̂_k(c) − y₀(c)`` — what one extra continuation at step ``k`` gains
  (≥ 0 on a wrong chain: repair potential; ≤ 0 on a right one: the risk of disturbing it);
- the incremental value ``u_k(c) = p̂_k(c) − p̂_{k+1}(c)`` — what regenerating step ``k`` itself adds
  (``p̂_{n}`` regenerates the answer only), large where the chain's potential is lost.

The ``r = 2 r₀`` continuations of a sweep are split into a *selection* half (the first ``r₀``, from which a
policy picks steps) and an *evaluation* half (the last ``r₀``, on which the picks are scored), so that an
oracle cannot look good by picking steps whose estimate was lucky (the winner's curse); the *reuse* arm
uses all ``r`` for both, to show that bias.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.expansion_utility.simulator import Chains, exact_success_prob, resample_from
from neurips26.validation import check_int


@dataclass(frozen=True)
class Utilities:
    """Utilities of ``C`` chains over their steps, ``(C, n_max)`` with NaN beyond each chain's ``n``:
    ``sel`` and ``ev`` (``U_k`` from the selection and evaluation halves), ``reuse`` (from all ``r``),
    ``exact`` (from the exact ``p_k``); the incremental ``inc_sel``, ``inc_ev``, ``inc_exact``; and the
    chains' ``n`` and ``y0``."""

    sel: np.ndarray
    ev: np.ndarray
    reuse: np.ndarray
    exact: np.ndarray
    inc_sel: np.ndarray
    inc_ev: np.ndarray
    inc_exact: np.ndarray
    n: np.ndarray
    y0: np.ndarray

    def __len__(self) -> int:
        return len(self.n)


def allocation_value(p: np.ndarray, y0: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``U_k = p_k − y₀`` for the steps ``k < n`` of ``p`` ``(C, n_max + 1)``; NaN beyond ``n``."""
    n_max = p.shape[1] - 1
    u = p[:, :n_max] - y0[:, None].astype(float)
    u[np.arange(n_max)[None, :] >= n[:, None]] = np.nan
    return u


def incremental_value(p: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``u_k = p_k − p_{k+1}`` for the steps ``k < n`` of ``p`` ``(C, n_max + 1)``; NaN beyond ``n``."""
    n_max = p.shape[1] - 1
    u = p[:, :n_max] - p[:, 1:]
    u[np.arange(n_max)[None, :] >= n[:, None]] = np.nan
    return u


def utilities_from_hits(
    hits: np.ndarray, y0: np.ndarray, n: np.ndarray, p_exact: np.ndarray | None = None
) -> Utilities:
    """Utilities from the outcomes ``hits`` ``(C, n_max + 1, r)`` of ``r`` continuations from every step
    (``r`` even: the first half selects, the second evaluates), the chains' correctness ``y0`` and step
    counts ``n``, and the exact ``p_k`` when known (NaN otherwise, e.g. for a language model)."""
    r = hits.shape[-1]
    if r < 2 or r % 2:
        raise ValueError(f"r must be even (two halves of r/2 continuations); got {r}")
    hits = hits.astype(float)
    half = r // 2
    p_sel, p_ev, p_all = hits[..., :half].mean(-1), hits[..., half:].mean(-1), hits.mean(-1)
    if p_exact is None:
        p_exact = np.full(p_sel.shape, np.nan)
    return Utilities(
        sel=allocation_value(p_sel, y0, n),
        ev=allocation_value(p_ev, y0, n),
        reuse=allocation_value(p_all, y0, n),
        exact=allocation_value(p_exact, y0, n),
        inc_sel=incremental_value(p_sel, n),
        inc_ev=incremental_value(p_ev, n),
        inc_exact=incremental_value(p_exact, n),
        n=n,
        y0=y0,
    )


def utilities(chains: Chains, r: int, seed: int) -> Utilities:
    """The sweep of one cell: ``r`` continuations from every step of every chain (``r`` even, ≥ 2), split
    in halves, and the exact utilities."""
    r = check_int("r", r, minimum=2)
    if r % 2:
        raise ValueError(f"r must be even (two halves of r/2 continuations); got {r}")
    return utilities_from_hits(
        resample_from(chains, r, seed), chains.correct, chains.n, exact_success_prob(chains)
    )
