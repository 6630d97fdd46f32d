"""Synthetic sequence tasks with an exact answer: copy and multi-query associative recall (MQAR).

Each task returns a :class:`SequenceTask`: next-token ``inputs`` and ``targets`` of shape ``(B, T)``
(``targets[:, t]`` is the token that follows ``inputs[:, t]`` in the sequence) and a boolean ``mask``
marking the positions whose prediction is scored. Outside the mask the targets are still the true next
tokens (a plain language-model loss over them is valid), but those tokens are random and cannot be
predicted; the task is solved when every masked position is predicted right.

MQAR (Arora et al., 2023, "Zoology") tests in-context recall, the skill that separates attention from
fixed-size recurrent states: a sequence first lists ``n_pairs`` key-value pairs, then asks ``n_queries``
of the keys again; after each queried key the model must emit the value bound to it earlier::

    k1 v1 k2 v2 ... kN vN | q1 a1 q2 a2 ... qM aM        (a_j = value of key q_j)

Keys are drawn without replacement from the lower half of the vocabulary and values with replacement from
the upper half, so a key is never confused with a value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.validation import check_int, check_seed


@dataclass(frozen=True)
class SequenceTask:
    """A batch of a synthetic task.

    inputs, targets: ``LongTensor (B, T)``; mask: ``BoolTensor (B, T)`` (positions to score);
    vocab_size: ids lie in ``[0, vocab_size)``.
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    vocab_size: int

    def __post_init__(self) -> None:
        shape = self.inputs.shape
        if self.inputs.ndim != 2 or self.targets.shape != shape or self.mask.shape != shape:
            raise ValueError("inputs, targets and mask must share one (B, T) shape")


def _from_sequences(sequences: np.ndarray, scored: np.ndarray, vocab_size: int) -> SequenceTask:
    """Next-token pairs of full sequences ``(B, L)``; ``scored[:, t]`` marks target tokens ``t``."""
    z = torch.from_numpy(sequences.astype(np.int64))
    return SequenceTask(
        inputs=z[:, :-1], targets=z[:, 1:], mask=torch.from_numpy(scored[:, 1:].copy()), vocab_size=vocab_size
    )


def copy_task(batch_size: int, *, length: int, vocab_size: int, seed: int) -> SequenceTask:
    """Copy a random string after a separator: ``s_1 .. s_L <sep> s_1 .. s_L``.

    Content tokens are uniform on ``[0, vocab_size)``; the separator is ``vocab_size`` (so the task's
    vocabulary has ``vocab_size + 1`` ids). Sequences have ``2 L + 1`` tokens, hence ``T = 2 L``;
    the mask scores the ``L`` predictions made from the separator on.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    length = check_int("length", length, minimum=1)
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    rng = np.random.default_rng(check_seed("seed", seed))
    s = rng.integers(0, vocab_size, size=(batch_size, length))
    sep = np.full((batch_size, 1), vocab_size)
    sequences = np.concatenate([s, sep, s], axis=1)  # (B, 2L + 1)
    scored = np.zeros(sequences.shape, dtype=bool)
    scored[:, length + 1 :] = True  # the second copy is what must be predicted
    return _from_sequences(sequences, scored, vocab_size + 1)


def mqar(batch_size: int, *, n_pairs: int, n_queries: int, vocab_size: int, seed: int) -> SequenceTask:
    """Multi-query associative recall: ``k1 v1 .. kN vN q1 a1 .. qM aM`` with ``a_j`` the value of ``q_j``.

    ``n_pairs`` keys are distinct draws from ``[0, vocab_size // 2)``; values are uniform draws from
    ``[vocab_size // 2, vocab_size)``; the ``n_queries <= n_pairs`` queries are distinct keys of the
    same sequence in random order. Sequences have ``2 (N + M)`` tokens, hence ``T = 2 (N + M) - 1``;
    the mask scores exactly the ``M`` positions holding a query (whose target is its answer).
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    vocab_size = check_int("vocab_size", vocab_size, minimum=4)
    n_keys = vocab_size // 2
    n_pairs = check_int("n_pairs", n_pairs, minimum=1, maximum=n_keys)
    n_queries = check_int("n_queries", n_queries, minimum=1, maximum=n_pairs)
    rng = np.random.default_rng(check_seed("seed", seed))
    # Distinct keys per sequence: the first N entries of a random permutation of the key range.
    keys = np.argsort(rng.random((batch_size, n_keys)), axis=1)[:, :n_pairs]  # (B, N)
    values = rng.integers(n_keys, vocab_size, size=(batch_size, n_pairs))  # (B, N)
    # Which pairs are asked, in which order: distinct indices into the N pairs.
    asked = np.argsort(rng.random((batch_size, n_pairs)), axis=1)[:, :n_queries]  # (B, M)
    queries = np.take_along_axis(keys, asked, axis=1)
    answers = np.take_along_axis(values, asked, axis=1)  # a_j = value bound to key q_j
    context = np.stack([keys, values], axis=2).reshape(batch_size, 2 * n_pairs)  # k1 v1 k2 v2 ...
    questions = np.stack([queries, answers], axis=2).reshape(batch_size, 2 * n_queries)
    sequences = np.concatenate([context, questions], axis=1)  # (B, 2N + 2M)
    scored = np.zeros(sequences.shape, dtype=bool)
    scored[:, 2 * n_pairs + 1 :: 2] = True  # the answers a_j are the scored targets
    return _from_sequences(sequences, scored, vocab_size)


def masked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the masked positions: ``-(1/|M|) sum_{(b,t) in M} log p(y_bt | x_b,<=t)``.

    logits: ``(B, T, V)``; targets: ``LongTensor (B, T)``; mask: ``BoolTensor (B, T)``, not all false.
    """
    _check_scored(logits, targets, mask)
    return F.cross_entropy(logits[mask], targets[mask])


def masked_accuracy(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> float:
    """Fraction of masked positions where the arg-max of the logits is the target."""
    _check_scored(logits, targets, mask)
    return (logits[mask].argmax(-1) == targets[mask]).float().mean().item()


def _check_scored(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> None:
    if logits.ndim != 3 or logits.shape[:2] != targets.shape or mask.shape != targets.shape:
        raise ValueError(
            f"logits must be (B, T, V) with targets and mask (B, T); got {tuple(logits.shape)}, "
            f"{tuple(targets.shape)}, {tuple(mask.shape)}"
        )
    if mask.dtype != torch.bool or not bool(mask.any()):
        raise ValueError("mask must be a boolean tensor with at least one true entry")
