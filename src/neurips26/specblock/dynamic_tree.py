"""SpecBlock's block-iterative dynamic draft tree (the paper's inference), as a :class:`~.protocol.Proposer`.

One speculative iteration:

1. **Block 1**: one drafter forward at the current position (condition ``W_c f``, token = the root); the
   same forward also absorbs every position committed since the last iteration into the drafter's KV
   cache, so it counts as ONE forward.
2. **Greedy spine**: the argmax token of each of the ``K`` slots, as a chain under the block's parent.
3. **Rank-driven branching** (:func:`plan_block`): walking the slots in order, slot 0 spawns ``beam_width``
   candidates (the spine token included); slot ``k ≥ 1`` spawns ``budgets[ŷ_k]`` (released default
   ``[2, 4, 10, 0]`` for rank classes 0–3) as siblings of its spine node. A slot whose budget is 0
   ("give up") stops the walk: it and the later slots spawn nothing. Without a rank head (ablation)
   every slot ``k ≥ 1`` spawns a fixed ``top_k``.
4. **Pending leaves**: every node of a processed slot (spine node and alternatives) is a pending leaf
   that carries its slot's hidden state ``g_k``.
5. **Block expansion**: the ``beam_width`` pending leaves with the highest cumulative log-probability
   each start a new block (condition ``g_k`` of the source slot, input token = the leaf token), all in
   ONE batched forward; repeated until ``max_blocks`` blocks deep.

Strict linear (the paper's no-branching ablation, ``linear=True``): every block adds its greedy spine
only (no alternatives, and the rank head is not consulted, so no slot gives up), and the block's last
spine node is its one pending leaf: the next block continues the chain from there (condition
``g_{K-1}``). ``max_blocks`` blocks give a chain of ``K · max_blocks`` tokens (:func:`plan_chain`).

A new block sees the drafter cache of every earlier position in full, the slots ``≤ k`` of its ancestor
blocks at the current position (``k`` the slot its chain was launched from; our reading of the released
code's "visible slots"), and its own slots causally — the attention it was trained with (multi-block TTT).
Nodes with the same parent and token are merged (the higher score is kept, so scores still fall along
every path and pruning by score stays ancestor-closed). The loop prunes the tree to ``total_tokens``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from neurips26.specblock.drafter import BlockOutput, DrafterCache, SpecBlockDrafter
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposal, fused_features
from neurips26.validation import check_int

#: Released default per-class branching budgets (classes 0–3); a tuned variant uses (2, 4, 6, 4).
DEFAULT_BUDGETS: tuple[int, int, int, int] = (2, 4, 10, 0)


def check_budgets(budgets: object, name: str = "budgets") -> tuple[int, int, int, int]:
    """Four ints ≥ 0, one per rank class (``ValueError`` naming ``name`` otherwise)."""
    if not isinstance(budgets, Sequence) or isinstance(budgets, str) or len(budgets) != 4:
        raise ValueError(f"{name} must be four ints >= 0 (one per rank class); got {budgets!r}")
    if any(isinstance(b, bool) or not isinstance(b, int) or b < 0 for b in budgets):
        raise ValueError(f"{name} must be four ints >= 0 (one per rank class); got {budgets!r}")
    return tuple(int(b) for b in budgets)


@dataclass(frozen=True)
class BlockPlan:
    """What one block adds to the tree (tokens only; :func:`plan_block`).

    ``spine[k]``: slot ``k``'s argmax token; ``siblings[k]``: slot ``k``'s alternatives (excluding the
    spine token), best first, empty for unprocessed slots; ``stop``: the give-up slot that stopped the
    walk (``None`` if none); ``leaves``: pending leaves ``(slot, token)``, spine node first per slot.
    """

    spine: tuple[int, ...]
    siblings: tuple[tuple[int, ...], ...]
    stop: int | None
    leaves: tuple[tuple[int, int], ...]

    def candidates(self, slot: int) -> int:
        """Number of tokens slot ``slot`` contributes at its depth (spine included)."""
        return 1 + len(self.siblings[slot])


def plan_block(
    log_probs: Tensor,
    classes: Sequence[int] | None,
    *,
    beam_width: int = 10,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    top_k: int = 4,
) -> BlockPlan:
    """The paper's rank-driven walk over one block's ``(K, V)`` log-probabilities.

    Slot 0 takes ``beam_width`` candidates whatever its class; slot ``k ≥ 1`` takes ``budgets[classes[k]]``
    (or ``top_k`` when ``classes`` is None: no rank head); a budget of 0 stops the walk at that slot.
    """
    beam_width = check_int("beam_width", beam_width, minimum=1)
    budgets = check_budgets(budgets)
    top_k = check_int("top_k", top_k, minimum=1)
    if log_probs.dim() != 2:
        raise ValueError(f"log_probs must be (K, V); got shape {tuple(log_probs.shape)}")
    kk, vocab = log_probs.shape
    if classes is not None and len(classes) != kk:
        raise ValueError(f"classes must hold one rank class per slot ({kk}); got {len(classes)}")
    order = torch.argsort(log_probs, dim=-1, descending=True, stable=True)
    spine = tuple(int(t) for t in order[:, 0])
    siblings: list[tuple[int, ...]] = [()] * kk
    leaves: list[tuple[int, int]] = []
    stop = None
    for k in range(kk):
        width = beam_width if k == 0 else (top_k if classes is None else budgets[int(classes[k])])
        if width == 0:
            stop = k
            break
        chosen = [int(t) for t in order[k, : min(width, vocab)]]
        siblings[k] = tuple(chosen[1:])
        leaves.extend((k, t) for t in chosen)
    return BlockPlan(spine, tuple(siblings), stop, tuple(leaves))


def plan_chain(log_probs: Tensor) -> BlockPlan:
    """The strict-linear plan of one block's ``(K, V)`` log-probabilities: the greedy spine, no siblings,
    and the last slot's spine node as the only pending leaf (the next block extends the chain)."""
    if log_probs.dim() != 2:
        raise ValueError(f"log_probs must be (K, V); got shape {tuple(log_probs.shape)}")
    kk = log_probs.shape[0]
    spine = tuple(int(t) for t in torch.argsort(log_probs, dim=-1, descending=True, stable=True)[:, 0])
    return BlockPlan(spine, ((),) * kk, None, ((kk - 1, spine[-1]),))


@dataclass
class _Leaf:
    node: int
    record: int  # which block forward produced it (0 = block 1)
    batch: int  # its row in that forward's batch
    slot: int
    root_visible: int  # block-1 slots visible to its descendants (M_1)
    ancestors: list[tuple[int, int, int]] = field(
        default_factory=list
    )  # (record, batch, visible) of blocks ≥ 2


class _TreeBuilder:
    """Grows the node lists, merging equal (parent, token) children."""

    def __init__(self) -> None:
        self.tokens: list[int] = []
        self.parents: list[int] = []
        self.scores: list[float] = []
        self.block: list[int] = []
        self.slot: list[int] = []
        self.rank_class: list[int] = []
        self.depth: list[int] = []
        self._children: dict[tuple[int, int], int] = {}

    def add(self, parent: int, token: int, score: float, block: int, slot: int, cls: int) -> int:
        key = (parent, token)
        if key in self._children:
            u = self._children[key]
            self.scores[u] = max(self.scores[u], score)
            return u
        self._children[key] = len(self.tokens)
        self.tokens.append(token)
        self.parents.append(parent)
        self.scores.append(score)
        self.block.append(block)
        self.slot.append(slot)
        self.rank_class.append(cls)
        self.depth.append(1 if parent < 0 else self.depth[parent] + 1)
        return len(self.tokens) - 1

    def child(self, parent: int, token: int) -> int:
        return self._children[(parent, token)]

    def score(self, node: int) -> float:
        return 0.0 if node < 0 else self.scores[node]


class SpecBlockProposer:
    """SpecBlock drafting (the paper's inference) behind the :class:`~.protocol.Proposer` interface.

    ``max_blocks``: block forwards per iteration (2 released); ``beam_width``: slot-0 candidates and
    leaves expanded per level (10); ``budgets``: per-class branching (``(2, 4, 10, 0)``); ``top_k``:
    fixed branching of slots ``k ≥ 1`` when the drafter has no rank head or ``use_rank_head=False``.
    ``linear``: the strict-linear ablation (module docstring): a chain of greedy spines, one leaf per block,
    without the rank head (``beam_width``, ``budgets`` and ``top_k`` are then unused).
    ``Proposal.forwards`` counts drafter forwards (``max_blocks``, fewer if no leaf is left to expand);
    ``Proposal.info`` holds per-node ``block``, ``slot`` and ``rank_class`` (``-1`` without a rank head).
    """

    def __init__(
        self,
        drafter: SpecBlockDrafter,
        *,
        max_blocks: int = 2,
        beam_width: int = 10,
        budgets: Sequence[int] = DEFAULT_BUDGETS,
        top_k: int = 4,
        use_rank_head: bool = True,
        linear: bool = False,
        name: str = "SpecBlock",
    ):
        if not isinstance(drafter, SpecBlockDrafter):
            raise TypeError(f"drafter must be a SpecBlockDrafter; got {type(drafter).__name__}")
        self.drafter = drafter
        self.max_blocks = check_int("max_blocks", max_blocks, minimum=1)
        self.beam_width = check_int("beam_width", beam_width, minimum=1)
        self.budgets = check_budgets(budgets)
        self.top_k = check_int("top_k", top_k, minimum=1)
        if not isinstance(use_rank_head, bool):
            raise TypeError(f"use_rank_head must be a bool; got {type(use_rank_head).__name__}")
        if not isinstance(linear, bool):
            raise TypeError(f"linear must be a bool; got {type(linear).__name__}")
        self.linear = linear
        self.use_rank_head = use_rank_head and drafter.rank_head is not None and not linear
        if not isinstance(name, str):
            raise TypeError(f"name must be a str; got {type(name).__name__}")
        self.name = name
        self._cache: DrafterCache | None = None

    def start(self) -> None:
        """Forget the drafter cache (a new generation begins)."""
        self._cache = None

    # ---------------------------------------------------------------------------------------------

    def _classes(self, out: BlockOutput, b: int, r: int) -> list[int] | None:
        if not self.use_rank_head or out.rank_logits is None:
            return None
        return [int(c) for c in out.rank_logits[b, r].argmax(-1)]

    def _grow(
        self, tree: _TreeBuilder, out: BlockOutput, b: int, r: int, parent: int, level: int
    ) -> tuple[BlockPlan, list[int]]:
        """Add one block's spine and branches under ``parent``; return its plan and spine nodes."""
        log_probs = torch.log_softmax(out.logits[b, r].double(), dim=-1)  # (K, V)
        classes = self._classes(out, b, r)
        if self.linear:
            plan = plan_chain(log_probs)
        else:
            plan = plan_block(
                log_probs, classes, beam_width=self.beam_width, budgets=self.budgets, top_k=self.top_k
            )
        cls = classes or [-1] * len(plan.spine)
        spine_nodes, above = [], parent
        for k, token in enumerate(plan.spine):  # greedy spine: all K nodes
            above = tree.add(above, token, tree.score(above) + float(log_probs[k, token]), level, k, cls[k])
            spine_nodes.append(above)
        for k, alternatives in enumerate(plan.siblings):  # branches: siblings of the spine node
            up = parent if k == 0 else spine_nodes[k - 1]
            for token in alternatives:
                tree.add(up, token, tree.score(up) + float(log_probs[k, token]), level, k, cls[k])
        return plan, spine_nodes

    def _leaves(
        self,
        tree: _TreeBuilder,
        grown: tuple[BlockPlan, list[int]],
        parent: int,
        record: int,
        batch: int,
        source: _Leaf | None,
    ) -> list[_Leaf]:
        """The pending leaves of one grown block, each remembering its source slot and lineage."""
        plan, spine_nodes = grown
        out = []
        for k, token in plan.leaves:
            up = parent if k == 0 else spine_nodes[k - 1]
            node = tree.child(up, token)
            if source is None:
                out.append(_Leaf(node, record, batch, k, root_visible=k + 1))
            else:
                lineage = [*source.ancestors, (record, batch, k + 1)]
                out.append(_Leaf(node, record, batch, k, source.root_visible, lineage))
        return out

    def propose(self, context: DecodeContext) -> Proposal:
        """Draft a tree under ``context``'s root with ``max_blocks`` drafter forwards."""
        if not isinstance(context, DecodeContext):
            raise TypeError(f"context must be a DecodeContext; got {type(context).__name__}")
        check_int("total_tokens", context.total_tokens, minimum=1)
        tokens, hidden = context.tokens, context.hidden
        if tokens.dim() != 1 or hidden.dim() != 3 or hidden.shape[0] != tokens.shape[0] - 1:
            raise ValueError(
                "context.tokens (L,) and context.hidden (L-1, depth+1, H) do not fit: "
                f"{tuple(tokens.shape)}, {tuple(hidden.shape)}"
            )
        rows = tokens.shape[0] - 1  # positions with target features: 0 … L-2
        empty = DraftTree((), (), ())
        if rows == 0:
            return Proposal(empty, 0, {"block": (), "slot": (), "rank_class": ()})
        drafter, cfg = self.drafter, self.drafter.config
        if rows + self.max_blocks * cfg.block_size + 1 > cfg.context:
            raise ValueError(f"context too long for the drafter's RoPE table (context={cfg.context})")
        new_from = check_int("new_from", context.new_from, minimum=0, maximum=rows)
        if self._cache is None or new_from == 0:
            self._cache = DrafterCache()
        cache = self._cache
        begin = min(cache.rows, new_from, rows - 1)
        cache.truncate(begin, cfg.block_size)
        dtype = drafter.embedding.dtype
        features = fused_features(hidden[begin:rows]).to(dtype)
        was_training = drafter.training
        drafter.eval()
        try:
            out = drafter.extend(cache, features, tokens[begin + 1 : rows + 1].long())  # block 1: ONE forward
            tree = _TreeBuilder()
            records: list[BlockOutput] = [out]
            grown = self._grow(tree, out, 0, out.logits.shape[1] - 1, -1, 0)
            pending = self._leaves(tree, grown, -1, 0, 0, None)
            forwards = 1
            for level in range(1, self.max_blocks):
                if not pending:
                    break
                pending = sorted(pending, key=lambda leaf: -tree.scores[leaf.node])[: self.beam_width]
                out = self._expand(cache, records, pending, tree, rows - 1)
                forwards += 1
                records.append(out)
                record = len(records) - 1
                fresh: list[_Leaf] = []
                for b, leaf in enumerate(pending):
                    grown = self._grow(tree, out, b, 0, leaf.node, level)
                    fresh.extend(self._leaves(tree, grown, leaf.node, record, b, leaf))
                pending = fresh
        finally:
            drafter.train(was_training)
        info = {"block": tuple(tree.block), "slot": tuple(tree.slot), "rank_class": tuple(tree.rank_class)}
        return Proposal(
            DraftTree(tuple(tree.tokens), tuple(tree.parents), tuple(tree.scores)), forwards, info
        )

    def _expand(
        self,
        cache: DrafterCache,
        records: list[BlockOutput],
        leaves: list[_Leaf],
        tree: _TreeBuilder,
        row: int,
    ) -> BlockOutput:
        """One batched forward: a new block from every leaf (condition = its source slot's ``g``)."""
        cfg = self.drafter.config

        def hidden_of(leaf: _Leaf) -> Tensor:
            out = records[leaf.record]
            r = out.hidden.shape[1] - 1 if leaf.record == 0 else 0
            return out.hidden[leaf.batch, r, leaf.slot]

        condition = torch.stack([hidden_of(leaf) for leaf in leaves])
        device = condition.device
        tokens = torch.tensor([tree.tokens[leaf.node] for leaf in leaves], dtype=torch.long, device=device)
        base = torch.tensor([row + tree.depth[leaf.node] for leaf in leaves], dtype=torch.long, device=device)
        root_visible = torch.tensor([leaf.root_visible for leaf in leaves], dtype=torch.long, device=device)
        ancestors, ancestor_mask = None, None
        if leaves[0].ancestors:
            slot = torch.arange(cfg.block_size, device=device)
            ancestors = []
            for layer in range(cfg.layers):
                ks = [
                    torch.cat([records[r].keys[layer][b] for r, b, _ in leaf.ancestors], dim=1)
                    for leaf in leaves
                ]
                vs = [
                    torch.cat([records[r].values[layer][b] for r, b, _ in leaf.ancestors], dim=1)
                    for leaf in leaves
                ]
                ancestors.append((torch.stack(ks), torch.stack(vs)))
            ancestor_mask = torch.stack(
                [torch.cat([slot < visible for _, _, visible in leaf.ancestors]) for leaf in leaves]
            )
        return self.drafter.expand(cache, condition, tokens, base, root_visible, ancestors, ancestor_mask)
