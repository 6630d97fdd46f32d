"""Metrics: score error, memorisation, Fréchet distance, the proxy-FID classifier, twin-blob consistency."""

import numpy as np
import pytest
import scipy.linalg
import torch

from neurips26.ssd.data import twin_blobs
from neurips26.ssd.metrics import (
    SCORE_SIGMAS,
    DigitCNN,
    DigitCNNConfig,
    ProxyFID,
    blob_centres,
    classifier_accuracy,
    colour_mismatch,
    digit_classifier,
    frechet_distance,
    gaussian_frechet_distance,
    memorisation_rate,
    nearest_neighbours,
    relative_score_error,
    train_digit_cnn,
    twin_asymmetry,
)

# --------------------------------------------------------------------------------------------
# score error


def white_gaussian(var=0.6, n=512):
    """x0 ~ N(0, var I) on 4×4: p_σ = N(0, (var + σ²) I), exact score -x / (var + σ²)."""

    def samples(sigma):
        g = torch.Generator().manual_seed(int(sigma * 1000))
        return (var + sigma**2) ** 0.5 * torch.randn(n, 1, 4, 4, generator=g)

    def exact(x, sigma):
        return -x / (var + sigma**2)

    return samples, exact


def test_score_sigmas_are_eight_log_spaced_levels_from_0_05_to_5():
    s = np.asarray(SCORE_SIGMAS)
    assert len(s) == 8 and s[0] == pytest.approx(0.05) and s[-1] == pytest.approx(5.0)
    np.testing.assert_allclose(np.diff(np.log(s)), np.log(100) / 7)


def test_relative_score_error_is_zero_for_the_exact_score_and_known_for_scaled_ones():
    samples, exact = white_gaussian()
    assert relative_score_error(exact, exact, samples).mean == pytest.approx(0.0, abs=1e-12)
    zero = relative_score_error(lambda x, s: torch.zeros_like(x), exact, samples)
    np.testing.assert_allclose(zero.per_sigma, 1.0)
    result = relative_score_error(lambda x, s: 1.5 * exact(x, s), exact, samples, sigmas=[0.1, 1.0])
    np.testing.assert_allclose(result.per_sigma, 0.25, rtol=1e-6)
    np.testing.assert_allclose(result.sigmas, [0.1, 1.0])


def test_relative_score_error_averages_per_sigma_ratios():
    samples, exact = white_gaussian()

    def biased(x, sigma):  # wrong data variance 1.0 instead of 0.6: the error depends on σ
        return -x / (1.0 + sigma**2)

    result = relative_score_error(biased, exact, samples)
    expected = [(1 - (0.6 + s**2) / (1.0 + s**2)) ** 2 for s in SCORE_SIGMAS]  # per-entry ratio, squared
    np.testing.assert_allclose(result.per_sigma, expected, rtol=1e-5)
    assert result.mean == pytest.approx(np.mean(expected), rel=1e-5)
    assert result.per_sigma[0] > 10 * result.per_sigma[-1]


def test_relative_score_error_rejects_bad_sigmas_and_shapes():
    samples, exact = white_gaussian()
    with pytest.raises(ValueError, match="sigmas"):
        relative_score_error(exact, exact, samples, sigmas=[0.1, 0.0])
    with pytest.raises(ValueError, match="shape"):
        relative_score_error(lambda x, s: x[:, :, :2], exact, samples)


# --------------------------------------------------------------------------------------------
# memorisation


def distinct_images(n=40, seed=0):
    return torch.rand(n, 1, 6, 6, generator=torch.Generator().manual_seed(seed)) * 2 - 1


def test_nearest_neighbours_match_brute_force():
    train, samples = distinct_images(30, 0), distinct_images(10, 1)
    dist, idx = nearest_neighbours(samples, train, k=3)
    full = ((samples.reshape(10, 1, -1) - train.reshape(1, 30, -1)) ** 2).sum(-1).sqrt().double()
    order = full.argsort(dim=1)[:, :3]
    assert torch.equal(idx, order)
    torch.testing.assert_close(dist, full.gather(1, order))


def test_memorisation_rate_is_one_for_copies_and_zero_for_noise():
    train = distinct_images()
    perm = torch.randperm(40, generator=torch.Generator().manual_seed(2))
    copies = train[perm] + 1e-3 * torch.randn(40, 1, 6, 6, generator=torch.Generator().manual_seed(3))
    result = memorisation_rate(copies, train)
    assert result.rate == 1.0 and bool(result.memorised.all())
    assert torch.equal(result.nearest, perm)
    fresh = memorisation_rate(distinct_images(200, seed=9), train)
    assert fresh.rate == 0.0 and float(fresh.ratios.min()) > 1 / 3
    # A sample equal to two identical training images is a copy too (ratio 0, not 0/0).
    twice = torch.cat([train[:1], train[:1], train[1:]])
    assert memorisation_rate(train[:1], twice).rate == 1.0


def test_memorisation_rate_rejects_bad_inputs():
    train = distinct_images()
    with pytest.raises(ValueError, match="ratio"):
        memorisation_rate(train, train, ratio=0.0)
    with pytest.raises(ValueError, match="train"):
        memorisation_rate(train, train[:1])
    with pytest.raises(ValueError, match="image shape"):
        memorisation_rate(train, train[:, :, :3])


# --------------------------------------------------------------------------------------------
# Fréchet distance


def test_frechet_distance_is_zero_for_identical_sets_and_the_mean_gap_for_shifted_ones():
    rng = np.random.default_rng(0)
    feats = rng.standard_normal((500, 6)) @ rng.standard_normal((6, 6))
    assert frechet_distance(feats, feats) == pytest.approx(0.0, abs=1e-9)
    shift = rng.standard_normal(6)
    assert frechet_distance(feats, feats + shift) == pytest.approx(np.sum(shift**2), rel=1e-8)


def test_gaussian_frechet_distance_matches_closed_forms():
    a, b = np.array([1.0, 4.0, 0.25]), np.array([9.0, 1.0, 0.25])
    mu_a, mu_b = np.zeros(3), np.array([1.0, 2.0, 0.0])
    # Commuting (diagonal) covariances: ‖Δμ‖² + Σ (√a - √b)².
    want = 5.0 + np.sum((np.sqrt(a) - np.sqrt(b)) ** 2)
    assert gaussian_frechet_distance(mu_a, np.diag(a), mu_b, np.diag(b)) == pytest.approx(want, rel=1e-12)
    # General covariances: the textbook formula with scipy.linalg.sqrtm of the product.
    rng = np.random.default_rng(1)
    ca, cb = (m @ m.T + 0.1 * np.eye(5) for m in rng.standard_normal((2, 5, 5)))
    textbook = np.trace(ca) + np.trace(cb) - 2 * np.trace(scipy.linalg.sqrtm(ca @ cb)).real
    assert gaussian_frechet_distance(np.zeros(5), ca, np.zeros(5), cb) == pytest.approx(textbook, rel=1e-8)


def test_frechet_distance_is_finite_with_fewer_samples_than_features():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((10, 32)), rng.standard_normal((12, 32)) + 0.5
    value = frechet_distance(a, b)
    assert np.isfinite(value) and value > 0
    with pytest.raises(ValueError, match="width"):
        frechet_distance(a, b[:, :5])
    with pytest.raises(ValueError, match="features"):
        frechet_distance(a[:1], b)


# --------------------------------------------------------------------------------------------
# the proxy-FID classifier

TINY_CNN = DigitCNNConfig(
    image_size=8, channels=(8, 16), features=16, steps=40, batch_size=32, lr=1e-2, shift=0, seed=0
)


def stripes(n=200, seed=0):
    """A 10-class toy task: class k lights row k mod 8 (and column k - 8 for k >= 8) of an 8×8 image."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(10, (n,), generator=g)
    images = -torch.ones(n, 1, 8, 8)
    for i, k in enumerate(labels.tolist()):
        if k < 8:
            images[i, 0, k] = 1.0
        else:
            images[i, 0, :, k - 8] = 1.0
    return images + 0.1 * torch.randn(images.shape, generator=g), labels


def test_digit_cnn_shapes_and_training_is_seeded_and_learns():
    images, labels = stripes()
    model = DigitCNN(TINY_CNN)
    assert model(images[:5]).shape == (5, 10) and model.features(images[:5]).shape == (5, 16)
    history = train_digit_cnn(model, images, labels, progress=False)
    assert len(history.loss) == TINY_CNN.steps
    assert classifier_accuracy(model, *stripes(seed=1)) > 0.9
    again = DigitCNN(TINY_CNN)
    train_digit_cnn(again, images, labels, progress=False)
    for p, q in zip(model.parameters(), again.parameters(), strict=True):
        assert torch.equal(p, q)


def test_digit_classifier_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NEURIPS26_NO_CACHE", raising=False)
    images, labels = stripes()
    first = digit_classifier(images, labels, TINY_CNN, verbose=False)
    assert len(list(tmp_path.glob("ssd-digit-cnn-*.pkl"))) == 1
    second = digit_classifier(images, labels, TINY_CNN, verbose=False)
    for p, q in zip(first.model.parameters(), second.model.parameters(), strict=True):
        assert torch.equal(p, q)
    assert second.history.loss == first.history.loss
    digit_classifier(images, (labels + 1) % 10, TINY_CNN, verbose=False)  # other data, another entry
    assert len(list(tmp_path.glob("ssd-digit-cnn-*.pkl"))) == 2


def test_proxy_fid_is_zero_on_the_reference_and_grows_with_corruption():
    images, labels = stripes()
    model = DigitCNN(TINY_CNN)
    train_digit_cnn(model, images, labels, progress=False)
    fid = ProxyFID(model, images)
    assert fid(images) == pytest.approx(0.0, abs=1e-8)
    noisy = [
        fid(images + s * torch.randn(images.shape, generator=torch.Generator().manual_seed(0)))
        for s in (0.3, 1.0)
    ]
    assert 0 < noisy[0] < noisy[1]


def test_digit_cnn_rejects_bad_inputs():
    with pytest.raises(ValueError, match="image_size"):
        DigitCNNConfig(image_size=10)
    with pytest.raises(ValueError, match="shift"):
        DigitCNNConfig(shift=-1)
    model = DigitCNN(TINY_CNN)
    with pytest.raises(ValueError, match="x"):
        model(torch.zeros(2, 1, 16, 16))
    images, labels = stripes(20)
    with pytest.raises(ValueError, match="labels"):
        train_digit_cnn(model, images, labels[:5], progress=False)
    with pytest.raises(ValueError, match="labels"):
        classifier_accuracy(model, images, labels + 10)


# --------------------------------------------------------------------------------------------
# twin blobs


def test_twin_asymmetry_is_zero_for_mirror_images_and_sqrt2_for_one_sided_ones():
    x = torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    assert torch.equal(twin_asymmetry(x + x.flip(-1)), torch.zeros(4, dtype=torch.float64))
    one = torch.zeros(1, 1, 4, 4)
    one[0, 0, 1, 0] = 3.0  # ‖x - flip x‖ = √2 · 3, ‖x‖ = 3
    assert twin_asymmetry(one).item() == pytest.approx(2**0.5)
    assert twin_asymmetry(torch.zeros(1, 1, 4, 4)).item() == 0.0
    images, _ = twin_blobs(16, seed=0)
    assert float(twin_asymmetry(images).max()) < 1e-6
    with pytest.raises(ValueError, match="x"):
        twin_asymmetry(images[0])


def test_colour_mismatch_is_zero_on_data_and_finds_the_blob_centres():
    images, params = twin_blobs(32, seed=1)
    rows, cols = np.rint(params.row).astype(int), np.rint(params.col).astype(int)
    centres = np.stack([np.stack([rows, cols], 1), np.stack([rows, 15 - cols], 1)], 1)
    assert torch.equal(blob_centres(images), torch.from_numpy(centres))
    assert float(colour_mismatch(images).max()) < 1e-6
    assert float(colour_mismatch(images, centres).max()) < 1e-6


def test_colour_mismatch_measures_a_recoloured_twin():
    images, params = twin_blobs(8, seed=2)
    right = torch.zeros_like(images, dtype=torch.bool)
    right[..., 8:] = True
    recoloured = torch.where(right, -images, images)  # the right blob's colour c becomes -c
    centres = blob_centres(images)
    rows, cols = centres[:, 0, 0], centres[:, 0, 1]
    left_colour = images[torch.arange(8), :, rows, cols].double()
    torch.testing.assert_close(colour_mismatch(recoloured, centres), 2 * left_colour.norm(dim=1))
    with pytest.raises(ValueError, match="centres"):
        colour_mismatch(images, centres[:, :1])
    with pytest.raises(ValueError, match="centres"):
        colour_mismatch(images, centres + 16)
