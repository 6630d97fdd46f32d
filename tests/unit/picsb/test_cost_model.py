"""Declared FLOP counts: hand counts on tiny layers and U-Nets, torch's own counter, scaling with size."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from neurips26.nn import UNetConfig
from neurips26.picsb.burgers import BurgersConfig
from neurips26.picsb.cost_model import (
    Cost,
    conv1d_flops,
    denoiser_flops,
    energy_flops,
    layer_flops,
    linear_flops,
    residual_flops,
    rfft_flops,
    solve_flops,
    step_flops,
    unet_flops,
)
from neurips26.picsb.denoiser import Denoiser, DenoiserConfig
from neurips26.picsb.energy import EnergyConfig

TINY = BurgersConfig(grid=8, frames=3, lf_grid=8, modes=2)


def test_single_conv1d_matches_the_hand_count() -> None:
    conv = nn.Conv1d(3, 5, 3, padding=1, padding_mode="circular")
    # 5 outputs channels × 7 positions, each 3·3 multiply-adds (2 FLOPs) plus the bias.
    assert layer_flops(conv, torch.zeros(2, 3, 7)) == {"": 5 * 7 * (2 * 9 + 1)} == {"": 665}
    strided = nn.Conv1d(4, 2, 3, stride=2, padding=1, bias=False)
    assert layer_flops(strided, torch.zeros(1, 4, 8)) == {"": 2 * 2 * 4 * 3 * 4}  # L_out = 4
    assert conv1d_flops(3, 5, 3, 7) == 665


def test_single_linear_matches_the_hand_count() -> None:
    lin = nn.Linear(4, 6)
    assert layer_flops(lin, torch.zeros(3, 4)) == {"": 2 * 4 * 6 + 6} == {"": 54}
    assert layer_flops(lin, torch.zeros(3, 5, 4)) == {"": 5 * 54}  # one row per position
    assert linear_flops(4, 6, bias=False) == 48


def test_groupnorm_counts_eight_per_element() -> None:
    gn = nn.GroupNorm(2, 4)
    assert layer_flops(gn, torch.zeros(2, 4, 5)) == {"": 8 * 4 * 5}


def test_bias_free_layers_agree_with_torchs_counter() -> None:
    net = nn.Sequential(nn.Conv1d(6, 8, 5, padding=2, bias=False), nn.Conv1d(8, 3, 1, bias=False))
    x = torch.zeros(1, 6, 12)
    with FlopCounterMode(display=False) as counter:
        net(x)
    assert sum(layer_flops(net, x).values()) == counter.get_total_flops()


def resblock(c_in: int, c_out: int, length: int, time_dim: int) -> int:
    """Hand count of Res(h, e): GN, conv3, time Linear, GN, conv3, and a 1×1 skip when widths differ."""
    n = 8 * c_in * length  # norm1
    n += (2 * c_out * c_in * 3 + c_out) * length  # conv1
    n += 2 * time_dim * c_out + c_out  # time projection
    n += 8 * c_out * length  # norm2
    n += (2 * c_out * c_out * 3 + c_out) * length  # conv2
    if c_in != c_out:
        n += (2 * c_out * c_in + c_out) * length  # skip
    return n


def test_one_level_unet_matches_the_hand_count() -> None:
    cfg = UNetConfig(in_channels=2, out_channels=1, channels=(4,), time_dim=4, groups=2, circular=True)
    length = 8
    # time MLP 2·(2·4·4 + 4) = 72; stem (2·4·2·3 + 4)·L = 52 L; two (4→4) blocks 2·(264 L + 36);
    # up block (8→4) 460 L + 36; out norm 32 L; out conv (2·1·4·3 + 1)·L = 25 L.
    assert resblock(4, 4, length, 4) == 264 * length + 36
    assert resblock(8, 4, length, 4) == 460 * length + 36
    assert sum(unet_flops(cfg, length).values()) == 180 + 1097 * length


def test_two_level_unet_matches_the_hand_count() -> None:
    cfg = UNetConfig(in_channels=3, out_channels=2, channels=(4, 8), time_dim=6, groups=2, circular=True)
    n, half, td = 16, 8, 6
    hand = 2 * (2 * td * td + td)  # time MLP
    hand += (2 * 4 * 3 * 3 + 4) * n  # stem
    hand += resblock(4, 4, n, td)  # down 0 at full length
    hand += (2 * 4 * 4 * 3 + 4) * half  # stride-2 downsampling conv, output length n/2
    hand += resblock(4, 8, half, td)  # down 1
    hand += resblock(8, 8, half, td)  # middle
    hand += resblock(16, 8, half, td)  # up 1 sees [h ; skip_1]
    hand += (2 * 8 * 8 * 3 + 8) * n  # conv after ×2 upsampling
    hand += resblock(12, 4, n, td)  # up 0 sees [h (8) ; skip_0 (4)]
    hand += 8 * 4 * n + (2 * 2 * 4 * 3 + 2) * n  # out norm and out conv
    assert sum(unet_flops(cfg, n).values()) == hand


def test_default_denoiser_count_and_torchs_counter() -> None:
    flops = denoiser_flops()
    assert flops == 21_651_904  # 21.7 MFLOPs per case per network call
    d = Denoiser()
    x = torch.zeros(1, 32, 64)
    with FlopCounterMode(display=False) as counter:
        d(x, torch.zeros(1), (x, x, torch.zeros(1, 32, 64, dtype=torch.bool)))
    # torch counts only the convolutions' and linears' multiply-adds; we add biases, GroupNorm, masking.
    assert counter.get_total_flops() < flops < 1.03 * counter.get_total_flops()


def test_denoiser_doubles_with_the_grid_except_the_time_layers() -> None:
    cfg = DenoiserConfig(frames=4, channels=(8, 16), time_dim=8, groups=4)
    layers = unet_flops(cfg.unet_config(), 16)
    time_part = sum(v for k, v in layers.items() if k.startswith("time_mlp") or k.endswith(".time"))
    assert time_part == 2 * (2 * 8 * 8 + 8) + 2 * (2 * 8 * 8 + 8) + 3 * (2 * 8 * 16 + 16)
    # every convolution, norm and the masking scale with X; the time MLP and projections do not
    assert denoiser_flops(cfg, 32) == 2 * denoiser_flops(cfg, 16) - time_part
    assert denoiser_flops(cfg, 16) == sum(layers.values()) + 4 * 16


def test_fft_and_step_hand_counts() -> None:
    assert rfft_flops(8) == 2.5 * 8 * 3 == 60.0
    assert rfft_flops(1) == 0.0
    # u² 8 + two rffts and an irfft 180 + 10 per mode × 5 modes + update 16
    assert step_flops(8) == 8 + 180 + 50 + 16 == 254
    assert solve_flops(TINY) == 2 * 254
    assert residual_flops(TINY) == 2 * (254 + 8)


def test_solver_scaling_with_grid_and_frames() -> None:
    wide = BurgersConfig(grid=16, frames=3, lf_grid=8, modes=2)
    assert step_flops(16) == 16 + 7.5 * 16 * 4 + 10 * 9 + 32 == 618
    ratio = solve_flops(wide) / solve_flops(TINY)
    assert 2.0 < ratio < 2.0 * (1 + 1 / math.log2(8))  # X log X growth: a little over double
    long = BurgersConfig(grid=8, frames=5, lf_grid=8, modes=2)  # T − 1 doubles: steps double
    assert solve_flops(long) == 2 * solve_flops(TINY)
    assert residual_flops(long) == 2 * residual_flops(TINY)
    default = BurgersConfig()
    assert solve_flops(default) == 31 * (64 + 7.5 * 64 * 6 + 10 * 33 + 128)


def test_energy_hand_count() -> None:
    t, x = 3, 8
    prior = t * x + 2 * t * 60 + 2 * t * 5 + 2 * t * x
    assert energy_flops(TINY) == residual_flops(TINY) + 2 * (t - 1) * x + prior + 5
    noisy = energy_flops(TINY, EnergyConfig(sigma_o=0.01))
    assert noisy - energy_flops(TINY) == 4 * t * x


def test_cost_adds_scales_and_counts_a_backward_as_two_forwards() -> None:
    a, b = Cost(1, 10.0), Cost(2, 5.0)
    assert a + b == Cost(3, 15.0)
    assert 4 * a == a * 4 == Cost(4, 40.0)
    assert a.with_backward() == Cost(3, 30.0)
    assert sum([a, b], Cost()) == Cost(3, 15.0)
    with pytest.raises(ValueError, match="forwards"):
        Cost(-1, 0)
    with pytest.raises(ValueError, match="flops"):
        Cost(0, float("nan"))
    with pytest.raises(TypeError):
        a + 1  # noqa: B018


def test_bad_inputs_name_the_argument() -> None:
    with pytest.raises(ValueError, match="length"):
        unet_flops(UNetConfig(channels=(8, 8)), 15)
    with pytest.raises(ValueError, match="grid"):
        denoiser_flops(DenoiserConfig(), 63)
    with pytest.raises(TypeError, match="config"):
        denoiser_flops(UNetConfig())
    with pytest.raises(TypeError, match="config"):
        unet_flops(DenoiserConfig(), 64)
    with pytest.raises(TypeError, match="burgers_config"):
        solve_flops(64)
    with pytest.raises(TypeError, match="energy_config"):
        energy_flops(TINY, 1.0)
    with pytest.raises(ValueError, match="n"):
        rfft_flops(0)
