"""Target config, cached training, and distillation = the target's own batched greedy responses."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neurips26.nn.transformer import Decoder, DecoderConfig
from neurips26.specblock.data import tokenizer
from neurips26.specblock.decode import vanilla_generate
from neurips26.specblock.protocol import target_outputs
from neurips26.specblock.target import TargetConfig, distill, train_target


def tiny_target(seed: int = 0) -> Decoder:
    config = DecoderConfig(vocab_size=20, width=32, depth=4, heads=2, context=64)
    return Decoder(config, seed=seed).double().eval()


def test_config_scales_and_validation():
    smoke, default = TargetConfig.for_scale("smoke"), TargetConfig.for_scale("default")
    assert smoke.depth == default.depth == 4 and default.width == 128 and default.heads == 4
    assert smoke.steps < default.steps
    assert default.decoder_config().vocab_size == tokenizer().vocab_size
    with pytest.raises(ValueError, match="depth"):
        TargetConfig(depth=3)
    with pytest.raises(ValueError, match="seq_len"):
        TargetConfig(seq_len=300)
    with pytest.raises(ValueError, match="lr"):
        TargetConfig(lr=0.0)
    with pytest.raises(ValueError, match="scale"):
        TargetConfig.for_scale("huge")


def test_train_target_is_cached_and_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
    config = dataclasses.replace(TargetConfig.for_scale("smoke"), steps=3, warmup=1, documents=30)
    first = train_target(config, verbose=False, progress=False)
    second = train_target(config, verbose=False, progress=False)  # loaded from the cache
    assert any(tmp_path.iterdir())
    assert not first.training and isinstance(second, Decoder)
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    with pytest.raises(TypeError, match="config"):
        train_target("smoke")


def test_distill_matches_unbatched_greedy_decoding():
    target = tiny_target()
    gen = torch.Generator().manual_seed(0)
    prompts = [torch.randint(0, 20, (n,), generator=gen).tolist() for n in (3, 7, 1, 5, 9)]
    data = distill(target, prompts, 12, batch=2, eos_id=None, progress=False)
    assert data.tokens.shape == (5, 9 + 12)
    for i, p in enumerate(prompts):
        response = list(vanilla_generate(target, p, 12).tokens)
        row = data.tokens[i].tolist()
        assert row[: len(p) + 12] == p + response
        mask = data.loss_mask[i]
        assert mask[len(p) - 1 : len(p) + 11].all() and mask.sum() == 12  # j predicts response token j+1
    logits, hidden = target_outputs(target, data.tokens)
    torch.testing.assert_close(data.logits, logits)
    torch.testing.assert_close(data.hidden, hidden)
    assert data.hidden.shape == (5, 21, 5, 32)


def test_distill_stops_at_eos_and_pads_with_it():
    target = tiny_target(1)
    prompt = [1, 2, 3]
    free = list(vanilla_generate(target, prompt, 10).tokens)
    eos = free[3]
    cut = free[: free.index(eos) + 1]
    data = distill(target, [prompt, [4, 5]], 10, eos_id=eos, progress=False)
    row = data.tokens[0].tolist()
    assert row[: 3 + len(cut)] == prompt + cut
    assert all(t == eos for t in row[3 + len(cut) :])
    assert data.loss_mask[0].sum() == len(cut)


def test_distill_bad_inputs():
    target = tiny_target()
    with pytest.raises(ValueError, match="n_new"):
        distill(target, [[1, 2]], 0, progress=False)
    with pytest.raises(ValueError, match="prompts"):
        distill(target, [[1, 99]], 3, eos_id=None, progress=False)
    with pytest.raises(ValueError, match="prompts"):
        distill(target, [], 3, progress=False)
    with pytest.raises(ValueError, match="eos_id"):
        distill(target, [[1]], 3, eos_id=20, progress=False)
    with pytest.raises(TypeError, match="target"):
        distill("model", [[1]], 3, progress=False)
    with pytest.raises(ValueError, match="context"):
        distill(target, [[1] * 60], 10, eos_id=None, progress=False)
