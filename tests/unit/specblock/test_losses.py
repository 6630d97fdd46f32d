"""SpecBlock losses (§3.4): chain mask, draft loss, rank smoothing, rank chain, finite differences."""

from __future__ import annotations

import pytest
import torch

from neurips26.specblock.losses import (
    chain_mask,
    draft_loss,
    rank_chain_mask,
    rank_labels,
    rank_loss,
    smoothed_rank_targets,
)

K, V = 4, 20


def _logits(*shape, seed=0):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def test_chain_mask_is_monotone_and_all_ones_for_an_oracle():
    draft, teacher = _logits(50, K, V, seed=1), _logits(50, K, V, seed=2)
    # make some slots agree so the chain survives sometimes
    draft[:25] = teacher[:25] + 0.01 * draft[:25]
    valid = torch.ones(50, K, dtype=torch.bool)
    c = chain_mask(draft, teacher, valid)
    assert torch.all(c[:, 1:] <= c[:, :-1])
    assert c.sum() > 50
    assert torch.equal(chain_mask(teacher, teacher, valid), torch.ones(50, K, dtype=torch.float64))
    # hand-made: slot 1 wrong → slots 2, 3 dropped; slot 1 itself is trained
    draft = teacher.clone()
    draft[0, 1] = -teacher[0, 1]
    assert chain_mask(draft[:1], teacher[:1], valid[:1]).tolist() == [[1.0, 1.0, 0.0, 0.0]]
    assert torch.equal(chain_mask(draft, teacher, valid, valid_prefix=False), valid.double())


def test_draft_loss_matches_a_hand_computation():
    draft, teacher = _logits(3, K, V, seed=3), _logits(3, K, V, seed=4)
    chain = torch.tensor([[1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0]], dtype=torch.float64)
    total, per_slot = draft_loss(draft, teacher, chain)
    ce = -(torch.softmax(teacher, -1) * torch.log_softmax(draft, -1)).sum(-1)
    expected = torch.stack([(ce[:, k] * chain[:, k]).sum() / max(chain[:, k].sum(), 1) for k in range(K)])
    torch.testing.assert_close(per_slot, expected)
    torch.testing.assert_close(total, sum(0.8**k * expected[k] for k in range(K)))
    assert per_slot[3] == 0


def test_smoothing_rows_sum_to_one_peak_at_truth_and_favour_overestimation():
    labels = torch.arange(4)
    y = smoothed_rank_targets(labels)
    torch.testing.assert_close(y.sum(-1), torch.ones(4, dtype=y.dtype))
    assert torch.equal(y.argmax(-1), labels)
    assert y[1, 2] > y[1, 0] and y[2, 3] > y[2, 1]  # one class too high beats one class too low


def test_rank_chain_mask_breaks_after_the_first_misprediction():
    labels = torch.tensor([[0, 1, 2, 3]])
    rank_logits = torch.full((1, K, 4), -5.0, dtype=torch.float64)
    for k, predicted in enumerate([0, 2, 2, 3]):  # slot 1 mispredicted
        rank_logits[0, k, predicted] = 5.0
    mask = rank_chain_mask(rank_logits, labels, torch.ones(1, K, dtype=torch.bool))
    assert mask.tolist() == [[1.0, 1.0, 0.0, 0.0]]


def test_rank_labels_bucket_the_target_rank():
    teacher = torch.zeros(1, 1, V, dtype=torch.float64)
    teacher[0, 0, 7] = 1.0  # target argmax = token 7
    draft = torch.arange(V, 0, -1, dtype=torch.float64).view(1, 1, V)  # token 7 has rank 8 → class 2
    assert rank_labels(draft, teacher).tolist() == [[2]]


def test_draft_loss_gradient_matches_finite_differences():
    draft = _logits(3, K, 6, seed=5).requires_grad_()
    teacher = _logits(3, K, 6, seed=6)
    chain = chain_mask(draft, teacher, torch.ones(3, K, dtype=torch.bool), valid_prefix=False)
    chain[1, 2:] = 0
    assert torch.autograd.gradcheck(lambda x: draft_loss(x, teacher, chain)[0], (draft,))


def test_rank_loss_gradient_matches_finite_differences():
    rank_logits = _logits(6, K, 4, seed=7).requires_grad_()
    labels = torch.randint(0, 4, (6, K), generator=torch.Generator().manual_seed(8))
    mask = torch.ones(6, K, dtype=torch.bool)
    mask[0, 3] = False
    assert torch.autograd.gradcheck(
        lambda x: rank_loss(x, labels, mask, max_weight_count=1.0), (rank_logits,)
    )


def test_rank_loss_weights_frequent_classes_down():
    labels = torch.zeros(30, 1, dtype=torch.long)
    labels[0] = 3
    logits = torch.zeros(30, 1, 4, dtype=torch.float64)
    mask = torch.ones(30, 1, dtype=torch.bool)
    # with 29 samples of class 0, each weighs 10/29; the single class-3 sample weighs 1
    loss = rank_loss(logits, labels, mask)
    ce = -torch.log(torch.tensor(0.25, dtype=torch.float64))  # uniform prediction: CE = log 4 for any target
    w = torch.tensor([10 / 29] * 29 + [1.0], dtype=torch.float64)
    w_dist = torch.tensor([1.0] * 29 + [1.0 + 3 + 3], dtype=torch.float64)  # ŷ = 0 (argmax of ties)
    torch.testing.assert_close(loss, (w * w_dist * ce).sum() / w.sum())


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="valid"):
        chain_mask(_logits(2, K, V), _logits(2, K, V), torch.ones(2, K + 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="draft_logits"):
        draft_loss(_logits(2, K, V), _logits(2, K, V + 1), torch.ones(2, K))
