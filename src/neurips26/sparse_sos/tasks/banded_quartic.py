"""A banded quartic: the chain quartic with a variable graph of bandwidth ``band`` (the explore notebook's
"clique size" knob).

``f_θ(x) = Σ_i x_i⁴ + Σ_α θ_α x^α``, where the ``x^α`` are each variable's ``x_i, x_i², x_i³`` and, for
every pair ``i < j ≤ i + band``, the pair's ``x_i x_j, x_i² x_j, x_i x_j²``. The correlative-sparsity graph
is the band of width ``band`` — already chordal — so the cliques are the windows ``{i, ..., i + band}``
and the sparse certificate at order ``d`` has ``n − band`` blocks of size ``binom(band + 1 + d, d)``; the
dense one has one block of size ``binom(n + d, d)``. ``band = 1`` is the chain quartic
(:mod:`~neurips26.sparse_sos.tasks.chain_quartic`): the same monomials in the same order and the same
``θ₀`` from the same seed; the family, its polynomial and its program are the chain quartic's own class.
"""

from __future__ import annotations

from math import comb

import numpy as np
import torch

from neurips26.sparse_sos.polynomial import Monomial
from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.sparse_sos.tasks.chain_quartic import ChainQuartic, first_moments
from neurips26.validation import check_choice, check_float, check_int, check_seed

#: The relaxation orders the task offers (a quartic needs ``d ≥ 2``; ``d = 3`` is the next level).
ORDERS: tuple[int, ...] = (2, 3)


def _check_band(n: int, band: int) -> tuple[int, int]:
    n = check_int("n", n, minimum=2)
    band = check_int("band", band, minimum=1)
    if band >= n:
        raise ValueError(
            f"band must be below n = {n} (band = n − 1 is one clique, the dense program); got {band}"
        )
    return n, band


def banded_monomials(n: int, band: int) -> tuple[Monomial, ...]:
    """The ``θ`` monomials: per variable ``x_i, x_i², x_i³``, then per pair ``i < j ≤ i + band`` (by ``i``,
    then ``j``) ``x_i x_j, x_i² x_j, x_i x_j²`` — for ``band = 1`` exactly
    :func:`~neurips26.sparse_sos.tasks.chain_quartic.chain_monomials`."""
    n, band = _check_band(n, band)
    out: list[Monomial] = []
    for i in range(n):
        for p in (1, 2, 3):
            alpha = [0] * n
            alpha[i] = p
            out.append(tuple(alpha))
    for i in range(n - 1):
        for j in range(i + 1, min(i + band, n - 1) + 1):
            for a, b in ((1, 1), (2, 1), (1, 2)):
                alpha = [0] * n
                alpha[i], alpha[j] = a, b
                out.append(tuple(alpha))
    return tuple(out)


def banded_quartic(n: int, band: int = 1, seed: int = 0, *, scale: float = 0.3) -> ChainQuartic:
    """The banded quartic with ``n`` variables, bandwidth ``band`` and ``θ₀ ~ scale · N(0, 1)`` from
    ``seed`` (drawn as :func:`~neurips26.sparse_sos.tasks.chain_quartic.chain_quartic` draws it)."""
    n, band = _check_band(n, band)
    seed = check_seed("seed", seed)
    scale = check_float("scale", scale, minimum=0.0)
    monomials = banded_monomials(n, band)
    theta0 = scale * np.random.default_rng(seed).standard_normal(len(monomials))
    return ChainQuartic(n, torch.as_tensor(theta0, dtype=torch.float64), monomials)


def banded_block_size(band: int, order: int) -> int:
    """The size ``binom(band + 1 + d, d)`` of each block of the sparse certificate (a window of
    ``band + 1`` variables, monomials up to degree ``d = order``)."""
    band = check_int("band", band, minimum=1)
    order = check_int("order", order, minimum=1)
    return comb(band + 1 + order, order)


def banded_quartic_instance(
    n: int, band: int = 1, seed: int = 0, formulation: str = "sparse", *, order: int = 2
) -> TaskInstance:
    """The banded quartic as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance` at relaxation
    ``order`` (2 or 3), as :func:`~neurips26.sparse_sos.tasks.chain_quartic.chain_quartic_instance` builds
    the chain's: ``θ`` enters ``b``, the value is ``γ*``, the solution loss is ``‖x̂‖²`` of the first
    moments. ``band = 1, order = 2`` gives the chain quartic's instance."""
    check_choice("formulation", formulation, FORMULATIONS)
    order = check_int("order", order)
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}; got {order}")
    task = banded_quartic(n, band, seed)
    program = task.program(dense=formulation == "dense", order=order)
    rows = torch.as_tensor(program.support_rows)

    def data(theta: torch.Tensor) -> ConicData:
        b = torch.zeros(program.conic.shape[0], dtype=torch.float64, device=theta.device)
        return ConicData(b=b.index_put((rows.to(theta.device),), task.coefficients(theta)))

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return (first_moments(program, y) ** 2).sum()

    return TaskInstance(
        "banded_quartic", n, formulation, program.conic, task.theta0, data, -1.0, len(task.monomials), loss
    )
