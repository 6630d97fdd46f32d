"""Two KAE baselines built on :class:`~neurips26.skae.model.KAE` and its loss: the consistent KAE and the
oracle mixture of KAEs (both ours, not rows of the paper; see the chapter's "What we changed and why").

Consistent KAE (Azencot, Erichson, Lin and Mahoney, ICML 2020, "Forecasting sequential data using
consistent Koopman autoencoders"): besides the forward matrix ``K`` (``z_{t+1} = K z_t``) it learns a
backward matrix ``C`` (``z_{t−1} = C z_t``) and asks the two to be mutually inverse. Their objective adds
to the forward KAE loss a backward prediction term and the consistency penalty

    E_con(C, K) = Σ_{k=1}^{κ} ( ‖C_{k*} K_{*k} − I_k‖²_F + ‖K_{k*} C_{*k} − I_k‖²_F ) / (2k),

where ``C_{k*}`` is the first ``k`` rows of ``C`` and ``K_{*k}`` the first ``k`` columns of ``K`` (their
consistency loss, with ``κ = d_z``). ``C_{k*} K_{*k}`` is the leading ``k × k`` block of ``CK``, so the
penalty is computed from ``CK − I`` and ``KC − I`` once, with running block sums. It is 0 when
``C = K⁻¹``.

Here the forward part is the chapter's own loss (:func:`~neurips26.skae.losses.kae_loss`: the paper's
norms and weights); the backward prediction term mirrors its prediction term, rolled back from the
window's last state, ``Σ_ℓ ‖D(C^ℓ E(x_L)) − x_{L−ℓ}‖ / (B L √d_x)``. Weights 0.1 (backward) and 0.01
(consistency) are the defaults of Azencot et al.'s public code (``erichson/koopmanAE``: ``nu``, ``eta``).
Both matrices start at the identity (mutually inverse; their code starts ``C`` at the pseudo-inverse of
``K``) and train at 0.1× the rate, undecayed, like the paper's ``K``. The encoder defaults to the tanh MLP,
as theirs; their decoder is a tanh MLP too, ours keeps the chapter's linear decoder [ours], so this row is
the Dense MLP row plus the backward map and the consistency terms. Forecasts use ``K`` only, through the
chapter's :func:`~neurips26.skae.rollout.rollout`, so every cadence rule applies unchanged.

Oracle mixture of KAEs: one KAE per true basin, each trained on the windows whose first state carries its
label, routed by the true labelling *function*, the one the paper evaluates with: native labels on
Local-linear gates, nearest-centre proxy labels (:func:`~neurips26.skae.systems.nearest_center` on
:func:`~neurips26.skae.systems.proxy_centers`) on the other systems (:func:`basin_labeler`). At test time
the label of the true start ``x_0`` picks the expert; at every re-encoding the label of the model's own
decoded prediction picks the expert that re-encodes it (``reroute=False`` keeps the start's expert). No true
future state is read, but the label function itself is privileged information (an upper-bound row).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from neurips26.seeding import sub_seed
from neurips26.skae.baselines.base import check_period, check_x0
from neurips26.skae.losses import LossWeights, check_windows, default_weights, kae_loss
from neurips26.skae.model import KAE
from neurips26.skae.rollout import rollout
from neurips26.skae.systems import LocalLinearGates, System, nearest_center
from neurips26.validation import check_float, check_int, check_seed

#: Backward-prediction and consistency weights (Azencot et al.'s code: ``nu``, ``eta``).
BACKWARD_WEIGHT = 0.1
CONSISTENCY_WEIGHT = 0.01
#: Training defaults shared with the chapter's KAE rows: steps, batch, learning rate.
STEPS = 1500
BATCH = 256
LR = 1e-3

Windows = Tensor | np.ndarray | Callable[[int], Tensor]


def consistency_penalty(forward: Tensor, backward: Tensor, kappa: int | None = None) -> Tensor:
    """``E_con(C, K)`` of Azencot et al. (module docstring) for ``K = forward``, ``C = backward`` (square,
    one shape), summed over ``k = 1..kappa`` (default: all)."""
    if forward.ndim != 2 or forward.shape[0] != forward.shape[1] or backward.shape != forward.shape:
        raise ValueError(
            f"forward and backward must be square matrices of one shape; got {tuple(forward.shape)}, "
            f"{tuple(backward.shape)}"
        )
    n = forward.shape[0]
    kappa = n if kappa is None else check_int("kappa", kappa, minimum=1, maximum=n)
    eye = torch.eye(n, dtype=forward.dtype, device=forward.device)
    total = forward.new_zeros(())
    for product in (backward @ forward - eye, forward @ backward - eye):
        blocks = (product**2).cumsum(0).cumsum(1).diagonal()[:kappa]  # ‖leading k×k block‖²_F, k = 1..n
        k = torch.arange(1, kappa + 1, dtype=forward.dtype, device=forward.device)
        total = total + (blocks / (2 * k)).sum()
    return total


class Backward(nn.Module):
    """The backward latent matrix ``C`` (``z_{t−1} = C z_t``), starting at the identity."""

    def __init__(self, latent: int) -> None:
        super().__init__()
        self.C = nn.Parameter(torch.eye(latent))


class ConsistentKAE(nn.Module):
    """A KAE with a backward matrix tied to ``K`` by the consistency penalty (see the module docstring).

    ``kae`` is an ordinary :class:`~neurips26.skae.model.KAE` (dense ``K``); its keyword arguments pass
    through. ``predict`` forecasts with ``kae`` alone.
    """

    name = "consistent KAE"

    def __init__(
        self, encoder: str = "mlp_dense", latent: int = 64, *, state_dim: int = 2, seed: int = 0, **kw
    ):
        super().__init__()
        self.kae = KAE(encoder, "dense", latent, state_dim=state_dim, seed=seed, **kw)
        self.backward_map = Backward(latent)
        self.state_dim = state_dim

    @property
    def device(self) -> torch.device:
        return self.kae.device

    def backward_matrix(self) -> Tensor:
        return self.backward_map.C

    def consistency(self) -> Tensor:
        """``E_con(C, K)`` for the current matrices."""
        return consistency_penalty(self.kae.transition_matrix(), self.backward_matrix())

    def fit(self, windows: Windows, **options) -> ConsistentKAE:
        """Train on ``windows`` (see :func:`train_windows`) with :func:`consistent_loss`; the training
        :class:`~neurips26.train.fit.History` is kept as ``history``."""
        self.history = train_windows(self, consistent_loss, windows, **options)
        return self

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray:
        """The forward forecast ``D(K^t E(x_0))`` with optional re-encoding (``rollout``)."""
        x = torch.as_tensor(check_x0(x0, self.state_dim), dtype=self.kae.transition.K.dtype)
        return rollout(self.kae, x.to(self.device), horizon, period=check_period(period))


@dataclass(frozen=True)
class ConsistentWeights:
    """The forward KAE weights (``None``: the row's defaults) plus backward and consistency weights."""

    forward: LossWeights | None = None
    backward: float = BACKWARD_WEIGHT
    consistency: float = CONSISTENCY_WEIGHT

    def __post_init__(self) -> None:
        if self.forward is not None and not isinstance(self.forward, LossWeights):
            raise TypeError(f"weights.forward must be a LossWeights; got {type(self.forward).__name__}")
        check_float("weights.backward", self.backward, minimum=0.0)
        check_float("weights.consistency", self.consistency, minimum=0.0)


def backward_prediction(model: ConsistentKAE, windows: Tensor) -> Tensor:
    """``Σ_ℓ ‖D(C^ℓ E(x_L)) − x_{L−ℓ}‖₂ / (B L √d_x)`` over ``ℓ = 1..L`` (the forward term run backwards)."""
    x = check_windows(model.kae, windows)
    batch, length, dim = x.shape[0], x.shape[1] - 1, x.shape[2]
    c_t = model.backward_matrix().T
    z = model.kae.encode(x[:, -1])
    rolled = []
    for _ in range(length):
        z = z @ c_t
        rolled.append(z)
    past = x.flip(1)[:, 1:]  # x_{L−1}, ..., x_0
    x_hat = model.kae.decode(torch.stack(rolled, dim=1))
    return torch.linalg.vector_norm(x_hat - past, dim=-1).sum() / (batch * length * math.sqrt(dim))


def consistent_loss(
    model: ConsistentKAE, windows: Tensor, weights: ConsistentWeights | None = None
) -> Tensor:
    """Forward KAE loss + λ_bwd · backward prediction + λ_con · E_con; ``(model, batch)`` as ``fit`` wants."""
    if not isinstance(model, ConsistentKAE):
        raise TypeError(f"model must be a ConsistentKAE; got {type(model).__name__}")
    weights = ConsistentWeights() if weights is None else weights
    if not isinstance(weights, ConsistentWeights):
        raise TypeError(f"weights must be a ConsistentWeights; got {type(weights).__name__}")
    forward = weights.forward if weights.forward is not None else default_weights(model.kae)
    total = kae_loss(model.kae, windows, forward)
    if weights.backward:
        total = total + weights.backward * backward_prediction(model, windows)
    if weights.consistency:
        total = total + weights.consistency * model.consistency()
    return total


def _batches(windows: Windows, batch: int, seed: int) -> Callable[[int], Tensor]:
    """Step ``s`` → a batch: a fresh draw from a callable, or ``batch`` windows of a fixed set chosen by
    a generator seeded from ``(seed, s)`` (with replacement)."""
    if callable(windows):
        return windows
    if isinstance(windows, np.ndarray):
        windows = torch.from_numpy(np.asarray(windows, dtype=np.float64))
    if not isinstance(windows, Tensor):
        raise TypeError(
            f"windows must be a tensor, an array or a callable step -> tensor; got {type(windows).__name__}"
        )
    if windows.ndim != 3 or windows.shape[0] < 1 or windows.shape[1] < 2:
        raise ValueError(f"windows must have shape (B >= 1, L + 1 >= 2, d); got {tuple(windows.shape)}")
    if not torch.isfinite(windows).all():
        raise ValueError("windows must contain only finite values (no NaN or inf)")
    data = windows.to(torch.get_default_dtype())

    def draw(step: int) -> Tensor:
        generator = torch.Generator().manual_seed(sub_seed(seed, step))
        return data[torch.randint(len(data), (batch,), generator=generator)]

    return draw


def train_windows(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Tensor], Tensor],
    windows: Windows,
    *,
    steps: int = STEPS,
    seed: int = 0,
    batch: int = BATCH,
    lr: float = LR,
    **fit_options,
):
    """Train with :func:`neurips26.train.fit`, the latent matrices at 0.1× the rate and undecayed (the
    paper's ``K`` rule; here every parameter whose name ends a ``transition.`` or ``backward_map.``
    prefix). Returns the :class:`~neurips26.train.fit.History`."""
    from neurips26.train import fit

    seed = check_seed("seed", seed)
    batch = check_int("batch", batch, minimum=1)
    prefixes = [name for name, _ in model.named_modules() if name.endswith(("transition", "backward_map"))]
    options = {"lr_scale": {p: 0.1 for p in prefixes}, "no_decay": tuple(prefixes), "progress": False}
    options.update(fit_options)
    return fit(model, loss_fn, _batches(windows, batch, seed), steps=steps, seed=seed, lr=lr, **options)


def basin_labeler(system: System, centers: Tensor | np.ndarray | None = None) -> Callable[[Tensor], Tensor]:
    """The paper's evaluation labels as a function of the state: native on Local-linear gates, otherwise
    the nearest of ``centers`` (from :func:`~neurips26.skae.systems.proxy_centers`)."""
    if isinstance(system, LocalLinearGates):
        return system.native_labels
    if not isinstance(system, System):
        raise TypeError(f"system must be a System; got {type(system).__name__}")
    if centers is None:
        raise ValueError(f"centers must be given for {system.name}, which has no native labels")
    fixed = centers if isinstance(centers, Tensor) else torch.from_numpy(np.asarray(centers, np.float64))
    return lambda x: nearest_center(x, fixed)


class OracleMixture(nn.Module):
    """One KAE per true basin, routed by the true label function (see the module docstring).

    ``labeler`` maps states ``(N, d)`` to labels in ``[0, count)`` (:func:`basin_labeler`); each expert is
    a dense-``K`` KAE with ``encoder`` and ``latent`` (further KAE options in ``kae_options``), seeded by
    ``sub_seed(seed, b)``.
    """

    name = "oracle mixture of KAEs"

    def __init__(
        self,
        labeler: Callable[[Tensor], Tensor],
        count: int,
        *,
        encoder: str = "lista",
        latent: int = 64,
        state_dim: int = 2,
        seed: int = 0,
        reroute: bool = True,
        kae_options: dict | None = None,
    ) -> None:
        super().__init__()
        if not callable(labeler):
            raise TypeError(f"labeler must be callable (states -> labels); got {type(labeler).__name__}")
        self.labeler = labeler
        self.count = check_int("count", count, minimum=1)
        self.seed = check_seed("seed", seed)
        self.latent = check_int("latent", latent, minimum=1)
        self.state_dim = check_int("state_dim", state_dim, minimum=1)
        self.reroute = bool(reroute)
        self.experts = nn.ModuleList(
            KAE(
                encoder,
                "dense",
                latent,
                state_dim=state_dim,
                seed=sub_seed(self.seed, b),
                **(kae_options or {}),
            )
            for b in range(self.count)
        )

    @property
    def device(self) -> torch.device:
        return self.experts[0].device

    def labels(self, x: Tensor) -> Tensor:
        """The true labels of states ``(N, d)``, validated to lie in ``[0, count)``; on ``x``'s device."""
        lab = torch.as_tensor(self.labeler(x)).to(device=x.device, dtype=torch.long)
        if lab.shape != x.shape[:1] or (lab.numel() and (lab.min() < 0 or lab.max() >= self.count)):
            raise ValueError(
                f"labeler must return one label in [0, {self.count}) per state; got {tuple(lab.shape)}"
            )
        return lab

    def fit(self, windows: Tensor | np.ndarray, **options) -> OracleMixture:
        """Train expert ``b`` on the windows whose first state has label ``b`` (a fixed set of windows;
        ``options`` go to :func:`train_windows`, each expert seeded by ``sub_seed(seed, b)``)."""
        w = (
            windows
            if isinstance(windows, Tensor)
            else torch.from_numpy(np.asarray(windows, dtype=np.float64))
        )
        if w.ndim != 3 or w.shape[1] < 2 or w.shape[2] != self.state_dim:
            raise ValueError(
                f"windows must have shape (B, L + 1 >= 2, state_dim={self.state_dim}); got {tuple(w.shape)}"
            )
        if not torch.isfinite(w).all():
            raise ValueError("windows must contain only finite values (no NaN or inf)")
        lab = self.labels(w[:, 0])
        seed = check_seed("seed", options.pop("seed", self.seed))
        subsets = [w[lab == b] for b in range(self.count)]
        for b, mine in enumerate(subsets):
            if len(mine) == 0:
                raise ValueError(f"windows must include at least one window starting in basin {b}")
        #: one training History per expert
        self.histories = [
            train_windows(expert, kae_loss, mine, seed=sub_seed(seed, b), **options)
            for b, (expert, mine) in enumerate(zip(self.experts, subsets, strict=True))
        ]
        return self

    def _apply(self, fn_name: str, route: Tensor, value: Tensor, out_dim: int) -> Tensor:
        out = value.new_full((len(value), out_dim), float("nan"))
        for b, expert in enumerate(self.experts):
            rows = route == b
            if rows.any():
                out[rows] = getattr(expert, fn_name)(value[rows])
        return out

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray:
        """``x̂_1..x̂_H`` ``(N, H, d)``: expert by the start's label, re-routed at each re-encoding."""
        horizon = check_int("horizon", horizon, minimum=1)
        period = check_period(period)
        dtype = self.experts[0].transition.K.dtype
        x = torch.as_tensor(check_x0(x0, self.state_dim), dtype=dtype).to(self.device)
        states = []
        with torch.no_grad():
            route = self.labels(x)
            z = self._apply("encode", route, x, self.latent)
            for t in range(1, horizon + 1):
                z = self._apply("step", route, z, self.latent)
                x_hat = self._apply("decode", route, z, self.state_dim)
                states.append(x_hat)
                if period is not None and t % period == 0 and t < horizon:
                    finite = torch.isfinite(x_hat).all(dim=1)
                    if self.reroute and finite.any():
                        route = route.clone()
                        route[finite] = self.labels(x_hat[finite])
                    z = self._apply("encode", route, torch.nan_to_num(x_hat), self.latent)
                    z[~finite] = float("nan")
        return torch.stack(states, dim=1).cpu().double().numpy()
