"""Exact product-key top-k: the ``k`` best of ``N = n²`` slot scores, never formed (Lample et al., 2019).

Slot ``(a, b)`` of an ``n × n`` grid has index ``i = a·n + b`` and score ``s_i = z1_a + z2_b``. A slot in the
top ``k`` of the grid must have its row ``a`` among the top ``k`` of ``z1`` and its column ``b`` among the top
``k`` of ``z2`` (otherwise ``k`` slots of its column, or of its row, beat it), so

1. ``A = topk(z1, min(k, n))``, ``B = topk(z2, min(k, n))``   — ``O(n)`` each;
2. the ``|A|·|B| ≤ k²`` candidate sums ``z1_a + z2_b``;
3. the top ``k`` of those candidates                          — ``O(k²)``.

Ties are broken by index (the smaller slot index first), at every stage, so the result is one well-defined
set for any input: a row ``a'`` that ties with ``a`` and lies before it also gives every slot of row ``a'``
a smaller index than the slot of row ``a`` in the same column, and likewise for columns. The selection is
hard (no gradient); the scores are gathered from ``z1`` and ``z2`` and carry their gradients.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.validation import check_int


def _check_scores(z1: object, z2: object) -> tuple[Tensor, Tensor]:
    for name, z in (("z1", z1), ("z2", z2)):
        if not isinstance(z, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(z).__name__}")
        if not z.is_floating_point() or z.ndim < 1 or z.shape[-1] < 1:
            raise ValueError(
                f"{name} must be a floating-point tensor (..., n) with n >= 1; got {tuple(z.shape)}"
            )
    if z1.shape != z2.shape:
        raise ValueError(f"z2 must have the shape of z1 {tuple(z1.shape)}; got {tuple(z2.shape)}")
    return z1, z2


def _top_by_index(scores: Tensor, index: Tensor, k: int) -> Tensor:
    """Positions (along the last axis) of the ``k`` best ``scores``, ties by the smaller ``index``.

    ``index`` holds distinct integers per row. Sorting by index first and then stably by score puts equal
    scores in index order.
    """
    by_index = index.argsort(dim=-1)
    ranked = scores.gather(-1, by_index).argsort(dim=-1, descending=True, stable=True)
    return by_index.gather(-1, ranked[..., :k])


def product_key_topk(z1: Tensor, z2: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The exact top-``k`` slots of the grid ``s_{a·n+b} = z1_a + z2_b``.

    z1, z2: ``(..., n)`` sub-scores (rows and columns). Returns ``(indices, scores)``, both ``(..., k)``:
    slot indices ``a·n + b`` (int64, distinct) and their scores, best first, ties by smaller index. Costs
    ``O(n log n + k² log k)`` per row with sorting (the ``O(n + k²)`` of the method with a selection); the
    ``n × n`` sums are never formed.
    """
    z1, z2 = _check_scores(z1, z2)
    n = z1.shape[-1]
    k = check_int("k", k, minimum=1, maximum=n * n)
    m = min(k, n)
    with torch.no_grad():
        arange = torch.arange(n, device=z1.device).expand_as(z1)
        rows = _top_by_index(z1, arange, m)  # (..., m)
        cols = _top_by_index(z2, arange, m)
        cand = (rows.unsqueeze(-1) * n + cols.unsqueeze(-2)).flatten(-2)  # (..., m²) slot indices
        sums = (z1.gather(-1, rows).unsqueeze(-1) + z2.gather(-1, cols).unsqueeze(-2)).flatten(-2)
        picked = _top_by_index(sums, cand, k)
        indices = cand.gather(-1, picked)
    scores = z1.gather(-1, indices // n) + z2.gather(-1, indices % n)
    return indices, scores


def brute_force_topk(z1: Tensor, z2: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The same selection by forming all ``N = n²`` sums (a reference for tests and figures)."""
    z1, z2 = _check_scores(z1, z2)
    n = z1.shape[-1]
    k = check_int("k", k, minimum=1, maximum=n * n)
    grid = (z1.unsqueeze(-1) + z2.unsqueeze(-2)).flatten(-2)  # (..., N)
    index = torch.arange(n * n, device=z1.device).expand_as(grid)
    indices = _top_by_index(grid, index, k)
    return indices, grid.gather(-1, indices)
