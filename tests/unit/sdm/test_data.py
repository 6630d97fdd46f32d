"""The recall task: lengths, what is scored, facts from the fixed table and never in context."""

import pytest
import torch

from neurips26.sdm.data import (
    FACT_QUERIES,
    MQAR_VOCAB,
    VOCAB_SIZE,
    fact_table,
    recall_batch,
    sequence_length,
    training_batch,
)


@pytest.mark.parametrize("P", [4, 8, 12, 16])
def test_layout_and_masks(P):
    b = recall_batch(32, P, seed=P)
    assert b.inputs.shape == (32, sequence_length(P)) and sequence_length(16) == 59
    assert bool((b.inputs >= 0).all() and (b.inputs < VOCAB_SIZE).all())
    assert b.context_mask.sum(1).tolist() == [min(P, 8)] * 32
    assert b.fact_mask.sum(1).tolist() == [FACT_QUERIES] * 32
    assert not bool((b.context_mask & b.fact_mask).any())
    table = fact_table()
    g1, g2 = b.inputs[b.fact_mask], b.targets[b.fact_mask]  # input at a scored fact is g₂
    assert bool((g1 >= MQAR_VOCAB + 16).all())
    prev = b.inputs[:, :-1][b.fact_mask[:, 1:]]  # g₁ before each g₂
    assert torch.equal(
        g2, torch.as_tensor(table[(prev - MQAR_VOCAB).numpy(), (g1 - MQAR_VOCAB - 16).numpy()])
    )
    context = b.inputs[:, : 2 * (P + min(P, 8)) - 1]
    assert bool((context < MQAR_VOCAB).all())  # fact tokens never in context
    # the answer of each in-context query is the value bound to its key earlier
    for row in range(4):
        seq = torch.cat([b.inputs[row, :1], b.targets[row]])
        pairs = {int(seq[2 * i]): int(seq[2 * i + 1]) for i in range(P)}
        for t in b.context_mask[row].nonzero().flatten().tolist():
            assert pairs[int(b.inputs[row, t])] == int(b.targets[row, t])


def test_determinism_and_schedule():
    a, b = recall_batch(4, 8, 3), recall_batch(4, 8, 3)
    assert torch.equal(a.inputs, b.inputs)
    assert not torch.equal(a.inputs, recall_batch(4, 8, 4).inputs)
    assert [training_batch(s, batch_size=2, seed=0).n_pairs for s in range(5)] == [4, 8, 12, 16, 4]
    with pytest.raises(ValueError, match="n_pairs"):
        recall_batch(2, 40, 0)
    with pytest.raises(TypeError, match="batch_size"):
        recall_batch(2.0, 4, 0)
