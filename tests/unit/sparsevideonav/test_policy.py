"""The closed loop and the experiments' helpers: agents decide every 8 frames in lockstep, stop when asked,
never pass walls, are deterministic; far errors read the nearest chunk at or before the target; steps to a
target loss; the cost table's pipelines; Wilson rates; the Stage-4 set re-labels imagined futures."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.sparsevideonav import experiments as X
from neurips26.sparsevideonav.codec import fit_codec
from neurips26.sparsevideonav.dataset import decision_index, episode, sample_pairs
from neurips26.sparsevideonav.expert import demonstrations
from neurips26.sparsevideonav.policy import Policy, RandomPolicy, run_episodes
from neurips26.sparsevideonav.tasks import make_task
from neurips26.sparsevideonav.world import NavWorld


@pytest.fixture(scope="module")
def codec():
    return fit_codec([t.frames for t in demonstrations([0, 1])])


class Scripted(Policy):
    """Walk forward; ask to stop at the given decision; record what it was shown."""

    name = "scripted"

    def __init__(self, stop_at: int):
        self.stop_at, self.seen = stop_at, []

    def decide(self, obs, generator):
        self.seen.append((obs.reference.shape, obs.history.shape, obs.history_mask.all().item()))
        b = obs.reference.shape[0]
        actions = np.tile([0.25, 0.0, 5.0], (b, 8, 1))
        stop = np.full(b, 1.0 if len(self.seen) == self.stop_at else 0.0)
        return actions, stop


def test_agents_decide_every_eight_frames_and_stop_when_asked(codec):
    tasks = [make_task(NavWorld(1000 + i), "bvn", i) for i in range(2)]
    policy = Scripted(stop_at=3)
    out = run_episodes(policy, tasks, codec, max_frames=240)
    # decisions at chunks 2, 4, 6: reference 2 chunks, history 0, 2, 4 chunks
    assert [s[1][1] for s in policy.seen] == [0, 2, 4] and all(s[0][1] == 2 for s in policy.seen)
    for o, task in zip(out, tasks, strict=True):
        assert o.stopped and o.frames == 8 + 3 * 8 and len(o.poses) == 1 + 3 * 8
        world = NavWorld(task.seed)
        assert all(world.free(x, z) for x, z, _ in o.poses)
        assert o.success == (o.distance <= 1.5)
    capped = run_episodes(Scripted(stop_at=99), tasks[:1], codec, max_frames=40)[0]
    assert not capped.stopped and not capped.success and capped.frames == 40


def test_episodes_are_deterministic_under_a_seed(codec):
    tasks = [make_task(NavWorld(1003), "ifn", 0)]
    a = run_episodes(RandomPolicy(stop_rate=0.3), tasks, codec, night=True, seed=4, max_frames=64)
    b = run_episodes(RandomPolicy(stop_rate=0.3), tasks, codec, night=True, seed=4, max_frames=64)
    assert np.array_equal(a[0].poses, b[0].poses) and a[0].frames == b[0].frames
    with pytest.raises(TypeError, match="policy"):
        run_episodes(object(), tasks, codec)


def test_far_error_reads_the_nearest_chunk_at_or_before_each_target(codec):
    eps = [episode(t, codec) for t in demonstrations([2])]
    pairs = sample_pairs(decision_index(eps), 3, seed=0)
    offsets = (0, 1, 6, 11, 16, 21, 26, 31)  # interval 5
    truth = torch.stack(
        [
            torch.as_tensor(
                np.concatenate([eps[i].latents[d - 2 : d], eps[i].latents[d + np.array(offsets)]])
            )
            for i, d in pairs
        ]
    )
    q = X.Quality(offsets, np.zeros(8), truth, truth)
    far = X.far_error(q, eps, pairs)
    # +17 s (offset 16) is generated exactly: zero error; +14 s (offset 13) is read off offset 11
    assert far[17] == 0.0
    expect = np.mean([(eps[i].latents[d + 11] - eps[i].latents[d + 13]) ** 2 for i, d in pairs])
    assert far[14] == pytest.approx(expect, rel=1e-6)


def test_steps_to_target_and_rates():
    curve = [5, 4, 3, 2, 1, 1, 1, 1]
    assert X.steps_to_target(curve, 2.0, every=10, window=1) == 40
    assert X.steps_to_target(curve, 0.5, every=10) == float("inf")
    r = X.Rate(3, 12)
    assert r.rate == 0.25 and r.interval[0] < 0.25 < r.interval[1]


def test_the_cost_table_orders_the_pipelines():
    table = X.cost_table()
    assert set(table) == set(X.PIPELINES) and all(set(row) == set(X.HISTORIES) for row in table.values())
    # the Former's pipelines grow little with history, raw ones a lot; fewer steps cost less
    assert table["sparse · Former · 4"][64] < 1.25 * table["sparse · Former · 4"][4]
    assert table["sparse · raw · 4"][64] > 2 * table["sparse · raw · 4"][4]
    assert (
        table["sparse · Former · 4"][16]
        < table["sparse · Former · 50"][16]
        < table["dense · Former · 50"][16]
    )
