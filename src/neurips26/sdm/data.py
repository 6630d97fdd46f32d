"""The chapter's task: multi-query associative recall (in-context) plus queries of global facts (parametric).

A sequence lists ``P`` key→value pairs and asks ``min(P, 8)`` of the keys again (:func:`neurips26.text.mqar`,
keys ``0…31``, values ``32…63``), then asks :data:`FACT_QUERIES` *global facts*: a fixed table of
``16 × 16 = 256`` facts ``(g₁, g₂) → v`` with ``g₁`` and ``g₂`` from two reserved 16-token alphabets that
never occur in context. A fact query is the three tokens ``g₁ g₂ v``; the model must answer ``v`` after
``g₂`` from what it learned, never from the sequence. The two kinds of answer are scored apart: in-context
accuracy (recall from the state) and fact accuracy (recall from weights or the initial state ``M₀``)::

    k1 v1 … kP vP  q1 a1 … qM aM  g g' v  g g' v  g g' v  g g' v

A fact's key is two tokens, because one embedding row could hold the answer by itself; the pair has to be
combined — what SDM's product-key grid of ``16 × 16`` slot coordinates does by construction, and what the
chapter discusses.

Every function takes the in-context vocabulary ``mqar_vocab`` (default :data:`MQAR_VOCAB`): the ``paper``
scale asks Zoology's 256 tokens (128 keys, up to 64 pairs); the fact alphabets then follow at ``mqar_vocab``
and ``mqar_vocab + 16``, and the facts' values are drawn from its value half.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from neurips26.seeding import sub_seed
from neurips26.text import mqar
from neurips26.validation import check_int, check_seed

MQAR_VOCAB = 64
"""Ids of the in-context part: keys ``0…31``, values ``32…63`` (a smaller vocabulary than Zoology's: at this
width and budget, recall circuits form over 32 keys; the fact tokens follow)."""
FACT_ALPHABET = 16
"""Size of each of the two reserved alphabets of fact keys (ids ``64…79`` and ``80…95``)."""
VOCAB_SIZE = MQAR_VOCAB + 2 * FACT_ALPHABET
FACT_QUERIES = 4
"""Fact queries appended to every sequence."""
MAX_QUERIES = 8
"""In-context queries per sequence: ``min(P, 8)``."""
FACT_SEED = 909
"""Seed of the fixed fact table (one table for the whole chapter)."""
PAIRS = (4, 8, 12, 16)
"""The numbers of in-context pairs ``P`` trained and evaluated (one ``P`` per batch)."""


def check_mqar_vocab(mqar_vocab: int) -> int:
    """``mqar_vocab`` validated: an even number of at least 4 (keys are its lower half, values its upper)."""
    mqar_vocab = check_int("mqar_vocab", mqar_vocab, minimum=4)
    if mqar_vocab % 2:
        raise ValueError(f"mqar_vocab must be even (keys and values split it in two); got {mqar_vocab}")
    return mqar_vocab


def vocab_size(mqar_vocab: int = MQAR_VOCAB) -> int:
    """Token ids of a model of the task: ``mqar_vocab`` plus the two fact alphabets (96 at default)."""
    return check_mqar_vocab(mqar_vocab) + 2 * FACT_ALPHABET


def fact_table(mqar_vocab: int = MQAR_VOCAB) -> np.ndarray:
    """The ``16 × 16`` global facts: ``table[a, b]`` is the value id of the key ``(64+a, 80+b)`` (at
    ``mqar_vocab = 64``; the keys are ``mqar_vocab + a`` and ``mqar_vocab + 16 + b`` in general)."""
    mqar_vocab = check_mqar_vocab(mqar_vocab)
    rng = np.random.default_rng(FACT_SEED)
    return rng.integers(mqar_vocab // 2, mqar_vocab, size=(FACT_ALPHABET, FACT_ALPHABET))


def sequence_length(n_pairs: int) -> int:
    """Input length ``T`` of a batch with ``n_pairs`` pairs: ``2(P + min(P, 8)) + 3·4 - 1``."""
    return 2 * (n_pairs + min(n_pairs, MAX_QUERIES)) + 3 * FACT_QUERIES - 1


@dataclass(frozen=True)
class RecallBatch:
    """Next-token ``inputs``/``targets`` ``(B, T)`` and which targets are scored: ``context_mask`` (answers
    of in-context queries) and ``fact_mask`` (answers of fact queries); ``mask`` is their union;
    ``mqar_vocab``: the in-context vocabulary it was drawn with."""

    inputs: Tensor
    targets: Tensor
    context_mask: Tensor
    fact_mask: Tensor
    n_pairs: int
    mqar_vocab: int = MQAR_VOCAB

    @property
    def mask(self) -> Tensor:
        return self.context_mask | self.fact_mask

    @property
    def vocab_size(self) -> int:
        return vocab_size(self.mqar_vocab)

    def to(self, device: torch.device | str) -> RecallBatch:
        """The batch with its tensors on ``device`` (itself when they are there already)."""
        moved = {k: getattr(self, k).to(device) for k in ("inputs", "targets", "context_mask", "fact_mask")}
        return replace(self, **moved)


def recall_batch(batch_size: int, n_pairs: int, seed: int, *, mqar_vocab: int = MQAR_VOCAB) -> RecallBatch:
    """``batch_size`` sequences with ``n_pairs`` in-context pairs (keys from ``[0, mqar_vocab / 2)``) and
    :data:`FACT_QUERIES` fact queries."""
    batch_size = check_int("batch_size", batch_size, minimum=1)
    mqar_vocab = check_mqar_vocab(mqar_vocab)
    n_pairs = check_int("n_pairs", n_pairs, minimum=1, maximum=mqar_vocab // 2)
    seed = check_seed("seed", seed)
    task = mqar(
        batch_size,
        n_pairs=n_pairs,
        n_queries=min(n_pairs, MAX_QUERIES),
        vocab_size=mqar_vocab,
        seed=sub_seed(seed, 0),
    )
    rng = np.random.default_rng(sub_seed(seed, 1))
    a = rng.integers(0, FACT_ALPHABET, size=(batch_size, FACT_QUERIES))
    b = rng.integers(0, FACT_ALPHABET, size=(batch_size, FACT_QUERIES))
    facts = np.stack([mqar_vocab + a, mqar_vocab + FACT_ALPHABET + b, fact_table(mqar_vocab)[a, b]], axis=2)
    facts = torch.from_numpy(facts.reshape(batch_size, 3 * FACT_QUERIES).astype(np.int64))
    sequence = torch.cat([task.inputs[:, :1], task.targets, facts], dim=1)  # the whole token sequence
    T = sequence.shape[1] - 1
    fact_mask = torch.zeros(batch_size, T, dtype=torch.bool)
    start = task.targets.shape[1]  # targets index of the first fact token
    fact_mask[:, start + 2 :: 3] = True  # targets v (predicted at the g₂ positions)
    context_mask = torch.zeros(batch_size, T, dtype=torch.bool)
    context_mask[:, :start] = task.mask
    return RecallBatch(sequence[:, :-1], sequence[:, 1:], context_mask, fact_mask, n_pairs, mqar_vocab)


def training_batch(
    step: int, *, batch_size: int, seed: int, pairs: tuple[int, ...] = PAIRS, mqar_vocab: int = MQAR_VOCAB
) -> RecallBatch:
    """Batch ``step`` of a run: ``P`` cycles through ``pairs``; the draw is ``sub_seed(seed, step)``."""
    step = check_int("step", step, minimum=0)
    return recall_batch(batch_size, pairs[step % len(pairs)], sub_seed(seed, step), mqar_vocab=mqar_vocab)
