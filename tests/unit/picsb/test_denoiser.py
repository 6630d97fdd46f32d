"""The bridge's denoiser: sizes, circular-shift equivariance in x, the input stack, the bridge protocol."""

from __future__ import annotations

import pytest
import torch

from neurips26.picsb import bridge
from neurips26.picsb.denoiser import Condition, Denoiser, DenoiserConfig, network_input

# groups=2: with one channel per group GroupNorm would erase the per-channel time shift.
SMALL = DenoiserConfig(frames=4, channels=(8, 8), time_dim=8, groups=2)


def batch(b: int, t: int, x: int, seed: int = 0, dtype: torch.dtype = torch.float64):
    g = torch.Generator().manual_seed(seed)
    x_t = torch.randn(b, t, x, generator=g, dtype=dtype)
    x1 = torch.randn(b, t, x, generator=g, dtype=dtype)
    mask = torch.zeros(b, t, x, dtype=torch.bool)
    mask[..., sorted({3 % x, 10 % x, 29 % x, 50 % x})] = True
    y = torch.where(mask, torch.randn(b, t, x, generator=g, dtype=dtype), torch.zeros((), dtype=dtype))
    times = torch.rand(b, generator=g, dtype=dtype)
    return x_t, times, Condition(x1, y, mask)


@pytest.fixture(scope="module")
def net() -> Denoiser:
    return Denoiser(seed=1).double()


def test_default_size_is_the_chapters() -> None:
    d = Denoiser()
    unet = d.config.unet_config()
    assert (unet.in_channels, unet.out_channels, unet.channels, unet.circular) == (128, 32, (64, 64), True)
    assert unet.time_scale == 1000.0
    assert d.parameter_count() == 250_912
    assert d.parameter_bytes() == 501_824  # float16
    assert d.parameter_bytes(torch.float32) == 4 * 250_912


def test_output_shape_and_dtype(net: Denoiser) -> None:
    x_t, t, cond = batch(3, 32, 64)
    out = net(x_t, t, cond)
    assert out.shape == (3, 32, 64) and out.dtype == torch.float64
    assert torch.isfinite(out).all()


def test_circular_shift_by_two_cells_shifts_the_output(net: Denoiser) -> None:
    x_t, t, cond = batch(2, 32, 64, seed=3)
    out = net(x_t, t, cond)

    def roll(z: torch.Tensor, s: int) -> torch.Tensor:
        return torch.roll(z, s, dims=-1)

    for s in (2, -6):
        shifted = net(roll(x_t, s), t, Condition(*(roll(c, s) for c in cond)))
        torch.testing.assert_close(shifted, roll(out, s), atol=1e-12, rtol=0)
    odd = net(roll(x_t, 1), t, Condition(*(roll(c, 1) for c in cond)))  # stride 2: one cell is not a symmetry
    assert not torch.allclose(odd, roll(out, 1), atol=1e-6)


def test_shift_equivariance_in_float32() -> None:
    d = Denoiser(seed=4)
    x_t, t, cond = batch(2, 32, 64, seed=5, dtype=torch.float32)
    out = d(x_t, t, cond)
    got = d(torch.roll(x_t, 2, -1), t, Condition(*(torch.roll(c, 2, -1) for c in cond)))
    torch.testing.assert_close(got, torch.roll(out, 2, -1), atol=1e-5, rtol=0)


def test_input_stack_is_state_lf_masked_observations_mask() -> None:
    x_t, _, cond = batch(2, 4, 16)
    y_noisy = cond.y + 7.0  # values off the sensors must not reach the network
    h = network_input(x_t, Condition(cond.x1, y_noisy, cond.mask), 4)
    assert h.shape == (2, 16, 16)
    m = cond.mask.double()
    torch.testing.assert_close(h, torch.cat([x_t, cond.x1, m * y_noisy, m], dim=1), rtol=0, atol=0)


def test_plain_tuple_works_as_condition_and_y_off_sensors_is_ignored() -> None:
    d = Denoiser(SMALL, seed=2).double()
    x_t, t, cond = batch(2, 4, 16)
    a = d(x_t, t, cond)
    b = d(x_t, t, (cond.x1, cond.y + torch.where(cond.mask, 0.0, 5.0), cond.mask))
    torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_seed_fixes_the_weights_and_leaves_the_global_rng_alone() -> None:
    state = torch.random.get_rng_state()
    a, b, c = Denoiser(SMALL, seed=7), Denoiser(SMALL, seed=7), Denoiser(SMALL, seed=8)
    assert torch.equal(torch.random.get_rng_state(), state)
    pa, pb, pc = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)


def test_time_changes_the_output() -> None:
    d = Denoiser(SMALL, seed=3).double()
    x_t, _, cond = batch(2, 4, 16)
    a = d(x_t, torch.full((2,), 0.2, dtype=torch.float64), cond)
    b = d(x_t, torch.full((2,), 0.8, dtype=torch.float64), cond)
    assert not torch.allclose(a, b)


def test_fits_the_bridge_protocol_and_gradients_flow() -> None:
    d = Denoiser(SMALL, seed=5).double()
    x_t, t, cond = batch(3, 4, 16)
    out = bridge.sample(d, cond.x1, 3, method="ot-ode", cond=cond, mask=cond.mask, y=cond.y)
    assert out.shape == cond.x1.shape
    assert torch.equal(out[cond.mask], cond.y[cond.mask])
    d(x_t, t, cond).square().mean().backward()
    grads = [p.grad for p in d.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (lambda x, t, c: (x[:, :3], t, c), "x_t"),
        (lambda x, t, c: (x[0], t, c), "x_t"),
        (lambda x, t, c: (x[..., :15], t, Condition(*(z[..., :15] for z in c))), "x_t"),
        (lambda x, t, c: (x, t[:1], c), "t"),
        (lambda x, t, c: (x, t + 2.0, c), "t"),
        (lambda x, t, c: (x, t, c._replace(x1=c.x1[:1])), "x1"),
        (lambda x, t, c: (x, t, c._replace(y=c.y[..., :8])), "y"),
        (lambda x, t, c: (x, t, c._replace(mask=c.mask[:, :2])), "mask"),
    ],
)
def test_bad_shapes_raise_value_error_naming_the_argument(change, name) -> None:
    d = Denoiser(SMALL).double()
    x_t, t, cond = change(*batch(2, 4, 16))
    with pytest.raises(ValueError, match=name):
        d(x_t, t, cond)


def test_bad_types_raise_type_error() -> None:
    d = Denoiser(SMALL).double()
    x_t, t, cond = batch(2, 4, 16)
    with pytest.raises(TypeError, match="mask"):
        d(x_t, t, cond._replace(mask=cond.mask.double()))
    with pytest.raises(TypeError, match="cond"):
        d(x_t, t, (cond.x1, cond.y))
    with pytest.raises(TypeError, match="x_t"):
        d(x_t.numpy(), t, cond)
    with pytest.raises(TypeError, match="config"):
        Denoiser(SMALL.unet_config())


def test_bad_config_raises_naming_the_field() -> None:
    with pytest.raises(ValueError, match="frames"):
        DenoiserConfig(frames=0)
    with pytest.raises(ValueError, match="groups"):
        DenoiserConfig(channels=(12, 12))
    with pytest.raises(ValueError, match="time_scale"):
        DenoiserConfig(time_scale=0.0)
