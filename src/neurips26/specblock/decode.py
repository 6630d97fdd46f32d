"""Greedy decoding: vanilla (one target forward per token) and speculative, verifying a draft tree.

:func:`speculative_generate` is lossless: it returns exactly the tokens :func:`vanilla_generate` returns
(greedy, temperature 0), whatever the proposer drafts. One iteration:

1. build the :class:`~neurips26.specblock.protocol.DecodeContext` (committed tokens, root last; the
   target's residual stream at every committed position before the root);
2. ``proposer.propose(context)`` → a draft tree, pruned to ``total_tokens`` nodes (:func:`.tree.prune`);
3. one target forward verifies the tree (:func:`.tree.verify`);
4. commit the accepted path and the bonus token, cut at ``max_new_tokens`` and after ``eos_id``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import Tensor

from neurips26.nn.embeddings import check_ids
from neurips26.nn.transformer import Decoder
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposal, Proposer
from neurips26.specblock.tree import prune, verify
from neurips26.validation import check_int


@dataclass(frozen=True)
class GenerationResult:
    """One generation's tokens and per-iteration accounting (one iteration = one target forward).

    ``tokens``: generated ids (prompt excluded; ending with ``eos_id`` when it was produced).
    Per iteration: ``accepted`` draft tokens committed (after the cut at ``max_new_tokens``/``eos``, so
    ``len(tokens) == sum(accepted) + iterations``); ``accepted_depth`` depth of the accepted path as verified
    (before the cut; for per-depth acceptance); ``tree_sizes`` nodes verified; ``drafter_forwards``;
    ``drafter_seconds`` (around ``propose``) and ``target_seconds`` (around verification).
    ``seconds``: wall time of the whole call (prefill included). Vanilla decoding has empty trees.

    With ``speculative_generate(..., record=True)``: ``logits`` ``(L-1, V)`` and ``hidden``
    ``(L-1, depth+1, H)``, the target's outputs at positions ``0 … L-2`` of ``prompt + tokens`` (``L`` ids),
    as the prefill and the verifications computed them (position ``j`` predicts token ``j+1``): the
    verifier's outputs are free supervision for adapting the drafter (the paper's cost-aware adaptation).
    ``None`` otherwise.
    """

    tokens: tuple[int, ...]
    accepted: tuple[int, ...]
    accepted_depth: tuple[int, ...]
    tree_sizes: tuple[int, ...]
    drafter_forwards: tuple[int, ...]
    drafter_seconds: tuple[float, ...]
    target_seconds: tuple[float, ...]
    seconds: float
    logits: Tensor | None = field(default=None, compare=False, repr=False)
    hidden: Tensor | None = field(default=None, compare=False, repr=False)

    @property
    def iterations(self) -> int:
        """Target forwards after the prefill (one per iteration)."""
        return len(self.accepted)

    @property
    def tau(self) -> float:
        """Acceptance length τ = (accepted draft tokens + iterations) / iterations (the paper's metric)."""
        return (sum(self.accepted) + self.iterations) / self.iterations if self.iterations else float("nan")


def check_greedy(temperature: object) -> None:
    """Greedy decoding only (the paper's configurations use temperature 0): any other value is refused."""
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise TypeError(f"temperature must be a number; got {type(temperature).__name__}")
    if temperature != 0:
        raise ValueError(f"temperature must be 0 (greedy decoding only); got {temperature}")


def _check_common(target: object, prompt_ids: object, max_new_tokens: object, eos_id: object) -> Tensor:
    if not isinstance(target, Decoder):
        raise TypeError(f"target must be a Decoder; got {type(target).__name__}")
    if isinstance(prompt_ids, Tensor):
        ids = prompt_ids
    elif isinstance(prompt_ids, list | tuple):
        if any(isinstance(t, bool) or not isinstance(t, int) for t in prompt_ids):
            raise TypeError("prompt_ids must hold int token ids")
        ids = torch.tensor(prompt_ids, dtype=torch.long)
    else:
        raise TypeError(f"prompt_ids must be a 1-D tensor or a list of ids; got {type(prompt_ids).__name__}")
    if ids.dim() != 1:
        raise ValueError(f"prompt_ids must be 1-D; got shape {tuple(ids.shape)}")
    if ids.numel() == 0:
        raise ValueError("prompt_ids must not be empty")
    vocab = target.config.vocab_size
    check_ids("prompt_ids", ids, vocab)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    if eos_id is not None:
        check_int("eos_id", eos_id, minimum=0, maximum=vocab - 1)
    if ids.numel() + max_new_tokens > target.config.context:
        raise ValueError(
            f"max_new_tokens: prompt ({ids.numel()}) + max_new_tokens ({max_new_tokens}) exceed the target's "
            f"context {target.config.context}"
        )
    return ids.to(torch.long).cpu()


def _cut(new: list[int], remaining: int, eos_id: int | None) -> tuple[list[int], bool]:
    """``new`` cut to ``remaining`` tokens and after the first ``eos_id``; whether generation ends."""
    stop = len(new) >= remaining
    new = new[:remaining]
    if eos_id is not None and eos_id in new:
        new, stop = new[: new.index(eos_id) + 1], True
    return new, stop


@torch.no_grad()
def vanilla_generate(
    target: Decoder,
    prompt_ids: Tensor | list[int],
    max_new_tokens: int,
    eos_id: int | None = None,
    *,
    temperature: float = 0.0,
) -> GenerationResult:
    """Greedy decoding with the KV cache: ``x_{t+1} = argmax p(· | x_{≤t})``, one forward per token.

    Stops after ``max_new_tokens`` tokens or right after ``eos_id``. Greedy only: ``temperature`` must be 0.
    """
    check_greedy(temperature)
    ids = _check_common(target, prompt_ids, max_new_tokens, eos_id)
    device = next(target.parameters()).device
    was_training = target.training
    target.eval()
    start = time.perf_counter()
    cache = target.make_cache()
    tokens: list[int] = []
    seconds: list[float] = []
    feed = ids[None].to(device)
    try:
        while True:
            t0 = time.perf_counter()
            token = int(target(feed, cache=cache).logits[0, -1].argmax())
            seconds.append(time.perf_counter() - t0)
            tokens.append(token)
            if len(tokens) >= max_new_tokens or token == eos_id:
                break
            feed = torch.tensor([[token]], dtype=torch.long, device=device)
    finally:
        target.train(was_training)
    n = len(tokens)
    return GenerationResult(
        tokens=tuple(tokens),
        accepted=(0,) * n,
        accepted_depth=(0,) * n,
        tree_sizes=(0,) * n,
        drafter_forwards=(0,) * n,
        drafter_seconds=(0.0,) * n,
        target_seconds=tuple(seconds),
        seconds=time.perf_counter() - start,
    )


def _checked_proposal(proposal: object, vocab: int) -> DraftTree:
    if not isinstance(proposal, Proposal) or not isinstance(proposal.tree, DraftTree):
        raise TypeError(f"propose must return a Proposal holding a DraftTree; got {type(proposal).__name__}")
    if any(t >= vocab for t in proposal.tree.tokens):
        raise ValueError(f"the proposed tree holds token ids outside the vocabulary [0, {vocab})")
    check_int("proposal.forwards", proposal.forwards, minimum=0)
    return proposal.tree


@torch.no_grad()
def speculative_generate(
    target: Decoder,
    proposer: Proposer,
    prompt_ids: Tensor | list[int],
    max_new_tokens: int,
    *,
    total_tokens: int,
    eos_id: int | None = None,
    record: bool = False,
    temperature: float = 0.0,
) -> GenerationResult:
    """Greedy speculative decoding with tree verification; the output equals :func:`vanilla_generate`'s.

    ``total_tokens``: node budget of each verified tree (a proposal is pruned to it, and further to what
    the target's context still holds). ``proposer.start()`` is called first. The
    :class:`~neurips26.specblock.protocol.DecodeContext` carries every committed token (root last) and the
    target's residual stream before the root; ``new_from`` marks the rows committed since the last call.
    With a one-token prompt there is no residual stream yet, so the first iteration verifies an empty tree
    without asking the proposer.

    ``record=True`` also returns the target's logits and residual stream at every committed position
    (``GenerationResult.logits``/``hidden``), taken from the prefill and the verification forwards that
    decoding runs anyway; the generated tokens are the same.
    """
    check_greedy(temperature)
    ids = _check_common(target, prompt_ids, max_new_tokens, eos_id)
    if not isinstance(record, bool):
        raise TypeError(f"record must be a bool; got {type(record).__name__}")
    if not isinstance(proposer, Proposer):
        raise TypeError(
            f"proposer must implement Proposer (name, start, propose); got {type(proposer).__name__}"
        )
    total_tokens = check_int("total_tokens", total_tokens, minimum=1)
    vocab, context_size = target.config.vocab_size, target.config.context
    device = next(target.parameters()).device
    was_training = target.training
    target.eval()
    start = time.perf_counter()
    try:
        proposer.start()
        cache = target.make_cache()
        committed = ids.tolist()
        dtype = next(target.parameters()).dtype
        hidden = torch.zeros(0, target.config.depth + 1, target.config.width, device=device, dtype=dtype)
        logged: list[Tensor] = []  # record=True: target logits at every committed position before the root
        if len(committed) > 1:  # prefill: everything before the root
            out = target(ids[None, :-1].to(device), cache=cache, return_hidden=True)
            hidden = torch.stack(out.hidden_states, dim=2)[0]  # (L-1, depth+1, H)
            if record:
                logged.append(out.logits[0])
        new_from = 0
        generated: list[int] = []
        rec: dict[str, list] = {k: [] for k in ("acc", "depth", "size", "fwd", "dsec", "tsec")}
        while True:
            n_hidden = hidden.shape[0]
            tree, forwards, drafter_s = DraftTree((), (), ()), 0, 0.0
            if n_hidden > 0:
                context = DecodeContext(
                    tokens=torch.tensor(committed, dtype=torch.long, device=device),
                    hidden=hidden,
                    new_from=new_from,
                    total_tokens=total_tokens,
                )
                t0 = time.perf_counter()
                proposal = proposer.propose(context)
                drafter_s = time.perf_counter() - t0
                tree = _checked_proposal(proposal, vocab)
                forwards = proposal.forwards
                # the budget, and what the context still holds: prefix + root + nodes ≤ context
                tree = prune(tree, min(total_tokens, context_size - len(committed)))
            t0 = time.perf_counter()
            result = verify(target, cache, torch.tensor(committed, dtype=torch.long), tree)
            target_s = time.perf_counter() - t0
            new, stop = _cut([*result.tokens, result.bonus], max_new_tokens - len(generated), eos_id)
            for key, value in zip(
                rec,
                (len(new) - 1, len(result.accepted), tree.size, forwards, drafter_s, target_s),
                strict=True,
            ):
                rec[key].append(value)
            generated.extend(new)
            if record:  # fed rows of the root and the accepted nodes: one per new committed token
                rows = [0, *(1 + u for u in result.accepted)][: len(new)]
                logged.append(result.logits[rows])
            if stop:
                if record:
                    hidden = torch.cat([hidden, result.hidden[: len(new)].to(hidden.dtype)], dim=0)
                break
            new_from = n_hidden
            hidden = torch.cat([hidden, result.hidden.to(hidden.dtype)], dim=0)
            committed.extend(new)
    finally:
        target.train(was_training)
    return GenerationResult(
        tokens=tuple(generated),
        accepted=tuple(rec["acc"]),
        accepted_depth=tuple(rec["depth"]),
        tree_sizes=tuple(rec["size"]),
        drafter_forwards=tuple(rec["fwd"]),
        drafter_seconds=tuple(rec["dsec"]),
        target_seconds=tuple(rec["tsec"]),
        seconds=time.perf_counter() - start,
        logits=torch.cat(logged, dim=0) if record else None,
        hidden=hidden if record else None,
    )
