"""The claim experiments of chapter 02 (Sparse-LP-Pivot), at the three scales of the book.

1. :func:`vc_experiment` — brute-force VC dimension of the disagreement class (claim S1).
2. :func:`coreset_error_vs_S` — sup-error of weighted edge-sampling coresets over a pool of
   clusterings vs the sample size ``S`` and its log-log slope (S2).
3. :func:`cutting_plane_vs_full` — full metric LP vs the cutting-plane solver: value, rows, active
   triangles, wall time (S3).
4. :func:`witness_transition` — witness coverage vs ``c = m / n^{3/2}`` for several ``n`` against
   ``1 - exp(-4c^2)``, and the all-pairs coverage threshold ``sqrt(ln n / 2)`` (S4).
5. :func:`ratio_vs_c` — one grid, every method on the same instances and the same observed pairs:
   Sparse-LP-Pivot, naive imputation (1/2 and 1), KwikCluster and the coreset LP vs the exact-marginal
   baseline, with the imputation diagnostics and the rounding ablation (S5–S8).
6. :func:`adversarial_ratio_vs_n` — the hidden-heavy family with ``m < n`` observed pairs (S9).

Every experiment takes a frozen config (``Config.for_scale(scale)``) and a seed and returns a plain
dataclass of NumPy arrays. Instances and samples come from ``SeedSequence([seed, ...])`` so every
method sees the same data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import spearmanr

from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.sparse_cc.baselines import full_lp_pivot, kwikcluster, naive_fill
from neurips26.sparse_cc.coreset import clustering_pool, coreset_lp_pivot, sample_coreset, sup_error
from neurips26.sparse_cc.diagnostics import (
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
    flipped_sbm,
    hidden_heavy,
    noisy_cluster_metric,
    opt_hidden_heavy,
    random_metric,
)
from neurips26.sparse_cc.lp import metric_lp
from neurips26.sparse_cc.observed import sample_observed
from neurips26.sparse_cc.pivot import ROUNDING_RULES, lp_pivot
from neurips26.sparse_cc.vc import vc_dimension
from neurips26.sparse_cc.witness import impute
from neurips26.stats import loglog_fit
from neurips26.validation import (
    check_choice,
    check_float,
    check_float_tuple,
    check_int,
    check_int_tuple,
    check_seed,
)

FAMILIES: tuple[str, ...] = ("noisy_cluster", "random_metric", "flipped_sbm")
FAMILY_LABELS: dict[str, str] = {
    "noisy_cluster": "noisy clusters (k = 4, noise 0.1, closure)",
    "random_metric": "random metric (U(0.2, 1) lengths, closure)",
    "flipped_sbm": "signed SBM (k = 4, 25 % of signs flipped)",
}
SBM_FLIP = 0.25
"""Flip probability of the ``"flipped_sbm"`` family: the smallest of 0.15, 0.2, 0.25, 0.3 whose full LP
was fractional on every instance of the ratio grid at both ``n = 20`` (smoke) and ``n = 40``."""
METHODS: tuple[str, ...] = ("sparse_lp_pivot", "naive_half", "naive_one", "kwikcluster", "coreset_lp")
METHOD_LABELS: dict[str, str] = {
    "sparse_lp_pivot": "Sparse-LP-Pivot (witness imputation)",
    "naive_half": "observed LP, missing = 1/2",
    "naive_one": "observed LP, missing = 1",
    "kwikcluster": "KwikCluster on observed signs",
    "coreset_lp": "coreset LP (weighted, S = m)",
}
ADVERSARIAL_METHODS: tuple[str, ...] = ("sparse_lp_pivot", "naive_half", "kwikcluster")


def instance_seed(seed: int, family_index: int, instance_index: int) -> int:
    """The seed :func:`ratio_vs_c` draws instance ``instance_index`` of family ``family_index`` from.

    Public so a notebook can redraw exactly the instances of the ratio grid (e.g. to plot them).
    """
    return sub_seed(seed, family_index, instance_index)


def make_instance(family: str, n: int, seed: int) -> CCInstance:
    """One instance of the chapter's three families (:data:`FAMILIES`).

    ``"noisy_cluster"``: four planted clusters with ``N(0, 0.1^2)`` distance noise, repaired by metric
    closure — a pseudometric with an *integral* LP whose clusters the unseen pairs must recover. (With
    noise 0.3 a few short cross-cluster distances let the closure pull every distance below 1/2 at
    ``n = 40``, and the LP optimum becomes a single cluster.) ``"random_metric"``: the shortest-path
    metric of ``U(0.2, 1)`` edge lengths — a pseudometric, usually strongly fractional but without
    planted structure. ``"flipped_sbm"``: four planted blocks with 25 % of the signs flipped
    (:func:`~neurips26.sparse_cc.instances.flipped_sbm`) — planted structure *and* a fractional LP
    (about 38 % of the pairs at 1/2), but unit "+"/"-" weights rather than a pseudometric.
    """
    family = check_choice("family", family, FAMILIES)
    if family == "noisy_cluster":
        return noisy_cluster_metric(n, 4, 0.1, seed)[0]
    if family == "flipped_sbm":
        return flipped_sbm(n, 4, SBM_FLIP, seed)[0]
    return random_metric(n, 0.2, seed)


# --------------------------------------------------------------------------------------------
# 1. VC dimension (S1)


@dataclass(frozen=True)
class VCConfig:
    """Sizes ``n`` whose disagreement class is searched exhaustively."""

    ns: tuple[int, ...]

    def __post_init__(self) -> None:
        check_int_tuple("ns", self.ns, minimum=2)
        if max(self.ns) > 6:
            raise ValueError(f"ns must be <= 6 (Bell numbers grow fast); got {self.ns}")

    @classmethod
    def for_scale(cls, scale: str) -> VCConfig:
        return cls(ns=pick(scale, smoke=(2, 3, 4), default=(2, 3, 4, 5), paper=(2, 3, 4, 5)))


@dataclass(frozen=True)
class VCExperimentResult:
    ns: np.ndarray
    dimensions: np.ndarray
    shattered: tuple[tuple[tuple[int, int, str], ...], ...]
    seconds: np.ndarray


def vc_experiment(config: VCConfig) -> VCExperimentResult:
    """``VC({h_C})`` for every ``n`` in the config, with a shattered set and the search time."""
    dims, sets, secs = [], [], []
    for n in config.ns:
        start = time.perf_counter()
        res = vc_dimension(n)
        secs.append(time.perf_counter() - start)
        dims.append(res.dimension)
        sets.append(tuple(res.shattered))
    return VCExperimentResult(
        ns=np.array(config.ns), dimensions=np.array(dims), shattered=tuple(sets), seconds=np.array(secs)
    )


# --------------------------------------------------------------------------------------------
# 2. coreset error vs S (S2)


@dataclass(frozen=True)
class CoresetConfig:
    """Sup-error of the coreset estimator over a clustering pool, for each sample size ``S``."""

    n: int
    family: str
    sizes: tuple[int, ...]
    pool_random: int
    repeats: int

    def __post_init__(self) -> None:
        check_int("n", self.n, minimum=4)
        check_choice("family", self.family, FAMILIES)
        check_int_tuple("sizes", self.sizes, minimum=1)
        check_int("pool_random", self.pool_random, minimum=1)
        check_int("repeats", self.repeats, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> CoresetConfig:
        return cls(
            n=pick(scale, smoke=20, default=30, paper=200),
            family="random_metric",
            sizes=pick(
                scale,
                smoke=(100, 400, 1600),
                default=(100, 200, 400, 800, 1600, 3200, 6400),
                paper=(1000, 4000, 16000, 64000),
            ),
            pool_random=pick(scale, smoke=40, default=150, paper=500),
            repeats=pick(scale, smoke=3, default=10, paper=20),
        )


@dataclass(frozen=True)
class CoresetResult:
    config: CoresetConfig
    sizes: np.ndarray
    errors: dict[str, np.ndarray]  # scheme -> (repeats, len(sizes)) sup-error / W
    pool_size: int

    def mean(self, scheme: str) -> np.ndarray:
        return self.errors[scheme].mean(axis=0)

    def slope(self, scheme: str) -> float:
        return loglog_fit(self.sizes, self.mean(scheme))[0]


def coreset_error_vs_S(config: CoresetConfig, seed: int = 0) -> CoresetResult:
    """For ``S`` in ``config.sizes``: ``max_C |cost_hat(C) - cost(C)| / W`` over one clustering pool."""
    seed = check_seed("seed", seed)
    instance = make_instance(config.family, config.n, sub_seed(seed, 0))
    pool = clustering_pool(instance, n_random=config.pool_random, seed=sub_seed(seed, 1))
    errors = {s: np.zeros((config.repeats, len(config.sizes))) for s in ("weighted", "uniform")}
    cells = [(r, j) for r in range(config.repeats) for j in range(len(config.sizes))]
    for r, j in progress(cells, desc="coreset error vs S"):
        for scheme in errors:
            core = sample_coreset(instance, config.sizes[j], sub_seed(seed, 2, r, j), scheme=scheme)
            errors[scheme][r, j] = sup_error(instance, core, pool)
    return CoresetResult(config=config, sizes=np.array(config.sizes), errors=errors, pool_size=len(pool))


# --------------------------------------------------------------------------------------------
# 3. cutting plane vs full LP (S3)


@dataclass(frozen=True)
class CuttingPlaneConfig:
    """Full metric LP vs cutting plane on random-metric instances of each size, timed ``repeats`` times."""

    ns: tuple[int, ...]
    repeats: int

    def __post_init__(self) -> None:
        check_int_tuple("ns", self.ns, minimum=3)
        check_int("repeats", self.repeats, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> CuttingPlaneConfig:
        return cls(
            ns=pick(scale, smoke=(10, 15), default=(20, 30, 40), paper=(40, 60, 80)),
            repeats=pick(scale, smoke=2, default=5, paper=5),
        )


@dataclass(frozen=True)
class CuttingPlaneResult:
    ns: np.ndarray
    value_full: np.ndarray
    value_cut: np.ndarray
    time_full: np.ndarray  # (len(ns), repeats) seconds
    time_cut: np.ndarray
    rows_full: np.ndarray
    rows_cut: np.ndarray
    rounds: np.ndarray
    active_full: np.ndarray  # triangle rows with a nonzero dual at the full LP's optimum
    active_cut: np.ndarray
    n_pairs: np.ndarray

    @property
    def gap(self) -> np.ndarray:
        return np.abs(self.value_full - self.value_cut)

    @property
    def speedup(self) -> np.ndarray:
        return np.median(self.time_full, axis=1) / np.median(self.time_cut, axis=1)


def cutting_plane_vs_full(config: CuttingPlaneConfig, seed: int = 0) -> CuttingPlaneResult:
    """Solve each instance with both solvers ``repeats`` times (median times are reported)."""
    seed = check_seed("seed", seed)
    k = len(config.ns)
    out = {key: np.zeros(k) for key in ("vf", "vc", "rf", "rc", "ro", "af", "ac", "np")}
    tf, tc = np.zeros((k, config.repeats)), np.zeros((k, config.repeats))
    for i, n in enumerate(progress(config.ns, desc="full vs cutting-plane LP")):
        instance = make_instance("random_metric", n, sub_seed(seed, i))
        for r in range(config.repeats):
            t0 = time.perf_counter()
            full = metric_lp(instance)
            t1 = time.perf_counter()
            cut = metric_lp(instance, cutting_plane=True)
            t2 = time.perf_counter()
            tf[i, r], tc[i, r] = t1 - t0, t2 - t1
        out["vf"][i], out["vc"][i] = full.value, cut.value
        out["rf"][i], out["rc"][i], out["ro"][i] = full.n_rows, cut.n_rows, cut.rounds
        out["af"][i], out["ac"][i], out["np"][i] = full.n_active, cut.n_active, instance.n_pairs
    return CuttingPlaneResult(
        ns=np.array(config.ns),
        value_full=out["vf"],
        value_cut=out["vc"],
        time_full=tf,
        time_cut=tc,
        rows_full=out["rf"].astype(int),
        rows_cut=out["rc"].astype(int),
        rounds=out["ro"].astype(int),
        active_full=out["af"].astype(int),
        active_cut=out["ac"].astype(int),
        n_pairs=out["np"].astype(int),
    )


# --------------------------------------------------------------------------------------------
# 4. witness transition (S4)


@dataclass(frozen=True)
class WitnessConfig:
    """Witness coverage for every ``n`` and ``c = m / n^{3/2}``, ``trials`` samples each."""

    ns: tuple[int, ...]
    cs: tuple[float, ...]
    trials: int

    def __post_init__(self) -> None:
        check_int_tuple("ns", self.ns, minimum=4)
        check_float_tuple("cs", self.cs, minimum=0.0, strict_min=True)
        check_int("trials", self.trials, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> WitnessConfig:
        fine = tuple(round(0.1 * i, 1) for i in range(1, 26))
        return cls(
            ns=pick(scale, smoke=(50, 100), default=(100, 200, 400), paper=(100, 400, 1600)),
            cs=pick(scale, smoke=tuple(round(0.25 * i, 2) for i in range(1, 11)), default=fine, paper=fine),
            trials=pick(scale, smoke=4, default=20, paper=50),
        )


@dataclass(frozen=True)
class WitnessResult:
    ns: np.ndarray
    cs: np.ndarray
    coverage: np.ndarray  # (len(ns), len(cs)) mean fraction of all pairs with >= 1 witness
    coverage_unobserved: np.ndarray  # the same over unobserved pairs only
    all_covered: np.ndarray  # fraction of trials in which every unobserved pair has a witness
    mean_witnesses: np.ndarray

    @property
    def theory(self) -> np.ndarray:
        return coverage_theory(self.cs)

    @property
    def thresholds(self) -> np.ndarray:
        return np.array([all_pairs_threshold(int(n)) for n in self.ns])


def witness_transition(config: WitnessConfig, seed: int = 0) -> WitnessResult:
    """Sample ``m = c n^{3/2}`` pairs uniformly without replacement and count witnesses (sparse ``A^2``)."""
    seed = check_seed("seed", seed)
    shape = (len(config.ns), len(config.cs))
    cov, cov_u, allc, mean_w = (np.zeros(shape) for _ in range(4))
    cells = [(i, j) for i in range(shape[0]) for j in range(shape[1])]
    for i, j in progress(cells, desc="witness transition"):
        n, m = config.ns[i], m_for(config.ns[i], config.cs[j])
        stats = [
            witness_stats(n, sample_observed(n, m, sub_seed(seed, i, j, t))) for t in range(config.trials)
        ]
        cov[i, j] = np.mean([s.frac_all for s in stats])
        cov_u[i, j] = np.mean([s.frac_unobserved for s in stats])
        allc[i, j] = np.mean([s.all_covered for s in stats])
        mean_w[i, j] = np.mean([s.mean_count for s in stats])
    return WitnessResult(
        ns=np.array(config.ns),
        cs=np.array(config.cs),
        coverage=cov,
        coverage_unobserved=cov_u,
        all_covered=allc,
        mean_witnesses=mean_w,
    )


# --------------------------------------------------------------------------------------------
# 5. ratio vs c, diagnostics and rounding ablation (S5-S8)


@dataclass(frozen=True)
class RatioConfig:
    """The main grid: families × instances × ``c``, every method on the same observed pairs."""

    n: int
    families: tuple[str, ...]
    instances: int
    cs: tuple[float, ...]
    runs: int
    holdout: float = 0.1

    def __post_init__(self) -> None:
        check_int("n", self.n, minimum=5)
        if not isinstance(self.families, tuple) or not self.families:
            raise ValueError(f"families must be a non-empty tuple; got {self.families!r}")
        for f in self.families:
            check_choice("families", f, FAMILIES)
        check_int("instances", self.instances, minimum=1)
        check_float_tuple("cs", self.cs, minimum=0.0, strict_min=True)
        check_int("runs", self.runs, minimum=1)
        check_float("holdout", self.holdout, minimum=0.0, maximum=0.5, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> RatioConfig:
        return cls(
            n=pick(scale, smoke=20, default=40, paper=100),
            families=FAMILIES,
            instances=pick(scale, smoke=1, default=2, paper=10),
            cs=pick(
                scale, smoke=(0.5, 1.5), default=(0.25, 0.5, 0.75, 1.0, 1.5, 2.0), paper=(0.25, 0.5, 1.0, 2.0)
            ),
            runs=pick(scale, smoke=10, default=50, paper=100),
        )


@dataclass(frozen=True)
class RatioResult:
    """Arrays indexed ``[family, instance, c]`` (``[family, instance]`` for the full-LP baseline).

    Every ratio is mean pivot cost / ``LP*`` (the full LP value, a lower bound on OPT).
    """

    config: RatioConfig
    lp_star: np.ndarray
    full_ratio: dict[str, np.ndarray]  # rounding rule -> (F, I) on exact marginals x*
    fractional: np.ndarray  # (F, I) share of fractional pairs in x*
    imputed_fractional: np.ndarray  # (F, I, C) share of fractional pairs in Sparse-LP-Pivot's x_hat
    ratio: dict[str, np.ndarray]  # method -> (F, I, C)
    imputed_ratio: dict[str, np.ndarray]  # rounding rule -> (F, I, C) on Sparse-LP-Pivot's x_hat
    gamma_oracle: np.ndarray
    gamma_holdout: np.ndarray
    no_witness: np.ndarray  # unobserved pairs without a witness
    imputation_error: np.ndarray  # mean |x_hat - x*| over unobserved pairs
    m: np.ndarray  # (C,) observed pairs per c
    seconds: float = field(default=0.0)

    def excess(self, method: str = "sparse_lp_pivot") -> np.ndarray:
        """Ratio above the exact-marginal (ACN) ratio of the same instance."""
        return self.ratio[method] - self.full_ratio["acn"][:, :, None]

    def rounding_excess(self, rule: str) -> np.ndarray:
        """On imputed marginals, ``rule``'s ratio above the same rule's exact-marginal ratio."""
        return self.imputed_ratio[rule] - self.full_ratio[rule][:, :, None]

    def spearman_gamma_excess(self, which: str = "holdout") -> float:
        """Spearman correlation of ``Γ̂_w`` (or the oracle ``Γ̄_w``) with the excess ratio, all cells."""
        gamma = self.gamma_holdout if which == "holdout" else self.gamma_oracle
        return float(spearmanr(gamma.ravel(), self.excess().ravel()).statistic)


def ratio_vs_c(config: RatioConfig, seed: int = 0) -> RatioResult:
    """Run every method on the same instances and observed sets; record ratios and diagnostics."""
    seed = check_seed("seed", seed)
    start = time.perf_counter()
    F, I, C = len(config.families), config.instances, len(config.cs)
    n, R = config.n, config.runs
    lp_star, fractional = np.zeros((F, I)), np.zeros((F, I))
    full_ratio = {rule: np.zeros((F, I)) for rule in ROUNDING_RULES}
    ratio = {m: np.zeros((F, I, C)) for m in METHODS}
    imputed_ratio = {rule: np.zeros((F, I, C)) for rule in ROUNDING_RULES}
    g_or, g_ho, no_w, err, imp_frac = (np.zeros((F, I, C)) for _ in range(5))
    m_values = np.array([m_for(n, c) for c in config.cs])
    cells = [(f, i) for f in range(F) for i in range(I)]
    for f, i in progress(cells, desc="ratio vs c"):
        instance = make_instance(config.families[f], n, instance_seed(seed, f, i))
        pivot_seed = sub_seed(seed, f, i, 99)
        full = full_lp_pivot(instance, runs=R, seed=pivot_seed)
        x_star, lp_star[f, i] = full.lp.x, full.lp.value
        fractional[f, i] = fractional_share(x_star)
        for rule in ROUNDING_RULES:
            full_ratio[rule][f, i] = lp_pivot(
                instance, x_star, rounding=rule, runs=R, seed=pivot_seed
            ).mean_cost
        for j, m in enumerate(m_values):
            observed = sample_observed(n, int(m), sub_seed(seed, f, i, j))
            lp = metric_lp(instance, observed, cutting_plane=True)
            imp = impute(n, observed, lp.x, rule="upper")
            imp_frac[f, i, j] = fractional_share(imp.x_hat)
            ratio["sparse_lp_pivot"][f, i, j] = lp_pivot(
                instance, imp.x_hat, runs=R, seed=pivot_seed
            ).mean_cost
            for method, fill in (("naive_half", 0.5), ("naive_one", 1.0)):
                x_naive = naive_fill(instance.n_pairs, observed, lp.x, fill)
                ratio[method][f, i, j] = lp_pivot(instance, x_naive, runs=R, seed=pivot_seed).mean_cost
            ratio["kwikcluster"][f, i, j] = kwikcluster(instance, observed, runs=R, seed=pivot_seed).mean_cost
            core = coreset_lp_pivot(instance, int(m), sub_seed(seed, f, i, j, 1), runs=R)
            ratio["coreset_lp"][f, i, j] = core.pivot.mean_cost
            for rule in ROUNDING_RULES:
                res = lp_pivot(instance, imp.x_hat, rounding=rule, runs=R, seed=pivot_seed)
                imputed_ratio[rule][f, i, j] = res.mean_cost
            unseen = np.ones(instance.n_pairs, dtype=bool)
            unseen[observed] = False
            g_or[f, i, j] = gamma_oracle(instance, observed, imp.x_hat, x_star)
            g_ho[f, i, j] = gamma_holdout(
                instance, observed, holdout=config.holdout, seed=sub_seed(seed, f, i, j, 2), x_bar=lp.x
            )
            no_w[f, i, j] = imp.n_no_witness
            err[f, i, j] = float(np.mean(np.abs(imp.x_hat - x_star)[unseen])) if unseen.any() else 0.0
    denom = lp_star[:, :, None]
    return RatioResult(
        config=config,
        lp_star=lp_star,
        full_ratio={rule: v / lp_star for rule, v in full_ratio.items()},
        fractional=fractional,
        imputed_fractional=imp_frac,
        ratio={m: v / denom for m, v in ratio.items()},
        imputed_ratio={rule: v / denom for rule, v in imputed_ratio.items()},
        gamma_oracle=g_or,
        gamma_holdout=g_ho,
        no_witness=no_w,
        imputation_error=err,
        m=m_values,
        seconds=time.perf_counter() - start,
    )


# --------------------------------------------------------------------------------------------
# 6. adversarial general weights (S9)


@dataclass(frozen=True)
class AdversarialConfig:
    """Hidden-heavy instances (``H = n^2``) seen through ``m = n // 2`` uniformly sampled pairs."""

    ns: tuple[int, ...]
    trials: int
    runs: int

    def __post_init__(self) -> None:
        check_int_tuple("ns", self.ns, minimum=4)
        check_int("trials", self.trials, minimum=1)
        check_int("runs", self.runs, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> AdversarialConfig:
        return cls(
            ns=pick(scale, smoke=(20, 40), default=(20, 40, 80, 160), paper=(20, 40, 80, 160, 320)),
            trials=pick(scale, smoke=3, default=10, paper=30),
            runs=pick(scale, smoke=5, default=20, paper=50),
        )


@dataclass(frozen=True)
class AdversarialResult:
    ns: np.ndarray
    opt: np.ndarray  # (N,) closed-form OPT = min(H, n - 2)
    ratio: dict[str, np.ndarray]  # method -> (N, trials) mean cost / OPT
    hidden_seen: np.ndarray  # (N, trials) whether the heavy pair was among the observed ones

    def slope(self, method: str) -> float:
        return loglog_fit(self.ns, self.ratio[method].mean(axis=1))[0]


def adversarial_ratio_vs_n(config: AdversarialConfig, seed: int = 0) -> AdversarialResult:
    """cost / OPT of each sampling method on hidden-heavy instances with ``o(n)`` observed pairs."""
    seed = check_seed("seed", seed)
    N, T = len(config.ns), config.trials
    ratio = {m: np.zeros((N, T)) for m in ADVERSARIAL_METHODS}
    seen = np.zeros((N, T), dtype=bool)
    opt = np.zeros(N)
    cells = [(i, t) for i in range(N) for t in range(T)]
    for i, t in progress(cells, desc="adversarial ratio vs n"):
        n = config.ns[i]
        H = float(n * n)
        opt[i] = opt_hidden_heavy(n, H)
        instance, hidden = hidden_heavy(n, H, sub_seed(seed, i, t))
        observed = sample_observed(n, n // 2, sub_seed(seed, i, t, 1))
        seen[i, t] = hidden in set(observed.tolist())
        pivot_seed = sub_seed(seed, i, t, 2)
        lp = metric_lp(instance, observed, cutting_plane=True)
        x_hat = impute(n, observed, lp.x, rule="upper").x_hat
        ratio["sparse_lp_pivot"][i, t] = lp_pivot(
            instance, x_hat, runs=config.runs, seed=pivot_seed
        ).mean_cost
        x_half = naive_fill(instance.n_pairs, observed, lp.x, 0.5)
        ratio["naive_half"][i, t] = lp_pivot(instance, x_half, runs=config.runs, seed=pivot_seed).mean_cost
        ratio["kwikcluster"][i, t] = kwikcluster(
            instance, observed, runs=config.runs, seed=pivot_seed
        ).mean_cost
    return AdversarialResult(
        ns=np.array(config.ns),
        opt=opt,
        ratio={m: v / opt[:, None] for m, v in ratio.items()},
        hidden_seen=seen,
    )
