"""The domain-shift stream: deployment-time adaptation of the drafter under a change of prompt domain (D8).

Prompts of domain (a) arrive first, then prompts of domain (b); the drafter was trained without (b). Each
prompt is decoded with SpecBlock (``speculative_generate(..., record=True)``, lossless), the verified
sequence goes to the policy's replay buffer, and every ``window`` generations the policy may update the
drafter (:mod:`.bandit`). Comparing :class:`~.bandit.StaticPolicy`, :class:`~.bandit.CostAwareBandit` and
:class:`~.bandit.EveryWindowPolicy` on the same stream gives the chapter's claim D8: adaptation raises τ after
the shift relative to static drafting, and the bandit needs fewer updates than updating every window.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from torch import Tensor

from neurips26.nn.transformer import Decoder
from neurips26.specblock.bandit import (
    UPDATE_ARMS,
    AdaptationPolicy,
    UpdateConfig,
    VerifiedSequence,
    WindowDecision,
    arm_parameter_names,
)
from neurips26.specblock.cost_model import iteration_units, target_parameters, update_step_units
from neurips26.specblock.data import tokenizer
from neurips26.specblock.decode import GenerationResult, speculative_generate
from neurips26.specblock.drafter import SpecBlockDrafter
from neurips26.specblock.dynamic_tree import SpecBlockProposer
from neurips26.validation import check_int


@dataclass(frozen=True)
class StreamResult:
    """One policy's run over the stream.

    Per generation: ``domain`` (``'a'``/``'b'``), ``tau`` (tokens per target forward), ``decode_seconds``,
    ``tokens`` (the generated ids). Per window: ``decisions`` (arm chosen, seconds spent). ``policy``: its
    name.
    """

    policy: str
    domain: tuple[str, ...]
    tau: tuple[float, ...]
    decode_seconds: tuple[float, ...]
    tokens: tuple[tuple[int, ...], ...]
    decisions: tuple[WindowDecision, ...]

    @property
    def updates(self) -> int:
        """Number of drafter updates made."""
        return sum(d.updated for d in self.decisions)

    @property
    def update_seconds(self) -> float:
        """Seconds spent deciding and updating (cost measurements included)."""
        return sum(d.seconds for d in self.decisions)

    @property
    def total_decode_seconds(self) -> float:
        return sum(self.decode_seconds)

    def mean_tau(self, domain: str) -> float:
        """Mean τ over the generations of ``domain`` (``'a'`` before the shift, ``'b'`` after)."""
        taus = [t for t, d in zip(self.tau, self.domain, strict=True) if d == domain]
        if not taus:
            raise ValueError(f"domain must be 'a' or 'b' with at least one generation; got {domain!r}")
        return sum(taus) / len(taus)


def _prompt_ids(name: str, prompts: object, vocab: int) -> list[list[int]]:
    if isinstance(prompts, str) or not isinstance(prompts, Sequence):
        raise TypeError(
            f"{name} must be a sequence of prompts (str or id lists); got {type(prompts).__name__}"
        )
    out = []
    for i, p in enumerate(prompts):
        if isinstance(p, str):
            ids = tokenizer().encode(p, bos=True)
        elif isinstance(p, Tensor):
            ids = [int(v) for v in p.reshape(-1).tolist()]
        elif isinstance(p, Sequence):
            ids = list(p)
        else:
            raise TypeError(f"{name}[{i}] must be a str or a sequence of ids; got {type(p).__name__}")
        if not ids:
            raise ValueError(f"{name}[{i}] is empty")
        for t in ids:
            if isinstance(t, bool) or not isinstance(t, int):
                raise TypeError(f"{name}[{i}] must hold int ids; got {type(t).__name__}")
            if not 0 <= t < vocab:
                raise ValueError(f"{name}[{i}] holds id {t}, outside the vocabulary [0, {vocab})")
        out.append(ids)
    return out


def domain_shift_stream(
    target: Decoder,
    drafter: SpecBlockDrafter,
    policy: AdaptationPolicy,
    prompts_a: Sequence[Any],
    prompts_b: Sequence[Any],
    *,
    max_new_tokens: int,
    total_tokens: int,
    window: int,
    eos_id: int | None = None,
    proposer: Mapping[str, Any] | None = None,
) -> StreamResult:
    """Decode ``prompts_a`` then ``prompts_b`` with a private copy of ``drafter`` adapted by ``policy``.

    ``drafter`` is deep-copied (so several policies can run from the same drafter) and ``policy.reset()``
    is called first. After each generation the verified sequence (prompt + generated ids, with the target's
    logits and residual stream from verification) is handed to ``policy.observe``; after every ``window``
    generations (and once at the end, if a window is open), ``policy.end_window`` may update the copy.
    The cost per iteration handed to the policy is in ``policy.unit``: measured seconds (wall time of the
    generation / its iterations) or the declared cost model's target forwards
    (:func:`~.cost_model.iteration_units` of each iteration's tree and drafter forwards, averaged).
    ``proposer``: keyword arguments of :class:`~.dynamic_tree.SpecBlockProposer` (``max_blocks``,
    ``beam_width``, ``budgets`` …). Prompts: strings (encoded as ``<bos> text``) or id sequences.
    """
    if not isinstance(target, Decoder):
        raise TypeError(f"target must be a Decoder; got {type(target).__name__}")
    if not isinstance(drafter, SpecBlockDrafter):
        raise TypeError(f"drafter must be a SpecBlockDrafter; got {type(drafter).__name__}")
    if not isinstance(policy, AdaptationPolicy):
        raise TypeError(f"policy must be an AdaptationPolicy; got {type(policy).__name__}")
    vocab = target.config.vocab_size
    ids_a = _prompt_ids("prompts_a", prompts_a, vocab)
    ids_b = _prompt_ids("prompts_b", prompts_b, vocab)
    if not ids_a and not ids_b:
        raise ValueError("prompts_a and prompts_b must hold at least one prompt between them")
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=1)
    total_tokens = check_int("total_tokens", total_tokens, minimum=1)
    window = check_int("window", window, minimum=1)
    if proposer is not None and not isinstance(proposer, Mapping):
        raise TypeError(
            f"proposer must be a mapping of SpecBlockProposer arguments; got {type(proposer).__name__}"
        )

    model = copy.deepcopy(drafter).eval()
    drafting = SpecBlockProposer(model, **dict(proposer or {}))
    target_params = target_parameters(target)

    def cost(result: GenerationResult) -> float:
        """The generation's cost per iteration in the policy's unit."""
        if policy.unit == "seconds":
            return result.seconds / max(result.iterations, 1)
        costs = [
            iteration_units(drafting, nodes, forwards, target_params)
            for nodes, forwards in zip(result.tree_sizes, result.drafter_forwards, strict=True)
        ]
        return sum(costs) / max(len(costs), 1)

    policy.reset()
    domains, taus, seconds, generated, decisions = [], [], [], [], []
    stream = [("a", p) for p in ids_a] + [("b", p) for p in ids_b]
    for n, (domain, ids) in enumerate(stream, start=1):
        t0 = time.perf_counter()
        result = speculative_generate(
            target, drafting, ids, max_new_tokens, total_tokens=total_tokens, eos_id=eos_id, record=True
        )
        seconds.append(time.perf_counter() - t0)
        domains.append(domain)
        taus.append(result.tau)
        generated.append(result.tokens)
        policy.observe(VerifiedSequence.from_generation(ids, result), result.tau, cost(result))
        if n % window == 0 or n == len(stream):
            model.eval()
            decisions.append(policy.end_window(model))
            model.eval()
    return StreamResult(
        policy=policy.name,
        domain=tuple(domains),
        tau=tuple(taus),
        decode_seconds=tuple(seconds),
        tokens=tuple(generated),
        decisions=tuple(decisions),
    )


def modelled_update_costs(
    target: Decoder,
    drafter: SpecBlockDrafter,
    update: UpdateConfig | None = None,
    arms: Sequence[str] = UPDATE_ARMS,
) -> dict[str, float]:
    """Per update arm, the declared cost of one gradient step of ``update`` in target forwards
    (:func:`~.cost_model.update_step_units`): the ``costs`` of a ``CostAwareBandit(unit='model')``."""
    if not isinstance(target, Decoder):
        raise TypeError(f"target must be a Decoder; got {type(target).__name__}")
    if not isinstance(drafter, SpecBlockDrafter):
        raise TypeError(f"drafter must be a SpecBlockDrafter; got {type(drafter).__name__}")
    update = UpdateConfig() if update is None else update
    if not isinstance(update, UpdateConfig):
        raise TypeError(f"update must be an UpdateConfig or None; got {type(update).__name__}")
    target_params = target_parameters(target)
    return {
        arm: update_step_units(
            drafter,
            arm_parameter_names(drafter, arm),
            batch=update.batch,
            window=update.window,
            blocks=update.ttt_blocks,
            target_params=target_params,
        )
        for arm in arms
    }


__all__ = ["StreamResult", "domain_shift_stream", "modelled_update_costs"]
