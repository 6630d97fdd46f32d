"""The pose estimator: shapes, training pairs drawn from the codec round trip with the padded actions as
targets, relabel's frame alignment (frame 4d − 1 → 4d … 4d + 6 → 4d + 7), a short training run whose
relabelled chunks track the real ones, determinism, and bad inputs naming the argument."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.sparsevideonav import dataset, expert
from neurips26.sparsevideonav.codec import fit_codec
from neurips26.sparsevideonav.pose_estimator import (
    PoseEstimator,
    PoseEstimatorConfig,
    pairs_from_episodes,
    pose_error,
    relabel,
    train_pose_estimator,
)


@pytest.fixture(scope="module")
def data():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    trajectories = expert.demonstrations(range(5))
    codec = fit_codec([t.frames for t in trajectories[:8]], seed=0)
    episodes = [dataset.episode(t, codec) for t in trajectories]
    model, losses = train_pose_estimator(episodes[:8], codec, steps=300, batch=64, seed=0)
    yield codec, episodes[:8], episodes[8:], model, losses
    torch.set_num_threads(before)


def test_shapes_and_units():
    torch.manual_seed(0)
    for cfg in (PoseEstimatorConfig(), PoseEstimatorConfig(hidden=32, layers=1, difference=False, pool=1)):
        model = PoseEstimator(cfg)
        a, b = torch.rand(5, 16, 32, 3), torch.rand(5, 16, 32, 3)
        out = model(a, b)
        assert out.shape == (5, 3)
        assert torch.allclose(out, model.normalised(a, b) * torch.tensor([0.25, 0.25, 22.5]))
        assert model.hidden[0].in_features == (3 if cfg.difference else 2) * 1536 // cfg.pool**2


def test_pairs_are_decoded_consecutive_frames_with_the_padded_action(data):
    codec, train, _, _, _ = data
    pairs = pairs_from_episodes(train, codec, rows=50, seed=3)
    assert len(pairs) == 50 and pairs.frames_a.dtype == np.float32
    # every pair is (decoded frame p, decoded frame p + 1, action p) of some episode
    for k in range(0, 50, 7):
        found = False
        for ep in train:
            frames = codec.decode(ep.latents)
            hits = np.flatnonzero((frames[: ep.last] == pairs.frames_a[k]).all(axis=(1, 2, 3)))
            for p in hits:
                if np.array_equal(frames[p + 1], pairs.frames_b[k]) and np.array_equal(
                    ep.actions[p], pairs.targets[k]
                ):
                    found = True
        assert found, k
    again = pairs_from_episodes(train, codec, rows=50, seed=3)
    assert np.array_equal(again.frames_a, pairs.frames_a) and np.array_equal(again.targets, pairs.targets)
    other = pairs_from_episodes(train, codec, rows=50, seed=4)
    assert not np.array_equal(other.targets, pairs.targets)
    # rows below the number of frames: drawn without replacement, so every pair is distinct
    total = sum(ep.last for ep in train)
    full = pairs_from_episodes(train, codec, rows=total, seed=0)
    assert np.abs(full.targets).sum() == pytest.approx(
        sum(np.abs(ep.actions[: ep.last]).sum() for ep in train)
    )


def test_relabel_estimates_the_decoded_consecutive_frames_in_order(data):
    codec, train, _, model, _ = data
    ep = train[1]
    ds = ep.decisions[:3]
    ref = np.stack([ep.latents[d - 2 : d] for d in ds])
    fut = np.stack([ep.latents[d : d + 8] for d in ds])  # a full 8-chunk "generated" future; 2 are read
    out = relabel(model, codec, ref, fut)
    assert out.shape == (3, 8, 3) and out.dtype == torch.float32
    frames = codec.decode(ep.latents)
    for row, d in enumerate(ds):
        start = 4 * int(d) - 1  # the current frame; the action chunk moves it to 4d, …, 4d + 7
        a = torch.as_tensor(frames[start : start + 8])
        b = torch.as_tensor(frames[start + 1 : start + 9])
        with torch.no_grad():
            expected = model(a, b)
        assert torch.allclose(out[row], expected, atol=1e-5)
    # tensors work as well as arrays
    assert torch.allclose(relabel(model, codec, torch.as_tensor(ref), torch.as_tensor(fut[:, :2])), out)


def test_trained_relabels_track_the_real_action_chunk(data):
    codec, train, test, model, losses = data
    assert np.mean(losses[-20:]) < 0.5 * np.mean(losses[:10])
    errors = []
    for ep in test:
        ds = ep.decisions
        ref = np.stack([ep.latents[d - 2 : d] for d in ds])
        fut = np.stack([ep.latents[d : d + 2] for d in ds])
        fwd = relabel(model, codec, ref, fut).numpy()[..., 0].mean(axis=1)
        real = np.stack([ep.action_chunk(int(d)) for d in ds])[..., 0].mean(axis=1)
        errors.append(np.abs(fwd - real))
    assert np.concatenate(errors).mean() < 0.1  # metres per frame, averaged over the chunk
    err = pose_error(model, test, codec)
    assert set(err) == {"forward", "lateral", "yaw"}
    zero = np.abs(np.concatenate([ep.actions[: ep.last] for ep in test])).mean(axis=0)
    assert err["forward"] < 0.5 * zero[0] and err["yaw"] < zero[2]  # better than predicting no motion


def test_training_is_deterministic(data):
    codec, train, _, _, _ = data
    small = PoseEstimatorConfig(hidden=16, layers=1)
    m1, l1 = train_pose_estimator(train[:2], codec, steps=5, batch=8, seed=1, config=small)
    m2, l2 = train_pose_estimator(train[:2], codec, steps=5, batch=8, seed=1, config=small)
    assert l1 == l2
    assert all(torch.equal(p, q) for p, q in zip(m1.parameters(), m2.parameters(), strict=True))


def test_bad_inputs_name_the_argument(data):
    codec, train, _, model, _ = data
    with pytest.raises(ValueError, match="hidden"):
        PoseEstimatorConfig(hidden=0)
    with pytest.raises(TypeError, match="difference"):
        PoseEstimatorConfig(difference=1)
    with pytest.raises(ValueError, match="frames_a"):
        model(torch.zeros(2, 16, 16, 3), torch.zeros(2, 16, 32, 3))
    with pytest.raises(ValueError, match="frames_b"):
        model(torch.zeros(2, 16, 32, 3), torch.zeros(3, 16, 32, 3))
    with pytest.raises(ValueError, match="rows"):
        pairs_from_episodes(train, codec, rows=0, seed=0)
    with pytest.raises(TypeError, match="episodes"):
        pairs_from_episodes(train[0], codec, rows=4, seed=0)
    with pytest.raises(TypeError, match="codec"):
        pose_error(model, train, None)
    with pytest.raises(ValueError, match="steps"):
        train_pose_estimator(train, codec, steps=0, batch=4, seed=0)
    ref = np.zeros((2, 2, 2, 16), dtype=np.float32)
    with pytest.raises(ValueError, match="reference_latents"):
        relabel(model, codec, ref[:, :1], ref)
    with pytest.raises(ValueError, match="future_latents"):
        relabel(model, codec, ref, ref[:, :1])
    with pytest.raises(ValueError, match="future_latents"):
        relabel(model, codec, ref, ref[:1])
