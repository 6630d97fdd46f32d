"""The tiny VLM and its training: cached generation equals the full forward pass, log-probabilities agree,
SFT fits a batch, the GRPO pieces (reward, k3, leave-one-out, asymmetric clip) and a short run."""

import numpy as np
import pytest
import torch

from neurips26.rl import clipped_surrogate, group_advantages
from neurips26.spatial_iq.dataset import build
from neurips26.spatial_iq.evaluate import answer_sheet
from neurips26.spatial_iq.tokens import ANSWER, EOS, PAD, chain_answer, question, value_token
from neurips26.spatial_iq.training import (
    GRPOConfig,
    SFTRecipe,
    grpo,
    k3,
    new_model,
    reward,
    sft,
    warmup_split,
)
from neurips26.spatial_iq.vlm import TinyVLM, VLMConfig, answer_loss, completion_logprobs, generate


@pytest.fixture(scope="module")
def data():
    return build(range(6))


def test_size_and_bad_input():
    m = TinyVLM()
    assert 120_000 < sum(p.numel() for p in m.parameters()) < 150_000
    with pytest.raises(ValueError, match="images"):
        m.image_tokens(torch.zeros(2, 3, 48, 48, 3))
    with pytest.raises(ValueError, match="channels"):
        VLMConfig(channels=(16, 32))


@pytest.mark.parametrize("images", [1, 2])
def test_cached_generation_equals_the_full_forward_pass(images):
    m = new_model(seed=1)
    g = torch.Generator().manual_seed(0)
    img = torch.rand(3, images, 48, 48, 3, generator=g)
    prompt = torch.tensor([question("T1")] * 3)
    out = generate(m, img, prompt, max_new=6)
    full = m(img, prompt, out[:, :-1]).argmax(-1)
    assert torch.equal(full, out)
    lp = completion_logprobs(m, img, prompt, out)
    logits = m(img, prompt, out[:, :-1])
    ref = torch.log_softmax(logits, -1).gather(-1, out[..., None])[..., 0]
    torch.testing.assert_close(lp, ref, atol=1e-5, rtol=1e-5)


def test_sampling_is_seeded():
    m = new_model(seed=2)
    img = torch.rand(4, 1, 48, 48, 3, generator=torch.Generator().manual_seed(1))
    prompt = torch.tensor([question("T1")] * 4)
    a = generate(m, img, prompt, strategy="temperature", generator=torch.Generator().manual_seed(7))
    b = generate(m, img, prompt, strategy="temperature", generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b)


def test_sft_fits_a_batch(data):
    m = new_model(seed=3)
    log = sft(m, data, "cot", SFTRecipe(steps=60, batch=8, lr=3e-3), rows=np.arange(4))
    assert log.loss[-1] < 0.3 * log.loss[0]
    ans = torch.tensor([chain_answer(data.labels[0].answers)])
    assert (
        float(answer_loss(m, torch.as_tensor(data.images[:1, None]), torch.tensor([question("T1")]), ans))
        < 1.0
    )


def test_reward_gate_and_shaping():
    cfg = GRPOConfig()
    replies = torch.tensor(
        [
            [ANSWER, value_token(10), EOS],  # exact
            [ANSWER, value_token(12), EOS],  # off by 2
            [ANSWER, value_token(20), EOS],  # far
            [value_token(10), EOS, PAD],  # malformed: the gate zeroes it
        ]
    )
    r = reward(replies, np.array([10, 10, 10, 10]), cfg)
    np.testing.assert_allclose(r, [1.0, 0.1 + 0.9 * 0.5, 0.1, 0.0])


def test_grpo_pieces():
    rewards = torch.tensor([[1.0, 0.0, 0.5, 0.5], [0.2, 0.2, 0.2, 0.9]])
    adv = group_advantages(rewards, leave_one_out=True, clip=None)
    torch.testing.assert_close(adv.sum(1) * rewards.std(1, correction=0), torch.zeros(2), atol=1e-5, rtol=0)
    # the clip is asymmetric: a positive advantage stops at 1.28, a negative one at 0.8
    lr = torch.log(torch.tensor([2.0, 0.5]))
    pos = clipped_surrogate(lr, torch.ones(2), 0.2, 0.28)
    neg = clipped_surrogate(lr, -torch.ones(2), 0.2, 0.28)
    torch.testing.assert_close(pos, torch.tensor([1.28, 0.5]))
    torch.testing.assert_close(neg, torch.tensor([-2.0, -0.8]))
    a = torch.tensor([-1.0, -2.0, 0.0])
    assert torch.equal(k3(a, a), torch.zeros(3))
    assert (k3(a, a + 0.5) > 0).all() and float(k3(torch.tensor([0.0]), torch.tensor([50.0]))) == 10.0


def test_a_short_grpo_run_moves_the_policy(data):
    m = new_model(seed=4)
    sft(m, data, "cot", SFTRecipe(steps=30, batch=16))
    ref = new_model(seed=4)
    ref.load_state_dict(m.state_dict())
    before = [p.clone() for p in m.parameters()]
    log = grpo(m, ref, data, np.arange(len(data)), GRPOConfig(steps=2, prompts=2, group=4, updates=2))
    assert len(log.reward) == 2 and all(0.0 <= r <= 1.0 for r in log.reward)
    assert all(d >= 1 for d in log.draws)
    assert any(not torch.equal(a, b) for a, b in zip(before, m.parameters(), strict=True))
    with pytest.raises(TypeError, match="reference"):
        grpo(m, None, data, np.arange(4), GRPOConfig(steps=1))


def test_protocols(data):
    m = new_model(seed=5)
    paper = answer_sheet(m, data, "plain", "paper")
    assert "T2a" not in paper and set(paper) >= {"S1", "S5", "T1"}
    separate = answer_sheet(m, data, "cot", "separate")
    assert "T2a" in separate and len(separate["T1"]) == len(data)
    cot = answer_sheet(m, data, "cot", "paper")
    assert set(cot) >= {"S2", "S9", "hidden", "T1"} and "T2a" not in cot
    with pytest.raises(ValueError, match="protocol"):
        answer_sheet(m, data, "plain", "strict")
    w, r = warmup_split(100, 0.1)
    assert len(w) == 10 and len(r) == 90 and not set(w) & set(r)
