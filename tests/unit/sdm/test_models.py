"""Layers and models: shapes, solver equivalence, the window mask, the counters against hand counts, the
matching of parameters and multiply-adds, bad arguments."""

import pytest
import torch

from neurips26.sdm.gdn import GatedDeltaNet
from neurips26.sdm.mamba2 import Mamba2
from neurips26.sdm.models import (
    BASE_MLP,
    REFERENCE,
    WIDTH,
    MixerSpec,
    RecallModel,
    flops_per_token,
    non_memory_parameters,
    param_table,
    state_floats,
    window_mask,
    with_solver,
)
from neurips26.sdm.sdm import SparseDeltaMemory

TOKENS = torch.randint(0, 96, (3, 17), generator=torch.Generator().manual_seed(0))


def test_window_mask_sees_the_current_token_and_the_seven_before():
    mask = window_mask(12, 8)
    for t in range(12):
        assert mask[t].nonzero().flatten().tolist() == list(range(max(0, t - 7), t + 1))
    with pytest.raises(ValueError, match="window"):
        window_mask(5, 0)


@pytest.mark.parametrize(
    "spec",
    [
        MixerSpec("gdn"),
        MixerSpec("sdm"),
        MixerSpec("sdm", memory="zero", batchnorm=False),
        MixerSpec("mamba2"),
        MixerSpec("attention", heads=4),
        MixerSpec("gdn", learned_state=True),
    ],
)
def test_models_run_and_are_causal(spec):
    model = RecallModel(spec, seed=1).eval()
    with torch.no_grad():
        logits = model(TOKENS)
        changed = TOKENS.clone()
        changed[:, 10:] = (changed[:, 10:] + 1) % 96
        again = model(changed)
    assert logits.shape == (3, 17, 96)
    assert torch.allclose(logits[:, :10], again[:, :10], atol=1e-5)  # the future does not leak


@pytest.mark.parametrize(
    ("spec", "solvers"),
    [
        (MixerSpec("sdm"), ("loop", "parallel")),
        (MixerSpec("gdn"), ("recurrent", "parallel")),
        (MixerSpec("mamba2"), ("recurrent", "parallel")),
    ],
)
def test_training_solvers_give_the_same_model(spec, solvers):
    model = RecallModel(spec, seed=2).eval()
    outs = []
    for solver in solvers:
        with torch.no_grad():
            outs.append(with_solver(model, solver)(TOKENS))
    assert (outs[0] - outs[1]).abs().max() < 1e-4


def test_same_seed_same_weights_and_the_learned_table_matters():
    a, b = RecallModel(REFERENCE, seed=3), RecallModel(REFERENCE, seed=3)
    assert all(
        torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    )
    a.eval()
    with torch.no_grad():
        assert not torch.allclose(a(TOKENS), a(TOKENS, zero_state=True))


def test_counters_equal_hand_counts():
    D = WIDTH
    sdm = SparseDeltaMemory(D, 2, 256, 8, 8)
    gdn = GatedDeltaNet(D, 2, 8, 32)
    assert sdm.state_floats() == 2 * 256 * 32 == 32 * gdn.state_floats() and gdn.state_floats() == 2 * 8 * 32
    assert sdm.recurrence_macs() == 2 * (3 * 8 + 8) * 32 == gdn.recurrence_macs() == 4 * 2 * 8 * 32
    assert sdm.addressing_ops() == 2 * 2 * (2 * 16 + 8 * 8)
    # projections v, gate, out (D x D) and write, read (D x H·2n), with bias; α and β heads; A_log, dt_bias;
    # the readings' LayerNorm; BatchNorm of the scores adds a gain and a bias per score
    hand = 3 * (D * D + D) + 2 * (D * 64 + 64) + 2 * (D * 2 + 2) + 2 + 2 + 2 * 32
    assert sum(p.numel() for n, p in sdm.named_parameters() if n != "memory") == hand
    with_bn = SparseDeltaMemory(D, 2, 256, 8, 8, batchnorm=True)
    assert sum(p.numel() for n, p in with_bn.named_parameters() if n != "memory") == hand + 2 * 2 * 64
    assert sdm.memory.numel() == 2 * 256 * 32
    mamba = Mamba2(D, 2, 8)
    assert mamba.state_floats() == 2 * 32 * 8 and mamba.recurrence_macs() == 3 * 2 * 32 * 8
    model = RecallModel(MixerSpec("gdn"))
    flops = flops_per_token(model)
    assert flops["recurrence"] == 2048 and flops["head"] == D * 96
    assert flops["mlp"] == 2 * D * model.global_block.mlp.fc.out_features
    assert flops["total"] == sum(v for k, v in flops.items() if k != "total")
    assert state_floats(RecallModel(MixerSpec("attention", heads=4)), length=59) == 2 * 59 * D


def test_every_model_matches_the_reference_within_five_percent():
    reference = RecallModel(REFERENCE)
    ref_params, ref_macs = non_memory_parameters(reference), flops_per_token(reference)["total"]
    assert reference.global_block.mlp.fc.out_features == BASE_MLP
    for spec in (
        MixerSpec("gdn"),
        MixerSpec("mamba2"),
        MixerSpec("attention", heads=4),
        MixerSpec("sdm", slots=64),
        MixerSpec("sdm", slots=1024),
        MixerSpec("sdm", batchnorm=False),
        MixerSpec("gdn", learned_state=True),
    ):
        model = RecallModel(spec)
        assert abs(non_memory_parameters(model) / ref_params - 1) < 0.01, spec
        assert abs(flops_per_token(model)["total"] / ref_macs - 1) < 0.05, spec
    table = param_table(RecallModel(REFERENCE))
    assert table["memory"] == 2 * 256 * 32 and table["non_memory"] == ref_params
    assert param_table(RecallModel(MixerSpec("gdn", learned_state=True)))["memory"] == 2 * 32 * 8


def test_bad_arguments():
    with pytest.raises(ValueError, match="slots"):
        SparseDeltaMemory(64, 2, 200, 8, 8)
    with pytest.raises(ValueError, match="writes"):
        SparseDeltaMemory(64, 2, 64, 65, 8)
    with pytest.raises(ValueError, match="reads"):
        SparseDeltaMemory(64, 2, 64, 8, 0)
    with pytest.raises(ValueError, match="heads"):
        SparseDeltaMemory(64, 3, 64, 8, 8)
    with pytest.raises(ValueError, match="heads"):
        GatedDeltaNet(64, 5, 8, 32)
    with pytest.raises(ValueError, match="memory"):
        SparseDeltaMemory(64, 2, 64, 8, 8, memory="random")
    with pytest.raises(TypeError, match="batchnorm"):
        SparseDeltaMemory(64, 2, 64, 8, 8, batchnorm=1)
    with pytest.raises(ValueError, match="kind"):
        MixerSpec("lstm")
    with pytest.raises(TypeError, match="spec"):
        RecallModel("sdm")
    with pytest.raises(ValueError, match="window"):
        RecallModel(MixerSpec("gdn"), window=0)
    with pytest.raises(TypeError, match="x"):
        SparseDeltaMemory(64, 2, 64, 8, 8)([1.0])
    with pytest.raises(ValueError, match="tokens"):
        RecallModel(MixerSpec("gdn"))(torch.zeros(3, dtype=torch.long))
