"""Staged support-family routing of local affine latent maps (paper §method_routing and appendix "Staged
routing"), the earlier draft's support-gated ``K`` and wrong-support freeze, and partition controls.

Staged model (paper; authors' ``skae/support/local_operator.py``): freeze ``E``, ``D`` and ``K``; encode
training-distribution trajectories; route every source latent; for every route ``f`` with at least one
transition define ``T_f(z) = d_f + K_f (z − z̄_f)`` with ``z̄_f`` the mean source latent of route ``f``,
``K_f ← K`` and ``d_f ← K z̄_f`` (so at initialisation ``T_f(z) = K z``: the staged model starts as the global
model); then train ``K_f`` and ``d_f`` (the authors' final runs learn the intercept too, their
``learn_target_centers=True``; ``z̄_f`` stays fixed) on the frozen model's loss of an ``L``-step latent
rollout that is routed before *every* step. At rollout, a latent whose route is ``-1`` (an unmatched
support) falls back to ``K``. :class:`RoutedStep` plugs into ``rollout(..., step=...)``.

Routers (``z ↦`` route ids, ``-1`` = fall back):

* :class:`SupportRouter` — the paper's: the exact support ``|z_i| > 1e-3`` matched against a routing
  :class:`~neurips26.skae.supports.Codebook` (families fitted at ``τ_J = 0.4`` on the training latents);
* partition controls of the earlier draft (its appendix "Falsification and partition controls"):
  :func:`oracle_router` (the true basin of the decoded state ``D z``: by default its nearest evaluation
  basin centre), :func:`random_router` (the reference routes of the training source latents randomly
  permuted, so the parts are count- and size-matched but carry no information, then every latent routed to
  the nearest random-label latent mean) and :func:`kmeans_router` (latent k-means, ``k`` matched to the
  number of occupied support families).

``fit_local_maps(..., method="gradient")`` is the paper's second stage (AdamW, no weight decay, a constant
rate as the authors' ``_run_stage_two``); ``method="lstsq"`` fits each ``(K_f, d_f)`` in closed form by
ridge regression of the next latent on the centred source latent (the earlier draft's centred ridge slopes,
``η = 1e-4``). Ours: the intercept is the least-squares one, not the draft's ``z̄_f``, so the fit is exact on
piecewise-affine latent dynamics. Routes with fewer than ``min_transitions`` training transitions get no
map and fall back to ``K`` (the paper keeps every route with at least one; the draft needed 128).

Earlier-draft diagnostics: :class:`GatedStep` is the support-gated ``K``, ``ẑ = z̄_c + K(m_c ⊙ (z − z̄_c))``
with ``m_c`` the family's representative mask, routed every step; :class:`FrozenGateStep` keeps one family's
gate for the whole rollout (per start), so the wrong-support freeze compares a start's own family with
another's (:func:`wrong_families`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.cluster import KMeans
from torch import Tensor, nn

from neurips26.seeding import sub_seed
from neurips26.skae.losses import WINDOW, LossWeights, default_weights
from neurips26.skae.model import KAE
from neurips26.skae.supports import (
    ABS_THRESHOLD,
    TAU_ROUTE,
    Codebook,
    check_tau_j,
    fit_families,
    routing_codebook,
    support_abs,
)
from neurips26.skae.systems import nearest_center
from neurips26.train import fit
from neurips26.validation import check_choice, check_float, check_int, check_seed

#: Router kinds: the paper's support families and the three partition controls.
ROUTERS = ("support", "oracle", "random", "kmeans")
#: Ways to fit the local maps.
FIT_METHODS = ("gradient", "lstsq")
#: Ridge of the closed-form local fit (the earlier draft's η).
RIDGE = 1e-4


def _check_model(model: object) -> KAE:
    if not isinstance(model, KAE):
        raise TypeError(f"model must be a KAE; got {type(model).__name__}")
    return model


def _trajectories(model: KAE, trajectories: object) -> Tensor:
    x = torch.as_tensor(trajectories) if not isinstance(trajectories, Tensor) else trajectories
    if x.ndim != 3 or x.shape[1] < 2 or x.shape[2] != model.state_dim:
        raise ValueError(
            f"trajectories must have shape (N, T + 1 >= 2, state_dim={model.state_dim}); got {tuple(x.shape)}"
        )
    if not torch.isfinite(x).all():
        raise ValueError("trajectories must contain only finite values (no NaN or inf)")
    return x.to(device=model.device, dtype=model.transition.K.dtype)


def encode_trajectories(model: KAE, trajectories: object) -> Tensor:
    """``E(x)`` of every state of ``(N, T + 1, d_x)`` trajectories, ``(N, T + 1, d_z)``, no gradients."""
    model = _check_model(model)
    x = _trajectories(model, trajectories)
    with torch.no_grad():
        return model.encode(x)


def _latents(z: object, latent: int | None = None) -> Tensor:
    if not isinstance(z, Tensor):
        raise TypeError(f"z must be a torch.Tensor; got {type(z).__name__}")
    if z.ndim != 2 or (latent is not None and z.shape[1] != latent):
        want = "d_z" if latent is None else latent
        raise ValueError(f"z must have shape (N, {want}); got {tuple(z.shape)}")
    return z


# ----------------------------------------------------------------------------------------------------------
# Routers
# ----------------------------------------------------------------------------------------------------------


class SupportRouter:
    """The paper's router: ``S_abs(z)`` matched to a frozen routing codebook (``-1`` when unmatched)."""

    kind = "support"

    def __init__(self, codebook: Codebook, *, threshold: float = ABS_THRESHOLD) -> None:
        if not isinstance(codebook, Codebook):
            raise TypeError(f"codebook must be a Codebook; got {type(codebook).__name__}")
        self.codebook = codebook
        self.threshold = check_float("threshold", threshold, minimum=0.0)

    @property
    def count(self) -> int:
        return int(self.codebook.representatives.shape[0])

    def __call__(self, z: Tensor) -> Tensor:
        z = _latents(z, self.codebook.representatives.shape[1])
        masks = support_abs(torch.nan_to_num(z, nan=0.0), self.threshold)
        routes = torch.as_tensor(self.codebook.match(masks), device=z.device)
        return torch.where(torch.isfinite(z).all(dim=1), routes, torch.full_like(routes, -1))


class CentroidRouter:
    """Routes each latent to its nearest centre (latent k-means, or the random-label means)."""

    def __init__(self, centers: Tensor, kind: str) -> None:
        self.centers = _latents(centers)
        self.kind = kind

    @property
    def count(self) -> int:
        return int(self.centers.shape[0])

    def __call__(self, z: Tensor) -> Tensor:
        z = _latents(z, self.centers.shape[1])
        routes = torch.cdist(z, self.centers.to(device=z.device, dtype=z.dtype)).argmin(dim=1)
        return torch.where(torch.isfinite(z).all(dim=1), routes, torch.full_like(routes, -1))


class StateRouter:
    """The oracle control: the true basin ``labeler(D z)`` of the decoded state (ids ``0..count-1``)."""

    kind = "oracle"

    def __init__(self, model: KAE, labeler: Callable[[Tensor], Tensor], count: int) -> None:
        self.model = _check_model(model)
        if not callable(labeler):
            raise TypeError(f"labeler must be callable (states -> labels); got {type(labeler).__name__}")
        self.labeler = labeler
        self._count = check_int("count", count, minimum=1)

    @property
    def count(self) -> int:
        return self._count

    def __call__(self, z: Tensor) -> Tensor:
        with torch.no_grad():
            x = self.model.decode(z)
        finite = torch.isfinite(x).all(dim=-1)
        labels = torch.as_tensor(self.labeler(torch.nan_to_num(x)), device=z.device).long()
        return torch.where(finite, labels, torch.full_like(labels, -1))


Router = SupportRouter | CentroidRouter | StateRouter


@dataclass(frozen=True)
class SupportFit:
    """The routing families fitted on training latents: the router and the number of families opened."""

    router: SupportRouter
    families_opened: int


def support_router(model: KAE, trajectories: object, *, tau_j: float = TAU_ROUTE) -> SupportFit:
    """Fit the paper's routing families on ``(N, T + 1, d_x)`` training trajectories (``τ_J = 0.4``).

    Families are fitted on every state's ``S_abs``; the codebook keeps families with a source state (all
    but each trajectory's last) and their modal source support (:func:`~neurips26.skae.supports.
    routing_codebook`).
    """
    tau_j = check_tau_j(tau_j)
    z = encode_trajectories(model, trajectories)
    n, t1, d = z.shape
    masks = support_abs(z.reshape(n * t1, d))
    families = fit_families(masks, tau_j)
    source = np.ones((n, t1), dtype=bool)
    source[:, -1] = False
    codebook = routing_codebook(families, masks, source.reshape(-1))
    return SupportFit(SupportRouter(codebook), families.count)


def _source_latents(model: KAE, trajectories: object) -> Tensor:
    z = encode_trajectories(model, trajectories)
    return z[:, :-1].reshape(-1, z.shape[-1])


def kmeans_router(model: KAE, trajectories: object, count: int, *, seed: int) -> CentroidRouter:
    """Latent k-means control: ``count`` clusters of the training source latents (scikit-learn, seeded)."""
    count = check_int("count", count, minimum=1)
    seed = check_seed("seed", seed)
    src = _source_latents(model, trajectories)
    if count > src.shape[0]:
        raise ValueError(f"count must be <= the number of source latents {src.shape[0]}; got {count}")
    km = KMeans(n_clusters=count, n_init=4, random_state=seed).fit(src.cpu().double().numpy())
    return CentroidRouter(torch.as_tensor(km.cluster_centers_, dtype=src.dtype, device=src.device), "kmeans")


def random_router(model: KAE, trajectories: object, reference: Router, *, seed: int) -> CentroidRouter:
    """Random count-matched control: permute ``reference``'s routes of the training source latents
    (unrouted ones left out), then route to the nearest mean latent of each permuted label."""
    seed = check_seed("seed", seed)
    if not isinstance(reference, SupportRouter | CentroidRouter | StateRouter):
        raise TypeError(f"reference must be a router of this module; got {type(reference).__name__}")
    src = _source_latents(model, trajectories)
    routes = reference(src)
    keep = routes >= 0
    if not bool(keep.any()):
        raise ValueError("reference routes none of the training source latents")
    labels = torch.unique(routes[keep], return_inverse=True)[1]
    rng = np.random.default_rng(seed)
    shuffled = labels[torch.as_tensor(rng.permutation(labels.shape[0]), device=labels.device)]
    count = int(labels.max()) + 1
    return CentroidRouter(_route_centers(src[keep], shuffled, count), "random")


def oracle_router(
    model: KAE,
    labeler: Callable[[Tensor], Tensor] | None = None,
    count: int | None = None,
    *,
    centers: object = None,
) -> StateRouter:
    """Oracle-label control: route by the true basin of the decoded state.

    Either ``labeler`` (states ↦ labels ``0..count-1``) with ``count``, or ``centers`` ``(k, d_x)``: the
    nearest evaluation basin centre, as the earlier draft.
    """
    if centers is not None:
        if labeler is not None:
            raise ValueError("give either labeler or centers, not both")
        c = np.asarray(centers, dtype=float)
        if c.ndim != 2 or c.shape[1] != model.state_dim or c.shape[0] < 1 or not np.all(np.isfinite(c)):
            raise ValueError(f"centers must be a finite array of shape (k, state_dim={model.state_dim})")
        return StateRouter(model, lambda x: nearest_center(x, c), c.shape[0])
    if labeler is None or count is None:
        raise ValueError("labeler and count (or centers) must be given for the oracle router")
    return StateRouter(model, labeler, count)


def make_router(
    kind: str,
    model: KAE,
    trajectories: object,
    *,
    count: int | None = None,
    labeler: Callable[[Tensor], Tensor] | None = None,
    centers: object = None,
    tau_j: float = TAU_ROUTE,
    seed: int = 0,
) -> Router:
    """A router by kind: ``"support"``, ``"oracle"`` (``labeler`` and ``count``, or ``centers``),
    ``"random"`` (the support routes permuted) or ``"kmeans"`` (``count`` defaults to the number of
    occupied support families)."""
    kind = check_choice("kind", kind, ROUTERS)
    if kind == "oracle":
        return oracle_router(model, labeler, count, centers=centers)
    support = support_router(model, trajectories, tau_j=tau_j).router
    if kind == "support":
        return support
    if kind == "random":
        return random_router(model, trajectories, support, seed=seed)
    if count is None:
        count = int(torch.unique(support(_source_latents(model, trajectories))).ge(0).sum())
    return kmeans_router(model, trajectories, count, seed=seed)


# ----------------------------------------------------------------------------------------------------------
# Local maps
# ----------------------------------------------------------------------------------------------------------


class LocalMaps(nn.Module):
    """``T_f(z) = d_f + K_f (z − z̄_f)`` per route ``f``; route ``-1`` (or a non-finite latent) uses ``K z``.

    ``source_centers`` ``z̄_f`` are fixed buffers, ``local`` (``K_f``, ``(F, d, d)``) and ``target`` (``d_f``,
    ``(F, d)``) are parameters; ``global_k`` is the frozen ``K``; a route whose ``active`` flag is off
    (too few training transitions) falls back to ``K`` too.
    """

    def __init__(self, global_k: Tensor, source_centers: Tensor, active: Tensor | None = None) -> None:
        super().__init__()
        k = global_k.detach().clone()
        centers = source_centers.detach().clone().to(device=k.device, dtype=k.dtype)
        self.register_buffer("global_k", k)
        self.register_buffer("source_centers", centers)
        on = torch.ones(centers.shape[0], dtype=torch.bool) if active is None else active.detach().bool()
        if on.shape != (centers.shape[0],):
            raise ValueError(f"active must have shape ({centers.shape[0]},); got {tuple(on.shape)}")
        self.register_buffer("active", on.to(k.device))
        self.local = nn.Parameter(k.unsqueeze(0).repeat(centers.shape[0], 1, 1))
        self.target = nn.Parameter(centers @ k.T)

    @property
    def count(self) -> int:
        return int(self.source_centers.shape[0])

    def forward(self, z: Tensor, routes: Tensor) -> Tensor:
        out = z @ self.global_k.T
        valid = (routes >= 0) & self.active[routes.clamp(min=0)]
        rows = valid.nonzero(as_tuple=True)[0]
        if rows.numel() == 0:
            return out
        # one matrix product per route in use (not a gathered (N, d, d) stack of maps): rows grouped by
        # route (a stable sort keeps each route's rows in order), one scatter for all of them
        taken = routes[rows]
        order = torch.argsort(taken, stable=True)
        rows, taken = rows[order], taken[order]
        used, counts = torch.unique_consecutive(taken, return_counts=True)
        pieces = [
            self.target[f] + (z[group] - self.source_centers[f]) @ self.local[f].T
            for f, group in zip(used.tolist(), torch.split(rows, counts.tolist()), strict=True)
        ]
        return out.index_put((rows,), torch.cat(pieces))


class RoutedStep:
    """``z ↦ T_{route(z)}(z)``: route before every latent step; use as ``rollout(..., step=...)``.

    ``counts`` accumulates how many latents took each route (index ``F`` = the fallback ``K``).
    """

    def __init__(self, router: Router, maps: LocalMaps) -> None:
        if router.count != maps.count:
            raise ValueError(f"router has {router.count} routes but maps has {maps.count}")
        self.router, self.maps = router, maps
        self.counts = np.zeros(maps.count + 1, dtype=np.int64)

    def __call__(self, z: Tensor) -> Tensor:
        routes = self.router(z)
        self.counts += np.bincount(
            np.where(routes.cpu().numpy() < 0, self.maps.count, routes.cpu().numpy()),
            minlength=self.maps.count + 1,
        )
        return self.maps(z, routes)

    @property
    def coverage(self) -> float:
        """Share of routed steps that used a local map (not the fallback); ``nan`` before any step."""
        total = int(self.counts.sum())
        return float("nan") if total == 0 else 1.0 - self.counts[-1] / total


def _route_centers(src: Tensor, routes: Tensor, count: int) -> Tensor:
    """The mean source latent of each route (0 for a route with no transition: ``T_f = K`` there)."""
    centers = torch.zeros(count, src.shape[1], dtype=src.dtype, device=src.device)
    for f in range(count):
        take = routes == f
        if bool(take.any()):
            centers[f] = src[take].mean(dim=0)
    return centers


def _lstsq_fill(maps: LocalMaps, src: Tensor, dst: Tensor, routes: Tensor, ridge: float) -> None:
    """Closed-form ``(K_f, d_f) = argmin Σ‖z' − d_f − K_f(z − z̄_f)‖² + ridge ‖K_f‖²`` (min-norm ``K_f``)."""
    with torch.no_grad():
        for f in range(maps.count):
            take = routes == f
            if not bool(take.any()) or not bool(maps.active[f]):
                continue
            x = (src[take] - maps.source_centers[f]).double()
            y = dst[take].double()
            x_mean, y_mean = x.mean(dim=0), y.mean(dim=0)
            xc = x - x_mean
            gram = xc.T @ xc + ridge * torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
            # an unpenalised intercept: regress the centred targets on the centred inputs, then
            # d_f = mean(z') − K_f mean(z − z̄_f) (= mean(z') when z̄_f is the routed mean, as here)
            # the pseudo-inverse gives the minimum-norm slope when coordinates never active in route f
            # leave the normal equations singular (0 slope on them)
            slope = (torch.linalg.pinv(gram, hermitian=True) @ (xc.T @ (y - y_mean))).T
            maps.target[f] = (y_mean - slope @ x_mean).to(maps.target.dtype)
            maps.local[f] = slope.to(maps.local.dtype)


def routed_loss(model: KAE, step: RoutedStep, windows: Tensor, weights: LossWeights) -> Tensor:
    """The frozen model's loss on a routed ``L``-step latent rollout (paper eq. training_objective; the
    reconstruction term is constant with ``E`` and ``D`` frozen and is left out)."""
    batch, length, dim = windows.shape[0], windows.shape[1] - 1, windows.shape[2]
    with torch.no_grad():
        z_enc = model.encode(windows)
    z = z_enc[:, 0]
    rolled = []
    for _ in range(length):
        z = step.maps(z, step.router(z.detach()))
        rolled.append(z)
    z_roll = torch.stack(rolled, dim=1)
    x_hat = model.decode(z_roll)
    count = batch * length
    pred = torch.linalg.vector_norm(x_hat - windows[:, 1:], dim=-1).sum() / (count * dim**0.5)
    lin = torch.linalg.vector_norm(z_roll - z_enc[:, 1:], dim=-1).sum() / count
    sp = z_roll.abs().sum() / count
    return weights.pred * pred + weights.lin * lin + weights.sp * sp


def freeze(model: KAE) -> KAE:
    """Stop gradients into every parameter of ``model`` (``E``, ``D``, ``K``) and put it in eval mode."""
    for p in _check_model(model).parameters():
        p.requires_grad_(False)
    return model.eval()


def fit_local_maps(
    model: KAE,
    trajectories: object,
    router: Router,
    *,
    method: str = "gradient",
    steps: int = 100,
    lr: float = 1e-3,
    batch: int = 64,
    window: int = WINDOW,
    seed: int = 0,
    ridge: float = RIDGE,
    min_transitions: int = 1,
    weights: LossWeights | None = None,
) -> RoutedStep:
    """The staged model: freeze ``model``, set ``z̄_f``, ``K_f ← K``, ``d_f ← K z̄_f``, then fit (see module).

    ``trajectories`` ``(N, T + 1, d_x)`` are training-distribution trajectories. ``method="gradient"``
    trains ``(K_f, d_f)`` for ``steps`` AdamW updates (:func:`neurips26.train.fit`, no weight decay) on
    ``batch`` random windows of ``window + 1`` states per update, drawn with ``seed``, at a constant rate
    ``lr`` with AdamW's default betas and no clipping (the authors' stage two); ``"lstsq"`` solves them in
    closed form on the one-step pairs. Routes with fewer than ``min_transitions`` source transitions fall
    back to ``K``. ``model`` itself is frozen in place. Returns the :class:`RoutedStep` for ``rollout``.
    """
    model = freeze(_check_model(model))
    method = check_choice("method", method, FIT_METHODS)
    if not isinstance(router, SupportRouter | CentroidRouter | StateRouter):
        raise TypeError(f"router must be one of the routers of this module; got {type(router).__name__}")
    x = _trajectories(model, trajectories)
    z = encode_trajectories(model, x)
    src, dst = z[:, :-1].reshape(-1, z.shape[-1]), z[:, 1:].reshape(-1, z.shape[-1])
    routes = router(src)
    min_transitions = check_int("min_transitions", min_transitions, minimum=1)
    per_route = torch.bincount(routes[routes >= 0], minlength=router.count)[: router.count]
    maps = LocalMaps(
        model.transition_matrix().detach(),
        _route_centers(src, routes, router.count),
        per_route >= min_transitions,
    )
    step = RoutedStep(router, maps)
    if method == "lstsq":
        _lstsq_fill(maps, src, dst, routes, check_float("ridge", ridge, minimum=0.0))
        return step
    steps = check_int("steps", steps, minimum=0)
    batch = check_int("batch", batch, minimum=1)
    window = check_int("window", window, minimum=1, maximum=x.shape[1] - 1)
    seed = check_seed("seed", seed)
    if weights is None:
        weights = default_weights(model)
    n, starts = x.shape[0], x.shape[1] - window

    def batches(s: int) -> Tensor:
        g = torch.Generator().manual_seed(sub_seed(seed, s))
        i = torch.randint(n, (batch,), generator=g)
        k = torch.randint(starts, (batch,), generator=g)
        offsets = k[:, None] + torch.arange(window + 1)[None]
        return x[i[:, None].to(x.device), offsets.to(x.device)]

    if steps:
        fit(
            maps,
            lambda _maps, windows: routed_loss(model, step, windows, weights),
            batches,
            steps=steps,
            seed=seed,
            lr=lr,
            min_lr_ratio=1.0,
            grad_clip=None,
            betas=(0.9, 0.999),
            progress=False,
            desc="local maps",
        )
    maps.eval()
    return step


# ----------------------------------------------------------------------------------------------------------
# Support-gated K and the wrong-support freeze (earlier draft)
# ----------------------------------------------------------------------------------------------------------


def family_centers(model: KAE, trajectories: object, router: SupportRouter) -> Tensor:
    """The mean training source latent ``z̄_c`` of each routing family (0 for a family never routed)."""
    src = _source_latents(model, trajectories)
    return _route_centers(src, router(src), router.count)


class GatedStep:
    """Support-gated ``K``: ``ẑ = z̄_c + K(m_c ⊙ (z − z̄_c))`` with ``c`` the routed family (``K z`` at -1)."""

    def __init__(self, model: KAE, router: SupportRouter, centers: Tensor) -> None:
        self.model, self.router = _check_model(model), router
        if not isinstance(router, SupportRouter):
            raise TypeError(f"router must be a SupportRouter; got {type(router).__name__}")
        if centers.shape != (router.count, model.latent):
            raise ValueError(
                f"centers must have shape ({router.count}, {model.latent}); got {tuple(centers.shape)}"
            )
        self.centers = centers
        self.masks = torch.as_tensor(router.codebook.representatives, device=centers.device).to(centers.dtype)

    def gate(self, z: Tensor, families: Tensor) -> Tensor:
        """The gated step for given per-row families (``-1`` → ``K z``)."""
        k_t = self.model.transition_matrix().T
        valid = (families >= 0).unsqueeze(-1)
        f = families.clamp(min=0)
        c, m = self.centers[f], self.masks[f]
        return torch.where(valid, c + (m * (z - c)) @ k_t, z @ k_t)

    def __call__(self, z: Tensor) -> Tensor:
        return self.gate(z, self.router(z))


class FrozenGateStep:
    """The support-gated step with each start's family fixed for the whole rollout (``families`` ``(N,)``)."""

    def __init__(self, gated: GatedStep, families: object) -> None:
        if not isinstance(gated, GatedStep):
            raise TypeError(f"gated must be a GatedStep; got {type(gated).__name__}")
        f = torch.as_tensor(np.asarray(families), device=gated.centers.device).long()
        if f.ndim != 1 or bool((f >= gated.router.count).any()) or bool((f < -1).any()):
            raise ValueError(f"families must be a 1-D array of ids in [-1, {gated.router.count - 1}]")
        self.gated, self.families = gated, f

    def __call__(self, z: Tensor) -> Tensor:
        if z.shape[0] != self.families.shape[0]:
            raise ValueError(f"z must have {self.families.shape[0]} rows (one per start); got {z.shape[0]}")
        return self.gated.gate(z, self.families)


def wrong_families(families: object, count: int, *, shift: int = 1) -> np.ndarray:
    """Another family per start: ``(f + shift) mod count`` (``-1`` stays ``-1``), ``shift ∈ [1, count)``."""
    count = check_int("count", count, minimum=2)
    shift = check_int("shift", shift, minimum=1, maximum=count - 1)
    f = np.asarray(families, dtype=np.int64)
    return np.where(f < 0, -1, (f + shift) % count)
