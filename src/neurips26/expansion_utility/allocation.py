"""Budgeted allocation of resamples to steps: policies, their values, the oracle gap, gain recovered.

At step budget ``β`` a policy picks ``B(c) = max(1, ⌈β n⌉)`` steps of chain ``c``; its value is the mean
evaluation-half utility of its picks, ``V_π(c) = (1/B) Σ_{k∈S_π(c)} U^ev_k(c)``. The random policy's value is
its exact expectation, the mean of ``U^ev`` over the chain's steps; the oracle picks the top ``B`` by the
selection half ``U^sel``. A cell's oracle gap is ``mean_c V_★(c) − V_rand(c)``; a policy's gain recovered is
``GR = Σ_c (V_π − V_rand) / Σ_c (V_★ − V_rand)`` (0 random, 1 oracle, < 0 worse than random). A gated
policy acts only on the chains where its gate fires and falls back to random elsewhere (contributing 0).
The declared cost of a pick is the tokens it regenerates (the picked step and every later one).
"""

from __future__ import annotations

import numpy as np

from neurips26.validation import check_float


def budget(n: np.ndarray | int, beta: float) -> np.ndarray:
    """``B(c) = max(1, ⌈β n_c⌉)`` for step counts ``n``; ``β ∈ (0, 1]``."""
    beta = check_float("beta", beta, minimum=0.0, maximum=1.0, strict_min=True)
    n = np.asarray(n)
    if (n < 1).any():
        raise ValueError("n must be at least 1 (a chain has steps)")
    return np.maximum(1, np.ceil(beta * n - 1e-12).astype(int))


def top_b(scores: np.ndarray, n: np.ndarray, beta: float, *, seed: int | None = None) -> np.ndarray:
    """Boolean picks ``(C, n_max)``: the top ``B(c)`` steps of each chain by ``scores`` (NaN padding never
    picked; ties by the earlier step, or at random with ``seed``)."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[0] != len(n):
        raise ValueError(f"scores must be (C, n_max) with C = {len(n)}; got {scores.shape}")
    valid = np.arange(scores.shape[1])[None, :] < np.asarray(n)[:, None]
    if np.isnan(scores[valid]).any():
        raise ValueError("scores must not be NaN on a chain's steps")
    s = np.where(valid, scores, -np.inf)
    if seed is not None:
        jitter = np.random.default_rng(seed).random(s.shape)
        order = np.lexsort((jitter, -s), axis=1)
    else:
        order = np.argsort(-s, axis=1, kind="stable")
    B = budget(n, beta)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(s.shape[1])[None, :].repeat(len(s), 0), axis=1)
    return (ranks < B[:, None]) & valid


def policy_value(picks: np.ndarray, ev: np.ndarray) -> np.ndarray:
    """``V_π(c)``: the mean of ``ev`` over each chain's picks ``(C,)``."""
    count = picks.sum(1)
    if (count == 0).any():
        raise ValueError("picks must select at least one step per chain")
    return np.where(picks, np.nan_to_num(ev), 0.0).sum(1) / count


def random_value(ev: np.ndarray) -> np.ndarray:
    """The random policy's exact expected value: the mean of ``ev`` over each chain's steps."""
    return np.nanmean(ev, axis=1)


def oracle_gap(sel: np.ndarray, ev: np.ndarray, n: np.ndarray, beta: float) -> float:
    """A cell's mean ``V_★ − V_rand`` (the oracle picks by ``sel``, is scored on ``ev``)."""
    return float(np.mean(policy_value(top_b(sel, n, beta), ev) - random_value(ev)))


def gain_recovered(
    picks: np.ndarray,
    sel: np.ndarray,
    ev: np.ndarray,
    n: np.ndarray,
    beta: float,
    *,
    act: np.ndarray | None = None,
) -> float:
    """``GR`` of ``picks`` against the oracle on ``sel``: pooled over the cell's chains; with ``act``
    (the gate) a chain where the gate does not fire contributes 0 (random fallback). NaN when the oracle
    gains nothing."""
    rand = random_value(ev)
    gain = policy_value(picks, ev) - rand
    if act is not None:
        gain = np.where(act, gain, 0.0)
    best = float(np.sum(policy_value(top_b(sel, n, beta), ev) - rand))
    return float(np.sum(gain) / best) if best > 0 else float("nan")


def regenerated_tokens(picks: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Tokens each chain's picks regenerate: for a pick at step ``k``, the lengths of steps ``k…n−1``."""
    suffix = np.cumsum(length[:, ::-1], axis=1)[:, ::-1]  # tokens from step k to the end
    return np.where(picks, suffix, 0).sum(1)
