"""The contract between the speculative decoding loop and the drafters of chapter 10.

One speculative iteration (greedy, temperature 0):

1. the loop hands a drafter a :class:`DecodeContext`: the committed tokens, whose last one is the *root*
   (produced by the target, not yet fed to it), and the target's residual stream at every committed
   position before the root;
2. the drafter answers with a :class:`Proposal`: a :class:`DraftTree` of candidate continuations under
   the root and the number of drafter forward passes it spent;
3. the loop verifies the tree in one target forward and commits the longest accepted path plus the
   target's next token (the new root).

SpecBlock, EAGLE-3 and Medusa all implement :class:`Proposer`; the loop never looks inside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import torch
from torch import Tensor

from neurips26.nn.transformer import Decoder

#: Target layers whose outputs form the fused drafter feature f_i = [h⁽¹⁾; h⁽²⁾; h⁽³⁾] (low, mid, high of a
#: 4-layer target; index 0 of the residual stream is the embedding).
FEATURE_LAYERS: tuple[int, ...] = (1, 2, 3)


@dataclass(frozen=True)
class DraftTree:
    """Candidate tokens under the root, in topological order.

    ``tokens[u]`` is node ``u``'s token, ``parents[u]`` its parent (``-1``: the root, i.e. the last
    committed token) with ``parents[u] < u``, and ``scores[u]`` the drafter's cumulative log-probability
    of the path root → ``u`` (used to prune to a node budget). An empty tree is allowed: the iteration
    then commits only the target's next token.
    """

    tokens: tuple[int, ...]
    parents: tuple[int, ...]
    scores: tuple[float, ...]

    def __post_init__(self) -> None:
        for name in ("tokens", "parents", "scores"):
            if not isinstance(getattr(self, name), tuple):
                raise TypeError(f"{name} must be a tuple; got {type(getattr(self, name)).__name__}")
        n = len(self.tokens)
        if len(self.parents) != n or len(self.scores) != n:
            raise ValueError(
                f"tokens, parents and scores must have one entry per node; got {n}, {len(self.parents)}, "
                f"{len(self.scores)}"
            )
        for u, (t, p) in enumerate(zip(self.tokens, self.parents, strict=True)):
            if not isinstance(t, int) or isinstance(t, bool) or t < 0:
                raise ValueError(f"tokens[{u}] must be a token id ≥ 0; got {t!r}")
            if not isinstance(p, int) or isinstance(p, bool) or not -1 <= p < u:
                raise ValueError(f"parents[{u}] must be -1 (the root) or an earlier node; got {p!r}")

    @property
    def size(self) -> int:
        """Number of nodes (the root not counted)."""
        return len(self.tokens)

    def depths(self) -> list[int]:
        """Depth of every node: 1 for a child of the root."""
        out: list[int] = []
        for p in self.parents:
            out.append(1 if p < 0 else out[p] + 1)
        return out

    def path(self, u: int) -> list[int]:
        """Node indices from the root's child down to ``u``."""
        nodes = []
        while u >= 0:
            nodes.append(u)
            u = self.parents[u]
        return nodes[::-1]


@dataclass(frozen=True)
class DecodeContext:
    """What a drafter sees at the start of an iteration.

    ``tokens``: ``(L,)`` committed ids; ``tokens[-1]`` is the root. ``hidden``: ``(L-1, depth+1, width)``
    target residual stream (embedding, then each block's output, before the final norm) at positions
    ``0 … L-2``. ``new_from``: rows of ``hidden`` from this index on were committed since the previous
    call of this generation (``0`` on the first call), so a drafter may extend its own cache instead of
    recomputing it. ``total_tokens``: the verifier's node budget for this iteration.
    """

    tokens: Tensor
    hidden: Tensor
    new_from: int
    total_tokens: int


@dataclass
class Proposal:
    """A drafter's answer: the tree, its drafter forward passes, and optional per-node details."""

    tree: DraftTree
    forwards: int
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Proposer(Protocol):
    """A drafter usable by the decoding loop. ``start`` is called before each new generation."""

    name: str

    def start(self) -> None: ...

    def propose(self, context: DecodeContext) -> Proposal: ...


def fused_features(hidden: Tensor, layers: tuple[int, ...] = FEATURE_LAYERS) -> Tensor:
    """``[h⁽ℓ₁⁾; h⁽ℓ₂⁾; h⁽ℓ₃⁾]`` along the last axis: ``(..., depth+1, H) → (..., len(layers)·H)``."""
    if hidden.dim() < 2:
        raise ValueError(f"hidden must have a layer axis and a width axis; got shape {tuple(hidden.shape)}")
    return torch.cat([hidden[..., layer, :] for layer in layers], dim=-1)


@torch.no_grad()
def target_outputs(target: Decoder, tokens: Tensor) -> tuple[Tensor, Tensor]:
    """The target's logits ``(B, T, V)`` and stacked residual stream ``(B, T, depth+1, H)`` for ``tokens``."""
    if tokens.dim() != 2:
        raise ValueError(f"tokens must be (B, T); got shape {tuple(tokens.shape)}")
    was_training = target.training
    target.eval()
    out = target(tokens, return_hidden=True)
    target.train(was_training)
    return out.logits, torch.stack(out.hidden_states, dim=2)
