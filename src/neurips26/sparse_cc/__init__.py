"""Sparse-LP-Pivot: correlation clustering from a sample of pairwise votes (chapter 02).

Instances and generators (:mod:`~neurips26.sparse_cc.instances`), the clustering cost
(:mod:`~neurips26.sparse_cc.cost`), the observed pair set (:mod:`~neurips26.sparse_cc.observed`), the
metric LP, its cutting-plane variant and exact OPT (:mod:`~neurips26.sparse_cc.lp`), triangle witnesses
and imputation (:mod:`~neurips26.sparse_cc.witness`) and LP-PIVOT rounding
(:mod:`~neurips26.sparse_cc.pivot`).

Pairs ``u < v`` are always indexed in row-major order (``numpy.triu_indices(n, 1)``).
"""

from neurips26.sparse_cc.cost import check_labels, cost, disagreements, fractional_cost, separation
from neurips26.sparse_cc.instances import (
    CCInstance,
    blobs,
    geometric_graph_metric,
    hidden_heavy,
    metric_closure,
    n_pairs,
    noisy_cluster_metric,
    opt_hidden_heavy,
    pair_index,
    pair_matrix,
    pairs,
    sbm_signed,
)
from neurips26.sparse_cc.lp import (
    ILP_MAX_N,
    LPResult,
    labels_from_separation,
    metric_lp,
    opt_ilp,
    triangle_rows,
)
from neurips26.sparse_cc.observed import adjacency, check_observed, sample_observed
from neurips26.sparse_cc.pivot import (
    CMSY_A,
    CMSY_B,
    ROUNDING_RULES,
    PivotResult,
    SparseLPPivotResult,
    lp_pivot,
    rounding_function,
    sparse_lp_pivot,
)
from neurips26.sparse_cc.witness import IMPUTE_RULES, Imputation, impute, witness_counts

__all__ = [
    "CCInstance",
    "CMSY_A",
    "CMSY_B",
    "ILP_MAX_N",
    "IMPUTE_RULES",
    "Imputation",
    "LPResult",
    "PivotResult",
    "ROUNDING_RULES",
    "SparseLPPivotResult",
    "adjacency",
    "blobs",
    "check_labels",
    "check_observed",
    "cost",
    "disagreements",
    "fractional_cost",
    "geometric_graph_metric",
    "hidden_heavy",
    "impute",
    "labels_from_separation",
    "lp_pivot",
    "metric_closure",
    "metric_lp",
    "n_pairs",
    "noisy_cluster_metric",
    "opt_hidden_heavy",
    "opt_ilp",
    "pair_index",
    "pair_matrix",
    "pairs",
    "rounding_function",
    "sample_observed",
    "sbm_signed",
    "separation",
    "sparse_lp_pivot",
    "triangle_rows",
    "witness_counts",
]
