"""U-Net: shapes, time conditioning, circular-shift equivariance, gradients, clear errors."""

from dataclasses import replace

import pytest
import torch

from neurips26.nn.conv import UNet1D, UNet2D, UNetConfig

TINY = UNetConfig(in_channels=2, out_channels=3, channels=(4, 8, 8), time_dim=8, groups=4)


def n_params(module):
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("net,shape", [(UNet2D, (2, 2, 8, 12)), (UNet1D, (2, 2, 16))])
def test_output_has_the_input_grid_and_out_channels(net, shape):
    torch.manual_seed(0)
    model = net(TINY)
    x = torch.randn(shape)
    y = model(x, torch.rand(2))
    assert y.shape == (shape[0], TINY.out_channels, *shape[2:])
    same = net(replace(TINY, out_channels=TINY.in_channels))
    assert same(x, 0.5).shape == x.shape


@pytest.mark.parametrize("net,shape", [(UNet2D, (2, 2, 8, 8)), (UNet1D, (2, 2, 16))])
def test_time_conditioning_changes_the_output(net, shape):
    torch.manual_seed(0)
    model = net(TINY)
    x = torch.randn(shape)
    y0, y1 = model(x, torch.tensor([0.1, 0.1])), model(x, torch.tensor([0.9, 0.1]))
    assert not torch.allclose(y0[0], y1[0], atol=1e-4)
    torch.testing.assert_close(y0[1], y1[1])  # samples do not interact
    torch.testing.assert_close(model(x, 0.1), y0)  # a scalar t is broadcast over the batch


@pytest.mark.parametrize("net,grid", [(UNet2D, (8, 12)), (UNet1D, (16,))])
def test_circular_padding_gives_equivariance_to_shifts_by_the_downsampling_factor(net, grid):
    torch.manual_seed(0)
    circular = net(replace(TINY, circular=True)).eval()
    factor = circular.config.downsampling
    assert factor == 4
    x, t = torch.randn(2, 2, *grid), torch.rand(2)
    dims = tuple(range(2, 2 + len(grid)))
    shifts = tuple(factor * (k + 1) for k in range(len(grid)))  # 4 (and 8) grid points
    y = circular(x, t)
    torch.testing.assert_close(circular(torch.roll(x, shifts, dims), t), torch.roll(y, shifts, dims))
    # The invariant is not automatic: zero padding breaks it at the borders ...
    zeros = net(TINY).eval()
    zeros.load_state_dict(circular.state_dict())
    assert not torch.allclose(zeros(torch.roll(x, shifts, dims), t), torch.roll(zeros(x, t), shifts, dims))
    # ... and a shift by one point is not a multiple of the factor, so stride-2 sampling breaks it.
    one = tuple(1 for _ in grid)
    assert not torch.allclose(circular(torch.roll(x, one, dims), t), torch.roll(y, one, dims), atol=1e-3)


@pytest.mark.parametrize("net,shape", [(UNet2D, (2, 2, 8, 8)), (UNet1D, (2, 2, 8))])
def test_gradients_flow_to_every_parameter(net, shape):
    torch.manual_seed(0)
    model = net(TINY)
    model(torch.randn(shape), torch.rand(2)).square().mean().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or p.grad.abs().sum() == 0]
    assert missing == []


def test_default_sizes_are_small():
    torch.manual_seed(0)
    two, one = n_params(UNet2D()), n_params(UNet1D())
    assert 100_000 <= two <= 200_000
    assert one < two
    assert UNet2D()(torch.randn(1, 1, 16, 16), torch.rand(1)).shape == (1, 1, 16, 16)
    print(f"default U-Net params: 2-D {two}, 1-D {one}")


def test_two_resolution_network_and_seeded_initialisation():
    config = replace(TINY, channels=(4, 8))
    torch.manual_seed(3)
    a = UNet1D(config)
    torch.manual_seed(3)
    b = UNet1D(config)
    x = torch.randn(1, 2, 6)  # divisible by the factor 2 only
    assert torch.equal(a(x, 0.3), b(x, 0.3))


def test_bad_configs_and_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match=r"channels\[1\] = 6 is not divisible by groups = 4"):
        replace(TINY, channels=(4, 6))
    with pytest.raises(ValueError, match="1 to 4 resolutions"):
        replace(TINY, channels=())
    with pytest.raises(ValueError, match="time_dim must be even"):
        replace(TINY, time_dim=7)
    with pytest.raises(TypeError, match="circular"):
        replace(TINY, circular="yes")
    assert replace(TINY, channels=[4, 8]).channels == (4, 8)
    model2, model1 = UNet2D(TINY), UNet1D(TINY)
    with pytest.raises(ValueError, match="divisible by the downsampling factor 4"):
        model2(torch.randn(1, 2, 8, 10), 0.1)
    with pytest.raises(ValueError, match="divisible by the downsampling factor 4"):
        model1(torch.randn(1, 2, 15), 0.1)
    with pytest.raises(ValueError, match=r"x must have shape \(batch, 2, height, width\)"):
        model2(torch.randn(1, 2, 8), 0.1)
    with pytest.raises(ValueError, match=r"x must have shape \(batch, 2, length\)"):
        model1(torch.randn(1, 2, 8, 8), 0.1)
    with pytest.raises(ValueError, match="x must have shape"):
        model1(torch.randn(1, 3, 8), 0.1)
    with pytest.raises(ValueError, match="t must have shape"):
        model1(torch.randn(2, 2, 8), torch.rand(3))
    with pytest.raises(TypeError, match="config"):
        UNet2D({"channels": (4, 8)})
