"""The claim runners of chapter 04, one module per claim family; each has a frozen config with
``for_scale(scale)``, a result dataclass and a ``run_*`` function whose result is kept in
:mod:`neurips26.cache`. The criteria that decide the claims are in :mod:`neurips26.skae.verdicts`.

* :mod:`.forecast` — k1 (MSE through H of every row, both cadence rules) and k3 (sparsity ablations);
* :mod:`.alignment` — k2 (H(B|F) on the high-margin slice, transductive and held-out) and k7 (collapse);
* :mod:`.routing_runs` — k4 (staged support-family routing and the partition controls);
* :mod:`.identity` — k5 (support-coordinate interventions);
* :mod:`.chaos` — k6 (chaotic flows and Lorenz-96);
* :mod:`.common` — models, evaluation sets, basin labels and the cadence rules they share.
"""

from neurips26.skae.experiments.alignment import (
    AlignmentConfig,
    AlignmentResult,
    CollapseConfig,
    CollapseResult,
    run_alignment,
    run_collapse,
)
from neurips26.skae.experiments.chaos import ChaosConfig, ChaosResult, run_chaos
from neurips26.skae.experiments.forecast import (
    ForecastConfig,
    ForecastResult,
    SparsityConfig,
    SparsityResult,
    run_forecast,
    run_sparsity,
)
from neurips26.skae.experiments.identity import IdentityConfig, IdentityResult, run_identity
from neurips26.skae.experiments.routing_runs import RoutingConfig, RoutingResult, run_routing

__all__ = [
    "AlignmentConfig",
    "AlignmentResult",
    "ChaosConfig",
    "ChaosResult",
    "CollapseConfig",
    "CollapseResult",
    "ForecastConfig",
    "ForecastResult",
    "IdentityConfig",
    "IdentityResult",
    "RoutingConfig",
    "RoutingResult",
    "SparsityConfig",
    "SparsityResult",
    "run_alignment",
    "run_chaos",
    "run_collapse",
    "run_forecast",
    "run_identity",
    "run_routing",
    "run_sparsity",
]
