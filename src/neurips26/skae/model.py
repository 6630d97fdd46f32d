"""The Koopman autoencoder of the chapter: a sparse (LISTA, ℓ1-MLP, top-k) or dense encoder, a linear
decoder and a latent transition ``K`` that is dense, block-diagonal or soft-block.

``KAE(encoder, transition, latent, state_dim=..., blocks=..., seed=...)`` builds one of the paper's six rows
(Dense MLP, Sparse MLP, Sparse MLP-BD, LISTA, LISTA-BD, LISTA-SB) plus our top-k ablation. The forecast of
the paper's eq. (kae_forecast) is ``x̂_{k+h} = D(K^h E(x_k))``.

Conventions. Latent codes are row vectors of shape ``(..., latent)``; :meth:`KAE.step` applies ``K`` as the
paper writes it, ``z_{t+1} = K z_t`` (computed as ``z @ K.T``). The authors' code stores the transpose and
multiplies ``z @ kmat``; the two are the same family of maps, ``K`` here is their ``kmat`` transposed.

Where each choice comes from ("paper" = the latest draft ``docs/neurips_sparse_koopman_multibasin.tex`` and
its appendix ``docs/appendix/experimental_details.tex`` in the authors' repository ``aidanmrli/skae``; "code"
= ``skae/model.py`` there):

* LISTA, eq. (lista): ``c = f_θ(x)`` (MLP 64-64, biased ReLU, linear output), ``u⁰ = shrink(c, τ)``,
  ``u^{q+1} = shrink(S u^q + c, τ)`` for ``Q = 2`` loops (paper, appendix "Model rows"). The code computes
  ``u @ S`` on row vectors, i.e. ``Sᵀ u``; ``S₀`` is symmetric, so only the naming of the learned matrix
  differs and we keep the paper's ``S u``.
* ``τ = α / L̂`` with ``α = 0.15`` and ``L̂ = 1.05 ×`` a ten-step power-iteration estimate of ``‖W_dᵀW_d‖`` at
  initialisation, fixed afterwards (appendix; code ``LISTAKM.__init__``). ``S₀ = I − W_dᵀW_d / L̂``
  (code ``LISTA.__init__``).
* Dictionary init: a union of random orthonormal bases of ``R^{d_x}`` with unit-norm columns (code
  ``LISTAKM.__init__``), so ``W_dᵀW_d`` has norm ``m / d_x`` for ``m`` atoms.
* Sign-split: ``z = [relu(u), relu(−u)]`` maps a signed base code of ``latent / 2`` coordinates to
  ``latent`` (appendix: "a signed 128-dimensional base code to d_z = 256").
* Decoder of the LISTA rows: a linear dictionary whose atoms (columns) are renormalised to unit norm at
  every call, no bias (paper §method_model; code ``LISTAKM.decode`` with its default ``AFFINE_BIAS=False``).
  With the sign-split code the stored snapshots of the code do not show how the 2·m atoms are initialised;
  we start them at ``[W_d, −W_d]`` [ours], so that at initialisation ``D z = W_d u`` is exactly the
  sparse-coding decoder of the base code ``u``. The two halves are then learned independently.
* MLP rows: hidden widths 64, 64; Sparse MLP uses biased ReLU and a ReLU output gate (exact zeros, so a
  support exists), Dense MLP uses tanh and a linear output (appendix "Model rows": "Dense MLP removes the
  sparse output gate"). Their decoders are ordinary linear maps without atom normalisation (paper: "a
  limitation of cross-family attribution"); without bias, as the code's ``DecoderConfig.USE_BIAS=False``.
* ``K`` starts at the identity (code: ``nn.Parameter(torch.eye(...))``). Block-diagonal ``K`` has ``M``
  blocks, ``M`` = the known basin count (paper eq. block_transition; the one disclosed use of a count);
  soft-block keeps ``K`` dense and adds ``λ_off Σ_{g(i)≠g(j)} |K_ij|`` (paper eq. offblock_penalty, ℓ1),
  ``λ_off = 1e-4`` (appendix). Groups are contiguous and as equal as possible (sizes differ by at most 1)
  [ours: the paper does not say how ``d_z`` is cut when ``M`` does not divide it].
* Top-k [ours, an ablation]: the Sparse MLP's ReLU output, keeping only its ``k`` largest entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor, nn

from neurips26.validation import check_choice, check_float, check_int, check_seed

#: Encoder families: the paper's three rows' encoders plus our top-k ablation.
ENCODERS = ("lista", "mlp_sparse", "mlp_dense", "topk")
#: Transition families (paper §method_model).
TRANSITIONS = ("dense", "block", "softblock")
#: LISTA threshold scale α (paper appendix, controlled benchmark and Dysts).
ALPHA = 0.15
#: LISTA refinement loops Q on the controlled benchmark (Dysts uses 1).
LOOPS = 2
#: Hidden widths of the pre-code / MLP encoder (paper appendix "Model rows").
HIDDEN = (64, 64)
#: Safety factor on the power-iteration estimate of ‖W_dᵀW_d‖ (code ``LISTAKM.__init__``).
LIPSCHITZ_MARGIN = 1.05
#: Power-iteration steps for L̂ (paper appendix: "a ten-step power-iteration estimate").
POWER_STEPS = 10
#: Weight of the soft-block penalty (paper appendix).
LAMBDA_OFF = 1e-4
#: Atom norms are clamped below at this value before dividing (code ``LISTAKM._decode_full``).
ATOM_NORM_FLOOR = 1e-4


def shrink(a: Tensor, tau: float | Tensor) -> Tensor:
    """Soft-thresholding ``sign(a) · max(|a| − τ, 0)``, element-wise (paper eq. lista).

    Exactly zero where ``|a| ≤ τ``; elsewhere ``a`` moved towards 0 by ``τ``.
    """
    return torch.sign(a) * torch.clamp(a.abs() - tau, min=0.0)


def sign_split(u: Tensor) -> Tensor:
    """``[relu(u), relu(−u)]`` along the last axis: a signed code as a non-negative one of twice the size.

    At most one of ``z_i`` and ``z_{i+m}`` is non-zero, and ``z_i − z_{i+m} = u_i``.
    """
    return torch.cat([torch.relu(u), torch.relu(-u)], dim=-1)


def orthonormal_dictionary(state_dim: int, atoms: int, generator: torch.Generator) -> Tensor:
    """A ``(state_dim, atoms)`` union of random orthonormal bases of ``R^state_dim`` (the last one cut short).

    Columns have unit norm; when ``state_dim`` divides ``atoms``, ``‖W_dᵀW_d‖ = atoms / state_dim``.
    """
    state_dim = check_int("state_dim", state_dim, minimum=1)
    atoms = check_int("atoms", atoms, minimum=1)
    blocks = []
    done = 0
    while done < atoms:
        q, _ = torch.linalg.qr(torch.randn(state_dim, state_dim, generator=generator, dtype=torch.float64))
        take = min(state_dim, atoms - done)
        blocks.append(q[:, :take])
        done += take
    w = torch.cat(blocks, dim=1)
    return (w / w.norm(dim=0, keepdim=True)).to(torch.get_default_dtype())


def power_iteration_norm(gram: Tensor, steps: int, generator: torch.Generator) -> float:
    """Estimate of the largest eigenvalue of a symmetric PSD ``gram`` after ``steps`` power iterations.

    Starts from a seeded Gaussian vector and returns ``‖G v‖ / ‖v‖`` for the last unit iterate ``v``
    (a lower bound on ``‖G‖₂`` that converges to it), as the authors' ``LISTAKM.__init__`` does.
    """
    steps = check_int("steps", steps, minimum=1)
    v = torch.randn(gram.shape[0], 1, generator=generator, dtype=gram.dtype).to(gram.device)
    v = v / v.norm()
    for _ in range(steps):
        v = gram @ v
        v = v / v.norm()
    return float((gram @ v).norm() / v.norm())


def block_groups(latent: int, blocks: int) -> np.ndarray:
    """Group id of each latent coordinate for ``blocks`` contiguous groups of sizes differing by ≤ 1."""
    latent = check_int("latent", latent, minimum=1)
    blocks = check_int("blocks", blocks, minimum=1, maximum=latent)
    sizes = [latent // blocks + (1 if b < latent % blocks else 0) for b in range(blocks)]
    return np.repeat(np.arange(blocks), sizes)


def _mlp(sizes: Sequence[int], activation: type[nn.Module]) -> nn.Sequential:
    """Linear layers with biases and ``activation`` between them (none after the last)."""
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(activation())
    return nn.Sequential(*layers)


class LISTAEncoder(nn.Module):
    """LISTA on an MLP pre-code: ``u⁰ = shrink(c, τ)``, ``u^{q+1} = shrink(S u^q + c, τ)`` (eq. lista).

    ``S`` is learned (initialised at ``I − W_dᵀW_d / L̂``); ``τ = α / L̂`` is a fixed buffer. The output is
    the sign-split ``[relu u, relu −u]`` or, with ``split=False``, ``u`` itself.
    """

    def __init__(
        self,
        state_dim: int,
        dictionary: Tensor,
        *,
        hidden: Sequence[int],
        loops: int,
        alpha: float,
        split: bool,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        base = dictionary.shape[1]
        self.precode = _mlp([state_dim, *hidden, base], nn.ReLU)
        gram = dictionary.T @ dictionary
        lipschitz = LIPSCHITZ_MARGIN * power_iteration_norm(gram, POWER_STEPS, generator)
        self.lipschitz = lipschitz
        self.loops = loops
        self.split = split
        self.S = nn.Parameter(torch.eye(base) - gram / lipschitz)
        # not in the state dict: τ is a function of the seed and the configuration, recomputed on rebuild,
        # so a float16 checkpoint cannot round it
        self.register_buffer("tau", torch.tensor(alpha / lipschitz), persistent=False)

    def trace(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``(c, a, u)``: the pre-code, the last shrink's argument and its output ``u = shrink(a, τ)``."""
        c = self.precode(x)
        a = c
        u = shrink(a, self.tau)
        for _ in range(self.loops):
            a = u @ self.S.T + c
            u = shrink(a, self.tau)
        return c, a, u

    def forward(self, x: Tensor) -> Tensor:
        u = self.trace(x)[2]
        return sign_split(u) if self.split else u


class MLPEncoder(nn.Module):
    """An MLP encoder: ReLU hidden layers with a ReLU output gate (``sparse``), tanh and a linear output
    (dense), or the ReLU output with only its ``k`` largest entries kept (top-k)."""

    def __init__(self, state_dim: int, latent: int, *, hidden: Sequence[int], kind: str, k: int | None):
        super().__init__()
        activation = nn.Tanh if kind == "mlp_dense" else nn.ReLU
        self.net = _mlp([state_dim, *hidden, latent], activation)
        self.kind = kind
        self.k = k

    def forward(self, x: Tensor) -> Tensor:
        c = self.net(x)
        if self.kind == "mlp_dense":
            return c
        z = torch.relu(c)
        if self.kind == "topk":
            keep = torch.zeros_like(z, dtype=torch.bool)
            keep.scatter_(-1, torch.topk(z, self.k, dim=-1).indices, True)
            z = z * keep
        return z


class DictionaryDecoder(nn.Module):
    """``x = D z`` with the atoms (columns of ``D``) renormalised to unit norm at every call (or not)."""

    def __init__(self, atoms: Tensor, *, normalize: bool) -> None:
        super().__init__()
        self.dictionary = nn.Parameter(atoms.clone())  # (state_dim, latent)
        self.normalize = normalize

    def matrix(self) -> Tensor:
        """The effective decoder matrix ``(state_dim, latent)``."""
        if not self.normalize:
            return self.dictionary
        return self.dictionary / self.dictionary.norm(dim=0, keepdim=True).clamp(min=ATOM_NORM_FLOOR)

    def forward(self, z: Tensor) -> Tensor:
        return z @ self.matrix().T


class Transition(nn.Module):
    """The latent matrix ``K`` (starts at ``I``); block-diagonal rows multiply it by a fixed 0/1 mask."""

    def __init__(self, latent: int, groups: np.ndarray | None, *, hard: bool) -> None:
        super().__init__()
        self.K = nn.Parameter(torch.eye(latent))
        g = torch.zeros(latent, dtype=torch.long) if groups is None else torch.as_tensor(groups)
        self.register_buffer("groups", g, persistent=False)  # configuration, not learned state
        same = g[:, None] == g[None, :]
        self.register_buffer(
            "mask",
            same.to(torch.get_default_dtype()) if hard else torch.ones(latent, latent),
            persistent=False,
        )

    def matrix(self) -> Tensor:
        """The effective ``K`` (the block mask applied for ``transition="block"``)."""
        return self.K * self.mask

    def offblock(self) -> Tensor:
        """``Σ_{g(i)≠g(j)} |K_ij|`` (paper eq. offblock_penalty); 0 when there is one group."""
        off = self.groups[:, None] != self.groups[None, :]
        return (self.K.abs() * off).sum()


class WindowPass(NamedTuple):
    """What the training objective needs from a batch of windows ``x_{b,0..L}`` (:meth:`KAE.forward` with
    ``windows=True``): ``z_enc = E(x_ℓ)`` ``(B, L + 1, d_z)``, ``z_roll = K^ℓ z_enc_0`` for ``ℓ = 1..L``
    ``(B, L, d_z)``, ``x_hat = D(z_roll)`` and ``x_rec = D(z_enc_{1..L})`` ``(B, L, d_x)``, and ``off``, the
    off-block penalty of ``K`` (a scalar)."""

    z_enc: Tensor
    z_roll: Tensor
    x_hat: Tensor
    x_rec: Tensor
    off: Tensor


class KAE(nn.Module):
    """A Koopman autoencoder ``x̂_{k+h} = D(K^h E(x_k))`` (paper eq. kae_forecast); see the module docstring.

    Args:
        encoder: ``"lista"`` (the paper's sparse encoder), ``"mlp_sparse"`` (ReLU, ℓ1 in the loss),
            ``"mlp_dense"`` (tanh, the baseline) or ``"topk"`` (our ablation; needs ``k``).
        transition: ``"dense"``, ``"block"`` (block-diagonal, ``blocks`` blocks) or ``"softblock"``.
        latent: ``d_z``; even for the sign-split LISTA code.
        state_dim: ``d_x``.
        blocks: the number of groups ``M`` of ``"block"``/``"softblock"`` (the known basin count).
        k: kept coordinates of ``"topk"``, in ``[1, latent]``.
        loops, alpha, split: LISTA's ``Q``, ``α`` and sign-split output.
        normalize_decoder: unit-norm dictionary atoms; default ``True`` for LISTA, ``False`` otherwise.
        hidden: hidden widths of the pre-code / MLP encoder.
        seed: seeds every initial weight (the caller's global RNG state is left as it was).
    """

    def __init__(
        self,
        encoder: str = "lista",
        transition: str = "dense",
        latent: int = 64,
        *,
        state_dim: int = 2,
        blocks: int | None = None,
        k: int | None = None,
        loops: int = LOOPS,
        alpha: float = ALPHA,
        split: bool = True,
        normalize_decoder: bool | None = None,
        hidden: Sequence[int] = HIDDEN,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.encoder_kind = check_choice("encoder", encoder, ENCODERS)
        self.transition_kind = check_choice("transition", transition, TRANSITIONS)
        self.latent = check_int("latent", latent, minimum=1)
        self.state_dim = check_int("state_dim", state_dim, minimum=1)
        seed = check_seed("seed", seed)
        hidden = tuple(check_int(f"hidden[{i}]", h, minimum=1) for i, h in enumerate(hidden))
        if encoder == "lista":
            loops = check_int("loops", loops, minimum=0)
            alpha = check_float("alpha", alpha, minimum=0.0)
            if not isinstance(split, bool):
                raise TypeError(f"split must be a bool; got {type(split).__name__}")
            if split and latent % 2:
                raise ValueError(f"latent must be even for the sign-split LISTA code; got {latent}")
        if encoder == "topk":
            if k is None:
                raise ValueError("k must be given for encoder='topk' (an int in [1, latent])")
            k = check_int("k", k, minimum=1, maximum=latent)
        elif k is not None:
            raise ValueError(f"k is only used by encoder='topk'; got k={k} with encoder={encoder!r}")
        if transition == "dense":
            if blocks is not None:
                raise ValueError(f"blocks is only used by transition='block'/'softblock'; got {blocks}")
            groups = None
        else:
            if blocks is None:
                raise ValueError(f"blocks must be given for transition={transition!r} (the basin count)")
            groups = block_groups(latent, check_int("blocks", blocks, minimum=1, maximum=latent))
        if normalize_decoder is None:
            normalize_decoder = encoder == "lista"
        self.blocks = blocks
        self.k = k
        self.seed = seed
        self.lambda_off = LAMBDA_OFF if transition == "softblock" else 0.0

        generator = torch.Generator().manual_seed(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if encoder == "lista":
                base = latent // 2 if split else latent
                w_d = orthonormal_dictionary(state_dim, base, generator)
                self.encoder = LISTAEncoder(
                    state_dim, w_d, hidden=hidden, loops=loops, alpha=alpha, split=split, generator=generator
                )
                atoms = torch.cat([w_d, -w_d], dim=1) if split else w_d
            else:
                self.encoder = MLPEncoder(state_dim, latent, hidden=hidden, kind=encoder, k=k)
                bound = 1.0 / latent**0.5  # nn.Linear's default init of a (state_dim, latent) weight
                atoms = (torch.rand(state_dim, latent, generator=generator) * 2 - 1) * bound
            self.decoder = DictionaryDecoder(atoms, normalize=normalize_decoder)
            self.transition = Transition(latent, groups, hard=transition == "block")

    @property
    def device(self) -> torch.device:
        """The device the parameters live on."""
        return self.transition.K.device

    @property
    def tau(self) -> float | None:
        """LISTA's fixed shrinkage threshold ``α / L̂`` (``None`` for other encoders)."""
        return float(self.encoder.tau) if isinstance(self.encoder, LISTAEncoder) else None

    @property
    def sparse(self) -> bool:
        """Whether the row is one of the paper's sparse rows (everything but Dense MLP)."""
        return self.encoder_kind != "mlp_dense"

    def _check_states(self, x: Tensor) -> Tensor:
        if not isinstance(x, Tensor):
            raise TypeError(f"x must be a torch.Tensor; got {type(x).__name__}")
        if x.ndim < 1 or x.shape[-1] != self.state_dim:
            raise ValueError(
                f"x must have a last dimension of state_dim={self.state_dim}; got {tuple(x.shape)}"
            )
        return x.to(device=self.device, dtype=self.transition.K.dtype)

    def encode(self, x: Tensor) -> Tensor:
        """``z = E(x)``, shape ``(..., latent)``."""
        return self.encoder(self._check_states(x))

    def decode(self, z: Tensor) -> Tensor:
        """``x = D z``, shape ``(..., state_dim)``."""
        return self.decoder(z)

    def transition_matrix(self) -> Tensor:
        """The effective ``K`` (``z_{t+1} = K z_t``)."""
        return self.transition.matrix()

    def step(self, z: Tensor) -> Tensor:
        """One latent step ``K z`` on row vectors."""
        return z @ self.transition_matrix().T

    def offblock_penalty(self) -> Tensor:
        """``Σ_{g(i)≠g(j)} |K_ij|`` over the architectural groups (0 for a dense ``K``)."""
        return self.transition.offblock()

    def window_pass(self, x: Tensor) -> WindowPass:
        """The encodings, ``K``-rollouts from ``z_0`` and decodings of windows ``x`` ``(B, L + 1, d_x)``."""
        z_enc = self.encode(x)  # (B, L+1, d_z)
        k_t = self.transition_matrix().T
        rolled = []
        z = z_enc[:, 0]
        for _ in range(x.shape[1] - 1):
            z = z @ k_t
            rolled.append(z)
        z_roll = torch.stack(rolled, dim=1)  # (B, L, d_z): K^ℓ z_0 for ℓ = 1..L
        x_hat = self.decode(z_roll)
        x_rec = self.decode(z_enc[:, 1:])
        return WindowPass(z_enc, z_roll, x_hat, x_rec, self.offblock_penalty())

    def forward(self, x: Tensor, *, windows: bool = False) -> Tensor | WindowPass:
        """The one-step forecast ``D(K E(x))``; with ``windows=True`` the :meth:`window_pass` of the
        windows ``x``, so the training objective calls the module (data-parallel training averages the
        gradients in the forward of its wrapper)."""
        if windows:
            return self.window_pass(x)
        return self.decode(self.step(self.encode(x)))
