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
"""

from __future__ import annotations

from dataclasses import dataclass

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


def fact_table() -> np.ndarray:
    """The ``16 × 16`` global facts: ``table[a, b]`` is the value id of the key ``(64+a, 80+b)``."""
    rng = np.random.default_rng(FACT_SEED)
    return rng.integers(MQAR_VOCAB // 2, MQAR_VOCAB, size=(FACT_ALPHABET, FACT_ALPHABET))


def sequence_length(n_pairs: int) -> int:
    """Input length ``T`` of a batch with ``n_pairs`` pairs: ``2(P + min(P, 8)) + 3·4 - 1``."""
    return 2 * (n_pairs + min(n_pairs, MAX_QUERIES)) + 3 * FACT_QUERIES - 1


@dataclass(frozen=True)
class RecallBatch:
    """Next-token ``inputs``/``targets`` ``(B, T)`` and which targets are scored: ``context_mask`` (answers
    of in-context queries) and ``fact_mask`` (answers of fact queries); ``mask`` is their union."""

    inputs: Tensor
    targets: Tensor
    context_mask: Tensor
    fact_mask: Tensor
    n_pairs: int

    @property
    def mask(self) -> Tensor:
        return self.context_mask | self.fact_mask

    @property
    def vocab_size(self) -> int:
        return VOCAB_SIZE


def recall_batch(batch_size: int, n_pairs: int, seed: int) -> RecallBatch:
    """``batch_size`` sequences with ``n_pairs`` in-context pairs and :data:`FACT_QUERIES` fact queries."""
    batch_size = check_int("batch_size", batch_size, minimum=1)
    n_pairs = check_int("n_pairs", n_pairs, minimum=1, maximum=MQAR_VOCAB // 2)
    seed = check_seed("seed", seed)
    task = mqar(
        batch_size,
        n_pairs=n_pairs,
        n_queries=min(n_pairs, MAX_QUERIES),
        vocab_size=MQAR_VOCAB,
        seed=sub_seed(seed, 0),
    )
    rng = np.random.default_rng(sub_seed(seed, 1))
    a = rng.integers(0, FACT_ALPHABET, size=(batch_size, FACT_QUERIES))
    b = rng.integers(0, FACT_ALPHABET, size=(batch_size, FACT_QUERIES))
    facts = np.stack([MQAR_VOCAB + a, MQAR_VOCAB + FACT_ALPHABET + b, fact_table()[a, b]], axis=2)
    facts = torch.from_numpy(facts.reshape(batch_size, 3 * FACT_QUERIES).astype(np.int64))
    sequence = torch.cat([task.inputs[:, :1], task.targets, facts], dim=1)  # the whole token sequence
    T = sequence.shape[1] - 1
    fact_mask = torch.zeros(batch_size, T, dtype=torch.bool)
    start = task.targets.shape[1]  # targets index of the first fact token
    fact_mask[:, start + 2 :: 3] = True  # targets v (predicted at the g₂ positions)
    context_mask = torch.zeros(batch_size, T, dtype=torch.bool)
    context_mask[:, :start] = task.mask
    return RecallBatch(sequence[:, :-1], sequence[:, 1:], context_mask, fact_mask, n_pairs)


def training_batch(step: int, *, batch_size: int, seed: int, pairs: tuple[int, ...] = PAIRS) -> RecallBatch:
    """Batch ``step`` of a run: ``P`` cycles through ``pairs``; the draw is ``sub_seed(seed, step)``."""
    step = check_int("step", step, minimum=0)
    return recall_batch(batch_size, pairs[step % len(pairs)], sub_seed(seed, step))
