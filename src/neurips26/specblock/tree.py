"""Tree-attention verification of a draft tree (the verification step of the paper's inference).

Layout of one verification forward. The KV cache holds the committed prefix *without* the root,
``P = L - 1`` positions (``L`` committed tokens, the last of which is the root, produced by the target
but not yet fed). The forward feeds ``[root, node_0, …, node_{N-1}]``:

- the root sits at position ``P`` and sees the prefix and itself;
- node ``u`` sits at position ``P + depth(u)`` (depth 1 = child of the root) and sees the prefix, the
  root, its ancestors and itself.

So each root-to-node path is computed exactly as if it had been decoded alone. The target's logits at
fed index ``0`` (the root) predict the token after the root; at fed index ``1+u`` the token after node
``u``. A node is accepted when its token equals the target's argmax at its parent and its parent was
accepted; the longest such path is committed, plus the target's argmax at its last node (the bonus token,
the next root). Greedy decoding only, so the committed tokens are exactly those of greedy decoding.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.nn.attention import KVCache, tree_mask
from neurips26.nn.transformer import Decoder
from neurips26.specblock.protocol import DraftTree
from neurips26.validation import check_int


def prune(tree: DraftTree, total_tokens: int) -> DraftTree:
    """Keep ``min(total_tokens, tree.size)`` nodes: an ancestor-closed set of the highest-scoring ones.

    Best-first growth from the root: repeatedly add the highest-scoring node whose parent is already kept
    (ties: the lower index). When scores are cumulative log-probabilities (a child never scores above its
    parent) this is exactly the top-``total_tokens`` set by score; otherwise it is still ancestor closed.
    The kept nodes keep their relative (topological) order; parents are re-indexed.
    """
    if not isinstance(tree, DraftTree):
        raise TypeError(f"tree must be a DraftTree; got {type(tree).__name__}")
    total_tokens = check_int("total_tokens", total_tokens, minimum=0)
    if total_tokens >= tree.size:
        return tree
    children: list[list[int]] = [[] for _ in range(tree.size + 1)]  # slot 0 = the root
    for u, p in enumerate(tree.parents):
        children[p + 1].append(u)
    frontier = [(-tree.scores[u], u) for u in children[0]]
    heapq.heapify(frontier)
    kept: list[int] = []
    while frontier and len(kept) < total_tokens:
        _, u = heapq.heappop(frontier)
        kept.append(u)
        for c in children[u + 1]:
            heapq.heappush(frontier, (-tree.scores[c], c))
    kept.sort()
    new_index = {u: i for i, u in enumerate(kept)}
    return DraftTree(
        tokens=tuple(tree.tokens[u] for u in kept),
        parents=tuple(-1 if tree.parents[u] < 0 else new_index[tree.parents[u]] for u in kept),
        scores=tuple(tree.scores[u] for u in kept),
    )


def tree_attention(prefix_length: int, tree: DraftTree) -> tuple[Tensor, Tensor]:
    """Positions ``(N+1,)`` and boolean mask ``(N+1, P+N+1)`` to feed ``[root, nodes…]`` after ``P`` cached.

    ``positions = [P, P + depth(u) for each node u]``; mask row ``0`` (root) sees the prefix and itself,
    row ``1+u`` sees the prefix, the root, ``u``'s ancestors and ``u`` (``neurips26.nn.attention.tree_mask``
    with the root as the tree's single top node).
    """
    prefix_length = check_int("prefix_length", prefix_length, minimum=0)
    if not isinstance(tree, DraftTree):
        raise TypeError(f"tree must be a DraftTree; got {type(tree).__name__}")
    parents = [-1] + [p + 1 for p in tree.parents]  # fed index of each node's parent
    mask, positions = tree_mask(parents, prefix_length=prefix_length)
    return positions, mask


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of one verification forward.

    ``accepted``: tree indices of the accepted path (root's child first). ``tokens``: their tokens.
    ``bonus``: the target's argmax after the last accepted node (after the root if none was accepted).
    ``hidden``: ``(1 + len(accepted), depth+1, H)`` target residual stream at the root and each accepted
    node. ``logits``: ``(N+1, V)`` target logits at every fed token (root first).
    """

    accepted: tuple[int, ...]
    tokens: tuple[int, ...]
    bonus: int
    hidden: Tensor
    logits: Tensor


def accepted_path(tree: DraftTree, argmax: list[int]) -> list[int]:
    """The longest root-to-node path whose every token equals the target's argmax at its parent.

    ``argmax[0]`` is the target's choice after the root, ``argmax[1+u]`` after node ``u``. Siblings may
    repeat a token; every matching child is followed and the longest path wins (ties: the first found).
    """
    n = tree.size
    best_len = [0] * n  # length of the longest accepted path starting at node u (u itself accepted)
    best_next = [-1] * n
    children: list[list[int]] = [[] for _ in range(n + 1)]
    for u, p in enumerate(tree.parents):
        children[p + 1].append(u)
    for u in range(n - 1, -1, -1):
        best_len[u] = 1
        for c in children[u + 1]:
            if tree.tokens[c] == argmax[u + 1] and best_len[c] + 1 > best_len[u]:
                best_len[u], best_next[u] = best_len[c] + 1, c
    start, length = -1, 0
    for c in children[0]:
        if tree.tokens[c] == argmax[0] and best_len[c] > length:
            start, length = c, best_len[c]
    path = []
    while start >= 0:
        path.append(start)
        start = best_next[start]
    return path


@torch.no_grad()
def verify(target: Decoder, cache: KVCache, context_tokens: Tensor, tree: DraftTree) -> VerifyResult:
    """Verify ``tree`` under the root ``context_tokens[-1]`` in one target forward; update ``cache``.

    ``cache`` must hold the committed prefix without the root (``len(context_tokens) - 1`` positions).
    Afterwards it holds prefix + root + accepted nodes (``KVCache.gather``), i.e. every committed token
    except the new root (the bonus token).
    """
    if not isinstance(target, Decoder):
        raise TypeError(f"target must be a Decoder; got {type(target).__name__}")
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache; got {type(cache).__name__}")
    if not isinstance(context_tokens, Tensor) or context_tokens.dim() != 1 or context_tokens.numel() == 0:
        raise ValueError("context_tokens must be a non-empty 1-D tensor of committed ids (root last)")
    prefix = context_tokens.numel() - 1
    if cache.length != prefix:
        raise ValueError(
            f"cache must hold the {prefix} committed tokens before the root; holds {cache.length}"
        )
    if tree.size + prefix + 1 > target.config.context:
        raise ValueError(
            f"prefix {prefix} + root + {tree.size} nodes exceed the target's context {target.config.context}"
        )
    device = next(target.parameters()).device
    positions, mask = tree_attention(prefix, tree)
    fed = torch.tensor([int(context_tokens[-1])] + list(tree.tokens), dtype=torch.long, device=device)
    out = target(
        fed[None], positions=positions.to(device), mask=mask.to(device), cache=cache, return_hidden=True
    )
    logits = out.logits[0]  # (N+1, V)
    argmax = logits.argmax(-1).tolist()
    path = accepted_path(tree, argmax)
    rows = [0] + [1 + u for u in path]  # fed indices of root + accepted nodes
    cache.gather(list(range(prefix)) + [prefix + r for r in rows])
    hidden = torch.stack(out.hidden_states, dim=2)[0, rows]  # (1 + a, depth+1, H)
    return VerifyResult(
        accepted=tuple(path),
        tokens=tuple(tree.tokens[u] for u in path),
        bonus=int(argmax[rows[-1]]),
        hidden=hidden,
        logits=logits,
    )
