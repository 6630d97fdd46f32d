"""EDM Heun sampler: the noise levels, second-order convergence to the exact flow, Gaussian covariance."""

import pytest
import torch

from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser
from neurips26.ssd.sampler import heun_sample, karras_sigmas

SHAPE = (3, 3)  # a tiny 1-channel 3×3 "image", d = 9


def gaussian(seed=0):
    """A random covariance Σ (d, d) and its exact denoiser D(x; σ) = Σ(Σ + σ²I)⁻¹x on (B, 1, 3, 3)."""
    g = torch.Generator().manual_seed(seed)
    d = SHAPE[0] * SHAPE[1]
    a = torch.randn(d, d, generator=g, dtype=torch.float64)
    cov = a @ a.T / d + 0.05 * torch.eye(d, dtype=torch.float64)

    def denoiser(x, sigma):
        assert bool((sigma == sigma[0]).all())  # the sampler passes one σ for the whole batch
        s2 = sigma[0].double() ** 2
        gain = cov @ torch.linalg.inv(cov + s2 * torch.eye(d, dtype=torch.float64))
        return (x.reshape(x.shape[0], d).double() @ gain.T).to(x.dtype).reshape(x.shape)

    return cov, denoiser


def exact_flow(cov, x_start, sigma_max=80.0):
    """The probability-flow ODE solved exactly: x(0) = (Σ/(Σ + σ_max² I))^{1/2} x(σ_max)."""
    lam, vec = torch.linalg.eigh(cov)
    gain = vec @ torch.diag(torch.sqrt(lam / (lam + sigma_max**2))) @ vec.T
    flat = x_start.reshape(x_start.shape[0], -1).double()
    return (flat @ gain.T).reshape(x_start.shape)


def test_karras_sigmas_run_from_sigma_max_to_sigma_min_then_zero():
    s = karras_sigmas(18, 0.002, 80.0, 7.0)
    assert s.shape == (19,) and s.dtype == torch.float64
    assert s[0].item() == pytest.approx(80.0) and s[17].item() == pytest.approx(0.002) and s[18].item() == 0.0
    assert bool((s[1:] < s[:-1]).all())
    # ρ = 1 spaces the levels evenly; larger ρ packs them near σ_min.
    torch.testing.assert_close(
        karras_sigmas(5, 1.0, 5.0, 1.0)[:-1], torch.tensor([5.0, 4, 3, 2, 1], dtype=torch.float64)
    )
    assert (karras_sigmas(18, rho=7.0) < 1.0).sum() > (karras_sigmas(18, rho=3.0) < 1.0).sum()


def test_heun_calls_the_denoiser_2n_minus_1_times_and_passes_extra():
    calls = []

    def counting(x, sigma, extra=None):
        calls.append((float(sigma[0]), extra))
        return torch.zeros_like(x)

    heun_sample(counting, (2, 1, 4, 4), steps=5, generator=torch.Generator().manual_seed(0))
    assert len(calls) == 2 * 5 - 1 and all(extra is None for _, extra in calls)
    calls.clear()
    ones = torch.ones(2, 1, 4, 4)
    heun_sample(
        counting,
        (2, 1, 4, 4),
        steps=5,
        generator=torch.Generator().manual_seed(0),
        extra_fn=lambda x, s: ones,
    )
    assert len(calls) == 9 and all(extra is ones for _, extra in calls)


def test_heun_converges_to_the_exact_flow_at_second_order():
    cov, denoiser = gaussian()
    shape = (256, 1, *SHAPE)
    start = 80.0 * torch.randn(shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    exact = exact_flow(cov, start)
    errors = []
    for steps in (18, 36, 72):
        x = heun_sample(
            denoiser, shape, steps=steps, generator=torch.Generator().manual_seed(5), dtype=torch.float64
        )
        errors.append(((x - exact).norm() / exact.norm()).item())
    assert errors[0] < 0.08  # 18 steps: a few per cent (the per-mode scale comes out slightly too large)
    assert 3.0 < errors[0] / errors[1] < 5.0 and 3.0 < errors[1] / errors[2] < 5.0  # error ∝ h²


def test_heun_with_the_exact_gaussian_denoiser_reproduces_the_covariance():
    cov, denoiser = gaussian(seed=1)
    n = 20_000
    x = heun_sample(denoiser, (n, 1, *SHAPE), steps=64, generator=torch.Generator().manual_seed(0))
    assert x.dtype == torch.float32
    sample_cov = torch.cov(x.reshape(n, -1).T.double())
    # Standard error of a covariance entry: sqrt((Σ_ii Σ_jj + Σ_ij²) / n).
    se = torch.sqrt((torch.outer(cov.diagonal(), cov.diagonal()) + cov**2) / n)
    assert ((sample_cov - cov).abs() / se).max().item() < 5.0


def test_same_generator_state_gives_the_same_samples():
    _, denoiser = gaussian()
    a = heun_sample(denoiser, (4, 1, *SHAPE), steps=6, generator=torch.Generator().manual_seed(3))
    b = heun_sample(denoiser, (4, 1, *SHAPE), steps=6, generator=torch.Generator().manual_seed(3))
    c = heun_sample(denoiser, (4, 1, *SHAPE), steps=6, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b) and not torch.equal(a, c)


@pytest.mark.parametrize(
    "kwargs,error,name",
    [
        ({"shape": (4, 3, 3)}, ValueError, "shape"),
        ({"shape": (0, 1, 3, 3)}, ValueError, "shape"),
        ({"steps": 0}, ValueError, "steps"),
        ({"sigma_min": 0.0}, ValueError, "sigma_min"),
        ({"sigma_max": 0.001}, ValueError, "sigma_max"),
        ({"rho": -1.0}, ValueError, "rho"),
        ({"generator": None}, TypeError, "generator"),
        ({"model": "not callable"}, TypeError, "model"),
    ],
)
def test_bad_arguments_are_rejected_naming_them(kwargs, error, name):
    _, denoiser = gaussian()
    args = {
        "model": denoiser,
        "shape": (4, 1, *SHAPE),
        "generator": torch.Generator().manual_seed(0),
    } | kwargs
    model, shape = args.pop("model"), args.pop("shape")
    with pytest.raises(error, match=name):
        heun_sample(model, shape, **args)


def test_a_module_denoiser_samples_in_eval_mode_and_keeps_its_mode():
    model = EDMDenoiser(DenoiserConfig(image_size=4, channels_in=1, channels=(8, 16), dropout=0.5), seed=0)
    model.train()
    a = heun_sample(model, (2, 1, 4, 4), steps=3, generator=torch.Generator().manual_seed(0))
    b = heun_sample(model, (2, 1, 4, 4), steps=3, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, b) and model.training  # no dropout noise while sampling, mode restored
