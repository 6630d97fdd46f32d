"""Two-layer recall models: a sliding-window attention block, then one global block whose mixer varies.

    tokens → embedding → SWA block (window 8: query t sees t-7…t) → global block → LayerNorm → output layer
    global block:  x ← x + Mixer(LN(x));  x ← x + MLP(LN(x))

The global mixer is Gated DeltaNet, SDM, Mamba-2 or causal softmax attention with RoPE (the ceiling) — the
released hybrids' layout (SWA local layers, the varied layer in the global slot) at the smallest depth.

Matching (claim C2). The iso-FLOP pair is GDN with ``H=2, d_k=8, d_v=32`` and SDM with ``H=2, N=256,
W=R=8, d=32``: both spend ``4·8·32`` recurrence multiply-adds per head and token. SDM's score projections
are wider (``H·2n = 64`` per side against GDN's ``H·d_k = 16``), so every model's global MLP is widened or
narrowed to give it the non-memory parameter count of the reference SDM (:func:`matched_mlp_width`); the
learned initial state (``M₀``, ``S₀``) is state, not counted (the released code's "active parameters").
Counters: :func:`param_table`, :func:`flops_per_token` (multiply-adds per token and part) and
:func:`state_floats`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from neurips26.nn import MLP, DecoderBlock, DecoderConfig, MultiHeadAttention, RotaryEmbedding, causal_mask
from neurips26.sdm.data import VOCAB_SIZE
from neurips26.sdm.gdn import GatedDeltaNet
from neurips26.sdm.mamba2 import Mamba2
from neurips26.sdm.sdm import SparseDeltaMemory
from neurips26.validation import check_choice, check_int, check_seed

MIXERS = ("gdn", "sdm", "mamba2", "attention")
WIDTH = 64
CONTEXT = 64
SWA_HEADS = 4
BASE_MLP = 4 * WIDTH
MEMORY_NAMES = ("global_block.mixer.memory", "global_block.mixer.initial_state")
"""Parameters that are initial state, not counted as (non-memory) parameters."""
MEAN_ATTENDED = 30
"""Keys a global-attention query sees on average in the longest evaluation sequences (T = 59), for the
context-dependent part of attention's cost."""


def window_mask(length: int, window: int, *, device=None) -> Tensor:
    """Boolean ``(T, T)`` mask: query ``t`` sees keys ``t-window+1 … t`` (itself and ``window-1`` before)."""
    length = check_int("length", length, minimum=1)
    window = check_int("window", window, minimum=1)
    causal = causal_mask(length, device=device)
    return causal & ~torch.ones_like(causal).tril(-window)


@dataclass(frozen=True)
class MixerSpec:
    """The global mixer: ``kind`` (one of :data:`MIXERS`) and its sizes. GDN: ``heads, key_dim,
    value_dim, learned_state``; SDM: ``heads, slots, writes, reads, memory, batchnorm``; Mamba-2: ``heads,
    key_dim`` (state width); attention: ``heads``. ``solver`` picks the training computation."""

    kind: str
    heads: int = 2
    key_dim: int = 8
    value_dim: int = 32
    learned_state: bool = False
    slots: int = 256
    writes: int = 8
    reads: int = 8
    memory: str = "learned"
    batchnorm: bool = True

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, MIXERS)

    def build(self, width: int = WIDTH, solver: str | None = None, *, context: int = CONTEXT) -> nn.Module:
        """The mixer at ``width``; ``context`` sizes attention's rotary table (no other mixer has one)."""
        if self.kind == "gdn":
            return GatedDeltaNet(
                width,
                self.heads,
                self.key_dim,
                self.value_dim,
                learned_state=self.learned_state,
                solver=solver or "parallel",
            )
        if self.kind == "sdm":
            return SparseDeltaMemory(
                width,
                self.heads,
                self.slots,
                self.writes,
                self.reads,
                memory=self.memory,
                batchnorm=self.batchnorm,
                solver=solver or "parallel",
            )
        if self.kind == "mamba2":
            return Mamba2(width, self.heads, self.key_dim, solver=solver or "parallel")
        return MultiHeadAttention(width, self.heads, rotary=RotaryEmbedding(width // self.heads, context))


REFERENCE = MixerSpec("sdm", batchnorm=True)
"""The SDM every model's non-memory parameters are matched to (``N=256``, ``W=R=8``, learned ``M₀``, score
BatchNorm)."""


class GlobalBlock(nn.Module):
    """``x ← x + Mixer(LN(x))``; ``x ← x + MLP(LN(x))``."""

    def __init__(self, spec: MixerSpec, width: int, mlp_width: int, *, context: int = CONTEXT):
        super().__init__()
        self.spec = spec
        self.mixer_norm = nn.LayerNorm(width)
        self.mixer = spec.build(width, context=context)
        self.mlp_norm = nn.LayerNorm(width)
        self.mlp = MLP(width, mlp_width, 0.0)

    def forward(self, x: Tensor, *, zero_state: bool = False) -> Tensor:
        h = self.mixer_norm(x)
        if self.spec.kind == "attention":
            mixed, _ = self.mixer(h, mask=causal_mask(x.shape[1], device=x.device))
        elif self.spec.kind == "sdm":
            mixed = self.mixer(h, zero_memory=zero_state)
        elif self.spec.kind == "gdn":
            mixed = self.mixer(h, zero_state=zero_state)
        else:
            mixed = self.mixer(h)
        x = x + mixed
        return x + self.mlp(self.mlp_norm(x))


class RecallModel(nn.Module):
    """Embedding → SWA block → :class:`GlobalBlock` → LayerNorm → output layer; ``window``: the SWA window.

    ``vocab`` token ids (:func:`~neurips26.sdm.data.vocab_size` of the task's in-context vocabulary) and
    sequences of at most ``context`` tokens; the defaults are the chapter's task, a larger task (the
    ``paper`` scale) changes only the embedding, the output layer and the rotary tables.
    Every weight has torch's default initialisation, drawn from ``seed``. The output layer is not tied to
    the embedding: at width 64 a tied head kept the recall circuit from forming within the training budget
    (measured; an untied copy of the same attention-only model learns MQAR in 200 updates).
    """

    def __init__(
        self,
        spec: MixerSpec,
        *,
        mlp_width: int | None = None,
        window: int = 8,
        seed: int = 0,
        vocab: int = VOCAB_SIZE,
        context: int = CONTEXT,
    ):
        super().__init__()
        if not isinstance(spec, MixerSpec):
            raise TypeError(f"spec must be a MixerSpec; got {type(spec).__name__}")
        self.spec = spec
        self.window = check_int("window", window, minimum=1)
        self.vocab = check_int("vocab", vocab, minimum=1)
        self.context = check_int("context", context, minimum=1)
        mlp_width = (
            matched_mlp_width(spec) if mlp_width is None else check_int("mlp_width", mlp_width, minimum=1)
        )
        with _seeded(check_seed("seed", seed)):
            config = DecoderConfig(vocab, WIDTH, 1, SWA_HEADS, context, mlp_ratio=4)
            self.embedding = nn.Embedding(vocab, WIDTH)
            self.swa = DecoderBlock(config, RotaryEmbedding(config.head_dim, context))
            self.global_block = GlobalBlock(spec, WIDTH, mlp_width, context=context)
            self.final_norm = nn.LayerNorm(WIDTH)
            self.head = nn.Linear(WIDTH, vocab, bias=False)

    def forward(self, tokens: Tensor, *, zero_state: bool = False) -> Tensor:
        """Logits ``(B, T, V)``; ``zero_state`` runs with a zero initial table/state (learned ``M₀``/``S₀``
        ignored: the ablation at evaluation)."""
        if not isinstance(tokens, Tensor) or tokens.ndim != 2:
            raise ValueError(f"tokens must be a (B, T) tensor; got {getattr(tokens, 'shape', type(tokens))}")
        T = tokens.shape[1]
        if T > self.context:
            raise ValueError(f"tokens must have at most {self.context} positions; got {T}")
        x = self.embedding(tokens)
        positions = torch.arange(T, device=tokens.device)
        mask = window_mask(T, self.window, device=tokens.device)
        x, _ = self.swa(x, positions=positions, mask=mask, cache=None, layer=0, return_weights=False)
        x = self.global_block(x, zero_state=zero_state)
        return self.head(self.final_norm(x))


@contextlib.contextmanager
def _seeded(seed: int) -> Iterator[None]:
    """Build under torch's global generator seeded with ``seed``, leaving the caller's stream untouched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def non_memory_parameters(model: nn.Module) -> int:
    """Trainable numbers, the initial state (:data:`MEMORY_NAMES`) excluded."""
    return sum(p.numel() for name, p in model.named_parameters() if name not in MEMORY_NAMES)


def matched_mlp_width(spec: MixerSpec) -> int:
    """The global MLP width that gives a model with ``spec`` the non-memory parameters of :data:`REFERENCE`
    at width :data:`BASE_MLP` (nearest integer; each hidden unit is ``2·D + 1`` parameters)."""
    reference = non_memory_parameters(RecallModel(REFERENCE, mlp_width=BASE_MLP))
    own = non_memory_parameters(RecallModel(spec, mlp_width=BASE_MLP))
    return BASE_MLP + round((reference - own) / (2 * WIDTH + 1))


def linear_macs(module: nn.Module) -> int:
    """Multiply-adds per token of the linear layers and 1-D convolutions of ``module``."""
    macs = 0
    for m in module.modules():
        if isinstance(m, nn.Linear):
            macs += m.in_features * m.out_features
        elif isinstance(m, nn.Conv1d):
            macs += m.out_channels * m.kernel_size[0] * m.in_channels // m.groups
    return macs


def flops_per_token(model: RecallModel, *, window_keys: int | None = None) -> dict[str, int]:
    """Multiply-adds per token, by part: ``swa`` (projections, MLP and ``2·w·D`` for the window),
    ``mixer_projections``, ``recurrence`` (the state update and read; attention: ``2·t̄·D`` with
    ``t̄ =`` :data:`MEAN_ATTENDED`), ``addressing`` (SDM's product-key top-k, comparisons), ``mlp`` (global
    MLP), ``head`` (output layer), ``total``. Normalisations and activations are not counted."""
    w = model.window if window_keys is None else window_keys
    mixer = model.global_block.mixer
    parts = {
        "swa": linear_macs(model.swa) + 2 * w * WIDTH,
        "mixer_projections": linear_macs(mixer),
        "recurrence": (
            2 * MEAN_ATTENDED * WIDTH if model.spec.kind == "attention" else int(mixer.recurrence_macs())
        ),
        "addressing": int(mixer.addressing_ops()) if model.spec.kind == "sdm" else 0,
        "mlp": linear_macs(model.global_block.mlp),
        "head": WIDTH * model.vocab,
    }
    parts["total"] = sum(parts.values())
    return parts


def state_floats(model: RecallModel, *, length: int = 59) -> int:
    """Floats the global mixer carries from token to token (attention: its key/value cache at ``length``)."""
    if model.spec.kind == "attention":
        return 2 * length * WIDTH
    return int(model.global_block.mixer.state_floats())


def param_table(model: RecallModel) -> dict[str, int]:
    """Parameters by part: ``embedding``, ``swa``, ``mixer``, ``mlp``, ``head``, ``norms``,
    ``non_memory`` (their sum) and ``memory`` (the learned initial state, 0 without one)."""
    count = {"embedding": 0, "swa": 0, "mixer": 0, "mlp": 0, "head": 0, "norms": 0, "memory": 0}
    for name, p in model.named_parameters():
        if name in MEMORY_NAMES:
            count["memory"] += p.numel()
        elif name.startswith("embedding"):
            count["embedding"] += p.numel()
        elif name.startswith("swa"):
            count["swa"] += p.numel()
        elif name.startswith("global_block.mixer."):
            count["mixer"] += p.numel()
        elif name.startswith("global_block.mlp."):
            count["mlp"] += p.numel()
        elif name.startswith("head."):
            count["head"] += p.numel()
        else:
            count["norms"] += p.numel()
    count["non_memory"] = sum(v for k, v in count.items() if k != "memory")
    return count


def with_solver(model: RecallModel, solver: str) -> RecallModel:
    """Switch the global mixer's training computation in place (same weights, same function)."""
    mixer = model.global_block.mixer
    if not hasattr(mixer, "solver"):
        raise ValueError(f"the {model.spec.kind} mixer has no solver to choose")
    mixer.solver = solver
    return model
