"""Sparse-LP-Pivot: correlation clustering from a sample of pairwise votes (chapter 02).

Instances and generators (:mod:`~neurips26.sparse_cc.instances`), the clustering cost
(:mod:`~neurips26.sparse_cc.cost`), the observed pair set (:mod:`~neurips26.sparse_cc.observed`), the
metric LP, its cutting-plane variant and exact OPT (:mod:`~neurips26.sparse_cc.lp`), triangle witnesses
and imputation (:mod:`~neurips26.sparse_cc.witness`) LP-PIVOT rounding
(:mod:`~neurips26.sparse_cc.pivot`), the baselines (:mod:`~neurips26.sparse_cc.baselines`), edge-sampling
coresets (:mod:`~neurips26.sparse_cc.coreset`), the VC brute force (:mod:`~neurips26.sparse_cc.vc`), the
witness and imputation-quality diagnostics (:mod:`~neurips26.sparse_cc.diagnostics`) and the claim
experiments (:mod:`~neurips26.sparse_cc.experiments`, imported on its own).

Pairs ``u < v`` are always indexed in row-major order (``numpy.triu_indices(n, 1)``).
"""

from neurips26.sparse_cc.baselines import (
    LPPivotResult,
    full_lp_pivot,
    kwik_marginals,
    kwikcluster,
    naive_fill,
    naive_lp_pivot,
)
from neurips26.sparse_cc.coreset import (
    SCHEMES,
    Coreset,
    CoresetLPPivotResult,
    clustering_pool,
    coreset_instance,
    coreset_lp_pivot,
    estimate_cost,
    estimate_costs,
    exact_costs,
    local_search,
    sample_coreset,
    sup_error,
)
from neurips26.sparse_cc.cost import check_labels, cost, disagreements, fractional_cost, separation
from neurips26.sparse_cc.diagnostics import (
    WitnessStats,
    all_pairs_threshold,
    coverage_theory,
    fractional_share,
    gamma_holdout,
    gamma_oracle,
    m_for,
    witness_stats,
)
from neurips26.sparse_cc.instances import (
    CCInstance,
    blobs,
    flipped_sbm,
    geometric_graph_metric,
    hidden_heavy,
    metric_closure,
    n_pairs,
    noisy_cluster_metric,
    opt_hidden_heavy,
    pair_index,
    pair_matrix,
    pairs,
    random_metric,
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
from neurips26.sparse_cc.vc import (
    VC_MAX_N,
    VCResult,
    disagreement_matrix,
    is_shattered,
    set_partitions,
    star_witness,
    vc_dimension,
)
from neurips26.sparse_cc.witness import IMPUTE_RULES, Imputation, impute, witness_counts

__all__ = [
    "adjacency",
    "all_pairs_threshold",
    "blobs",
    "CCInstance",
    "check_labels",
    "check_observed",
    "clustering_pool",
    "CMSY_A",
    "CMSY_B",
    "Coreset",
    "coreset_instance",
    "coreset_lp_pivot",
    "CoresetLPPivotResult",
    "cost",
    "coverage_theory",
    "disagreement_matrix",
    "disagreements",
    "estimate_cost",
    "estimate_costs",
    "exact_costs",
    "flipped_sbm",
    "fractional_cost",
    "fractional_share",
    "full_lp_pivot",
    "gamma_holdout",
    "gamma_oracle",
    "geometric_graph_metric",
    "hidden_heavy",
    "ILP_MAX_N",
    "Imputation",
    "impute",
    "IMPUTE_RULES",
    "is_shattered",
    "kwik_marginals",
    "kwikcluster",
    "labels_from_separation",
    "local_search",
    "lp_pivot",
    "LPPivotResult",
    "LPResult",
    "m_for",
    "metric_closure",
    "metric_lp",
    "n_pairs",
    "naive_fill",
    "naive_lp_pivot",
    "noisy_cluster_metric",
    "opt_hidden_heavy",
    "opt_ilp",
    "pair_index",
    "pair_matrix",
    "pairs",
    "PivotResult",
    "random_metric",
    "rounding_function",
    "ROUNDING_RULES",
    "sample_coreset",
    "sample_observed",
    "sbm_signed",
    "SCHEMES",
    "separation",
    "set_partitions",
    "sparse_lp_pivot",
    "SparseLPPivotResult",
    "star_witness",
    "sup_error",
    "triangle_rows",
    "vc_dimension",
    "VC_MAX_N",
    "VCResult",
    "witness_counts",
    "witness_stats",
    "WitnessStats",
]
