"""The PCA codec: exact round trips inside its subspace, 4x temporal compression into 2 spatial tokens,
deterministic sign-fixed fits, checkpoints, and the named errors."""

import dataclasses

import numpy as np
import pytest

from neurips26.sparsevideonav import codec as C
from neurips26.sparsevideonav import world as W


def _walks(seed: int, n_walks: int = 4, n_frames: int = 40) -> list[np.ndarray]:
    """Frames of a few seeded random walks through one maze (float32 in [0, 1])."""
    nav = W.NavWorld(seed)
    rng = np.random.default_rng(seed)
    videos = []
    for _ in range(n_walks):
        r, c = rng.integers(0, 5, 2)
        x, z = nav.maze.cell_center(int(r), int(c))
        pose = W.Pose(x, z, float(rng.uniform(0, 360)))
        frames = []
        for _ in range(n_frames):
            frames.append(nav.observe(pose).rgb)
            pose = nav.step(pose, (rng.uniform(0.0, 0.25), 0.0, rng.uniform(-20.0, 20.0)))
        videos.append(np.stack(frames))
    return videos


@pytest.fixture(scope="module")
def videos():
    return _walks(3)


@pytest.fixture(scope="module")
def codec(videos):
    return C.fit_codec(videos)


def test_shapes_dtypes_and_batches(codec, videos):
    frames = videos[0][:12]
    z = codec.encode(frames)
    assert z.shape == (3, 2, 16) and z.dtype == np.float32
    out = codec.decode(z)
    assert out.shape == (12, 16, 32, 3) and out.dtype == np.float32
    assert codec.encode(frames.astype(np.float64)).dtype == np.float64
    # leading batch axes: the same as encoding each item
    batch = np.stack([videos[0][:8], videos[1][:8]])
    zb = codec.encode(batch)
    assert zb.shape == (2, 2, 2, 16)
    np.testing.assert_allclose(zb[1], codec.encode(videos[1][:8]), atol=1e-6)
    np.testing.assert_allclose(codec.decode(zb)[0], codec.decode(zb[0]), atol=1e-6)


def test_exact_round_trip_inside_the_subspace(codec):
    rng = np.random.default_rng(1)
    z = 0.3 * rng.standard_normal((5, 2, 16))
    x = codec.decode(z)
    assert x.dtype == np.float64 and 0.0 <= x.min() and x.max() <= 1.0  # a legal input to encode
    np.testing.assert_allclose(codec.encode(x), z, atol=1e-9)
    np.testing.assert_allclose(codec.decode(codec.encode(x)), x, atol=1e-9)
    # the float32 path keeps it to float32 precision
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(codec.decode(codec.encode(x32)), x32, atol=1e-6)


def test_bases_are_orthonormal_and_variances_ordered(codec):
    for basis in (codec.frame_basis, codec.chunk_basis):
        np.testing.assert_allclose(basis @ basis.T, np.eye(basis.shape[0]), atol=1e-9)
    for ex in (codec.frame_explained, codec.chunk_explained):
        assert np.all(ex > 0) and np.all(np.diff(ex) <= 1e-12) and ex.sum() <= 1.0 + 1e-12
    # standardised: the training latents have unit std per dimension (pooled over halves)
    z = np.concatenate([codec.encode(v.astype(np.float64)[v.shape[0] % 4 :]) for v in _walks(3)])
    np.testing.assert_allclose(z.reshape(-1, 16).std(axis=0), 1.0, atol=1e-9)


def test_tokens_are_the_two_halves_and_chunks_are_independent(codec, videos):
    frames = videos[0][:8].copy()
    base = codec.encode(frames)
    changed = frames.copy()
    changed[:, :, 16:, :] = 1.0 - changed[:, :, 16:, :]  # the right half only
    z = codec.encode(changed)
    np.testing.assert_array_equal(z[:, 0], base[:, 0])
    assert not np.allclose(z[:, 1], base[:, 1])
    later = frames.copy()
    later[4:] = videos[1][:4]  # the second chunk only
    z = codec.encode(later)
    np.testing.assert_array_equal(z[0], base[0])
    assert not np.allclose(z[1], base[1])


def test_beats_a_one_component_codec(codec, videos):
    frames = np.concatenate(videos).astype(np.float64)
    err = np.mean((codec.reconstruct(frames) - frames) ** 2)
    # one frame component, fitted by the same rule, directly in pixel space
    halves = np.concatenate([frames[:, :, :16], frames[:, :, 16:]]).reshape(-1, 768)
    mean = halves.mean(axis=0)
    v = np.linalg.svd(halves - mean, full_matrices=False)[2][:1]
    one = np.mean((((halves - mean) @ v.T) @ v + mean - halves) ** 2)
    # one latent dimension of our own codec
    z = codec.encode(frames)
    z[..., 1:] = 0.0
    one_latent = np.mean((codec.decode(z) - frames) ** 2)
    assert err < 0.5 * one and err < 0.5 * one_latent
    assert err < 0.2 * np.mean((frames - frames.mean(axis=0)) ** 2)


def test_decode_is_not_clipped_unless_asked(codec):
    z = 3.0 * np.random.default_rng(2).standard_normal((4, 2, 16))
    raw = codec.decode(z)
    assert raw.min() < 0.0 or raw.max() > 1.0
    clipped = codec.decode(z, clip=True)
    np.testing.assert_array_equal(clipped, np.clip(raw, 0.0, 1.0))


def test_fit_is_deterministic_and_signs_are_fixed(videos, codec):
    again = C.fit_codec(videos)
    for name, value in codec.state().items():
        np.testing.assert_array_equal(value, getattr(again, name), err_msg=name)
    for basis in (codec.frame_basis, codec.chunk_basis):
        pivot = basis[np.arange(basis.shape[0]), np.argmax(np.abs(basis), axis=1)]
        assert np.all(pivot > 0)
    # the sign rule ignores whatever sign a row came in with
    flips = np.where(np.arange(12) % 2 == 0, -1.0, 1.0)[:, None]
    np.testing.assert_array_equal(C._fix_signs(flips * codec.frame_basis), codec.frame_basis)
    np.testing.assert_array_equal(C._fix_signs(np.array([[-0.5, 0.5, 0.1]])), [[0.5, -0.5, -0.1]])  # a tie


def test_subsample_follows_the_seed(videos):
    a = C.fit_codec(videos, max_frames=64, seed=5)
    b = C.fit_codec(videos, max_frames=64, seed=5)
    c = C.fit_codec(videos, max_frames=64, seed=6)
    np.testing.assert_array_equal(a.frame_mean, b.frame_mean)
    np.testing.assert_array_equal(a.chunk_basis, b.chunk_basis)
    assert not np.allclose(a.frame_mean, c.frame_mean)


def test_fit_trims_each_video_at_the_start(videos):
    # 3 extra frames in front of every video are dropped, so the fit is unchanged
    padded = [np.concatenate([1.0 - v[:3], v]) for v in videos]
    a, b = C.fit_codec(videos), C.fit_codec(padded)
    np.testing.assert_allclose(a.frame_basis, b.frame_basis, atol=1e-9)
    np.testing.assert_allclose(a.latent_std, b.latent_std, atol=1e-9)


def test_state_round_trip_and_frozen(codec, videos, tmp_path):
    path = tmp_path / "codec.npz"
    np.savez(path, **codec.state())
    with np.load(path) as data:
        loaded = C.Codec.from_state(dict(data))
    frames = videos[2][:8]
    np.testing.assert_array_equal(loaded.encode(frames), codec.encode(frames))
    assert not codec.frame_basis.flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        codec.latent_std = np.ones(16)  # type: ignore[misc]
    state = codec.state()
    state["latent_std"][:] = 7.0  # a copy: the codec is untouched
    assert not np.any(codec.latent_std == 7.0)


def test_bad_frames(codec):
    good = np.full((8, 16, 32, 3), 0.5, dtype=np.float32)
    for shape in [(5, 16, 32, 3), (0, 16, 32, 3), (8, 16, 31, 3), (8, 16, 32), (16, 32, 3)]:
        with pytest.raises(ValueError, match="frames"):
            codec.encode(np.full(shape, 0.5))
    for value in (1.5, -0.1, np.nan):
        bad = good.copy()
        bad[3, 2, 1, 0] = value
        with pytest.raises(ValueError, match="frames"):
            codec.encode(bad)
    with pytest.raises(TypeError, match="frames"):
        codec.encode(good.tolist())


def test_bad_latents(codec):
    for shape in [(3, 2, 15), (3, 1, 16), (2, 16), (0, 2, 16)]:
        with pytest.raises(ValueError, match="latents"):
            codec.decode(np.zeros(shape))
    bad = np.zeros((1, 2, 16))
    bad[0, 1, 3] = np.inf
    with pytest.raises(ValueError, match="latents"):
        codec.decode(bad)
    with pytest.raises(TypeError, match="latents"):
        codec.decode([[[0.0] * 16] * 2])


def test_bad_fit_arguments_and_state(videos, codec):
    with pytest.raises(ValueError, match="videos"):
        C.fit_codec([videos[0][:28]])  # 7 chunks: fewer than 16 chunk-half samples
    with pytest.raises(ValueError, match=r"videos\[1\]"):
        C.fit_codec([videos[0], videos[1][:, :, :16]])
    with pytest.raises(ValueError, match=r"videos\[0\]"):
        C.fit_codec([videos[0] * 2.0, videos[1]])
    with pytest.raises(TypeError, match="videos"):
        C.fit_codec(videos[0])
    with pytest.raises(ValueError, match="max_frames"):
        C.fit_codec(videos, max_frames=3)
    with pytest.raises(ValueError, match="seed"):
        C.fit_codec(videos, seed=-1)
    state = codec.state()
    del state["chunk_mean"]
    with pytest.raises(ValueError, match="state"):
        C.Codec.from_state(state)
    state = codec.state()
    state["frame_basis"] = state["frame_basis"][:11]
    with pytest.raises(ValueError, match="frame_basis"):
        C.Codec.from_state(state)
