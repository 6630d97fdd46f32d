"""Support-coordinate interventions change exactly the named coordinates; the edited rollout and the
accumulated MSE follow their definitions."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.skae.interventions import (
    KS,
    accumulated_mse,
    drop_top,
    intervened_rollout,
    permute_active,
    random_support,
)
from neurips26.skae.model import KAE
from neurips26.skae.rollout import rollout

Z = torch.tensor(
    [
        [0.0, 3.0, -1.0, 0.0, 2.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, -4.0, 0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
    ],
    dtype=torch.float64,
)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_drop_top_zeroes_exactly_the_k_largest(k: int) -> None:
    out = drop_top(Z, k)
    top = {0: [1, 4, 2], 1: [3, 0, 6]}
    for i in range(2):
        changed = torch.nonzero(out[i] != Z[i]).flatten().tolist()
        assert sorted(changed) == sorted(top[i][:k])
        assert torch.all(out[i, top[i][:k]] == 0)
    assert torch.equal(Z, Z.clone())  # input untouched


def test_drop_top_bad_k() -> None:
    assert KS == (1, 2, 3, 5, 10)
    with pytest.raises(ValueError, match="k"):
        drop_top(Z, 0)
    with pytest.raises(ValueError, match="k"):
        drop_top(Z, 13)
    with pytest.raises(ValueError, match="z"):
        drop_top(torch.full((1, 3), float("nan")), 1)


def test_random_support_moves_active_values_to_inactive_coordinates() -> None:
    out = random_support(Z, seed=3)
    for i in range(2):
        before = (Z[i].abs() > 1e-3).numpy()
        after = (out[i].abs() > 1e-3).numpy()
        assert not np.any(before & after)  # all active values left their coordinates
        assert after.sum() == before.sum()
        # the same values, in the same order
        assert torch.equal(out[i][torch.as_tensor(after)], Z[i][torch.as_tensor(before)])
    assert torch.equal(out, random_support(Z, seed=3))
    assert not torch.equal(out, random_support(Z, seed=4))
    with pytest.raises(ValueError, match="inactive"):
        random_support(torch.ones(1, 4), seed=0)


def test_permute_active_keeps_the_support_and_the_values() -> None:
    out = permute_active(Z, seed=1)
    for i in range(2):
        active = Z[i].abs() > 1e-3
        assert torch.equal(out[i].abs() > 1e-3, active)
        assert torch.equal(out[i][~active], Z[i][~active])
        assert sorted(out[i][active].tolist()) == sorted(Z[i][active].tolist())


@pytest.fixture(scope="module")
def model() -> KAE:
    m = KAE("lista", "dense", 16, seed=1).double()
    with torch.no_grad():
        noise = torch.randn(16, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        m.transition.K.copy_(torch.eye(16, dtype=torch.float64) * 0.95 + 0.02 * noise)
    return m


def test_intervened_rollout_edits_only_z0(model: KAE) -> None:
    x0 = np.random.default_rng(0).normal(size=(6, 2))
    same = intervened_rollout(model, x0, 7, lambda z: z, period=3)
    np.testing.assert_array_equal(same, rollout(model, x0, 7, period=3))
    dropped = intervened_rollout(model, x0, 7, lambda z: drop_top(z, 1))
    with torch.no_grad():
        z = drop_top(model.encode(torch.as_tensor(x0)), 1)
        k = model.transition_matrix()
        manual = []
        for _ in range(7):
            z = z @ k.T
            manual.append(model.decode(z))
    np.testing.assert_allclose(dropped, torch.stack(manual, 1).numpy(), rtol=0, atol=1e-12)


def test_accumulated_mse_definition() -> None:
    y = np.zeros((2, 3, 2))
    p = np.ones((2, 3, 2))
    p[1] *= 3.0  # start 0: 1 per step; start 1: 9 per step
    np.testing.assert_allclose(accumulated_mse(p, y), [5.0, 10.0, 15.0])
    with pytest.raises(ValueError, match="truth"):
        accumulated_mse(p, y[:1])
