"""Tests of the chapter's cases: seeded splits, fixed probes, no HF field in the training set."""

import dataclasses

import pytest
import torch

from neurips26.picsb.burgers import relative_l2, residual
from neurips26.picsb.data import DataConfig, make_split, split_seed
from neurips26.picsb.observations import ObservationConfig

SMALL = DataConfig(train=6, validation=3, test=4)


def test_splits_are_seeded_disjoint_and_consistent():
    train, test = make_split("train", SMALL), make_split("test", SMALL)
    assert len(train) == 6 and len(test) == 4
    assert train.truth.dtype == torch.float32 and train.mask.dtype == torch.bool
    again = make_split("train", SMALL)
    assert all(
        torch.equal(a, b) for a, b in zip(dataclasses.astuple(train), dataclasses.astuple(again), strict=True)
    )
    assert not torch.equal(train.truth[:4], test.truth)  # another seed, other cases
    assert split_seed("test", dataclasses.replace(SMALL, seed=2)) == 22
    # the truth is an HF solution, the sensors read it, the probes are fixed across splits
    assert residual(train.truth.double()).abs().max() < 1e-5
    assert torch.equal(train.y[train.mask], train.truth[train.mask])
    assert torch.equal(train.y[~train.mask], torch.zeros_like(train.y[~train.mask]))
    assert torch.equal(train.mask[0], test.mask[0]) and torch.equal(train.mask[0], train.mask[-1])
    lf = relative_l2(train.x1, train.truth)
    assert 0.02 < lf.median() < 0.4


def test_the_training_set_holds_no_hf_field_and_head_and_random_masks():
    train = make_split("train", SMALL)
    data = train.training_set()
    assert not hasattr(data, "truth") and len(data) == 6
    head = train.head(2)
    assert len(head) == 2 and torch.equal(head.x1, train.x1[:2])
    with pytest.raises(ValueError, match="n"):
        train.head(7)
    noisy = make_split("test", dataclasses.replace(SMALL, observations=ObservationConfig(sigma_o=0.01)))
    assert not torch.equal(noisy.y[noisy.mask], noisy.truth[noisy.mask])
    rand = dataclasses.replace(SMALL, observations=ObservationConfig(kind="random", fraction=0.03))
    masks = make_split("train", rand).mask
    assert not torch.equal(masks[0], masks[1]) and int(masks[0].sum()) == round(0.03 * 32 * 64)


def test_bad_configs_name_the_field():
    with pytest.raises(ValueError, match="train"):
        DataConfig(train=0)
    with pytest.raises(ValueError, match="seed"):
        DataConfig(seed=-1)
    with pytest.raises(TypeError, match="observations"):
        DataConfig(observations="probes")
    with pytest.raises(ValueError, match="name"):
        make_split("holdout", SMALL)
