"""Tests of VLMRegionReward: score parsing, PNGs, the questions, end to end against a local
OpenAI-compatible chat server (real HTTP), and the offline oracle judge against the oracle."""

import base64
import dataclasses
import io
import re

import pytest
import torch
from PIL import Image

from neurips26.llm import Message, OpenAICompatible, Scripted
from neurips26.spatialflow_grpo.editworld import COLOUR_NAMES, K_MAX, decode_instruction, sample_cases
from neurips26.spatialflow_grpo.reward import region_rewards
from neurips26.spatialflow_grpo.vlm_reward import (
    SYSTEM_PROMPT,
    VLMRegionReward,
    image_png,
    oracle_chat,
    parse_score,
    read_png,
    region_question,
)
from tests.unit.chat_server import ChatServer


def scripted_answer(body: dict) -> str:
    """Edit questions: the new colour's palette index (in several reply styles); Ω₀: unparseable."""
    text = body["messages"][-1]["content"][0]["text"]
    match = re.search(r"now have the colour (\w+)", text)
    if match is None:
        return "I am not sure about that."
    index = COLOUR_NAMES.index(match[1])
    return ("{}", "{}/10", "Score: {}.5", " {} out of 10")[index % 4].format(index)


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    s = ChatServer(scripted_answer)
    yield s
    s.close()


@pytest.fixture(scope="module")
def batch():
    return sample_cases(12, 5)


def quantised(x: torch.Tensor) -> torch.Tensor:
    return torch.round(x * 255) / 255


def test_parse_score_reads_the_first_number_in_range():
    assert parse_score("7") == 7.0
    assert parse_score("7/10") == 7.0
    assert parse_score("Score: 7.5") == 7.5
    assert parse_score(" 10 out of 10") == 10.0
    assert parse_score("0") == 0.0
    for text in ("", "seven", "11", "-3", "100%"):
        assert parse_score(text) is None
    with pytest.raises(TypeError, match="text"):
        parse_score(7)


def test_png_round_trip_is_8_bit_and_upscaled(batch):
    image = batch.target[0]
    data = image_png(image, upscale=8)
    assert data.startswith(b"\x89PNG")
    assert Image.open(io.BytesIO(data)).size == (128, 128)
    back = torch.from_numpy(read_png(data)).float()
    assert torch.allclose(back, quantised(image), atol=1e-6)
    with pytest.raises(ValueError, match="image"):
        image_png(batch.target[:2])


def test_questions_name_the_colours(batch):
    row = int(torch.nonzero(batch.n_clauses == 2)[0])
    first = region_question(batch, row, 1)
    assert f'"{batch.text[row]}"' in first and "square that was" in first
    assert "everything else" in region_question(batch, row, 0)
    with pytest.raises(ValueError, match="slot"):
        region_question(batch, row, 3)
    with pytest.raises(ValueError, match="row"):
        region_question(batch, len(batch), 0)


def test_one_request_per_valid_region_with_images_and_scores_in_their_slots(server, batch):
    backend = OpenAICompatible(server.base_url, "test-vlm", api_key_env=None, timeout=5.0, max_retries=0)
    reward = VLMRegionReward(backend, fallback=0.25)
    edited = batch.target.clone()
    edited[0, :, :4] = 0.0  # the edit differs from the source and the target
    scores = reward(edited, batch)
    valid = batch.region_valid
    assert scores.shape == (len(batch), K_MAX + 1)
    assert len(server.requests) == int(valid.sum()) == reward.requests
    assert reward.failures == len(batch)  # every Ω₀ reply is unparseable
    assert torch.equal(scores[:, 0], torch.full((len(batch),), 0.25))
    assert (scores[~valid] == 0).all()
    prefix = "data:image/png;base64,"
    seen = iter(server.requests)
    for row in range(len(batch)):
        for slot in valid[row].nonzero()[:, 0].tolist():
            body = next(seen)["body"]
            assert body["temperature"] == 0.0 and body["max_tokens"] == 8
            system, user = body["messages"]
            assert system == {"role": "system", "content": SYSTEM_PROMPT}
            text, *images = user["content"]
            assert text == {"type": "text", "text": region_question(batch, row, slot)}
            pngs = [base64.b64decode(part["image_url"]["url"][len(prefix) :]) for part in images]
            assert pngs == [image_png(batch.source[row]), image_png(edited[row])]
            if slot:
                new = COLOUR_NAMES.index(decode_instruction(batch.instruction[row])[slot - 1][1])
                expected = (new + (0.5 if new % 4 == 2 else 0.0)) / 10
                assert scores[row, slot].item() == pytest.approx(expected)


def test_offline_judge_reproduces_the_oracle(batch):
    g = torch.Generator().manual_seed(1)
    amount = torch.rand(len(batch), 1, 1, 1, generator=g)
    edited = (batch.target + 0.2 * amount * torch.randn(batch.target.shape, generator=g)).clamp(0, 1)
    edited[1] = batch.source[1]  # an unedited case: the instructed squares fail
    reward = VLMRegionReward(oracle_chat())
    # On 8-bit images (what the PNGs carry) the only error is the rounding to a whole score.
    q_batch = dataclasses.replace(batch, source=quantised(batch.source))
    q_edit = quantised(edited)
    gap = (reward(q_edit, q_batch) - region_rewards(q_edit, q_batch)).abs()
    assert gap.max() <= 0.05 + 1e-6
    # On the float images the 8-bit quantisation adds at most ≈0.01.
    assert (reward(edited, batch) - region_rewards(edited, batch)).abs().max() <= 0.06
    fine = VLMRegionReward(oracle_chat(decimals=6), max_tokens=16)
    assert torch.allclose(fine(q_edit, q_batch), region_rewards(q_edit, q_batch), atol=1e-5)
    assert reward.failures == 0 and fine.failures == 0
    target = reward(batch.target, batch)
    assert torch.equal(target, batch.region_valid.float())


def test_offline_judge_declines_other_questions():
    judge = oracle_chat()
    assert isinstance(judge, Scripted)
    assert judge.complete([Message.user("What is 2 + 2?")]).text == "I cannot tell."


def test_bad_arguments(batch):
    with pytest.raises(TypeError, match="backend"):
        VLMRegionReward("model")
    with pytest.raises(ValueError, match="fallback"):
        VLMRegionReward(oracle_chat(), fallback=2.0)
    with pytest.raises(ValueError, match="max_tokens"):
        VLMRegionReward(oracle_chat(), max_tokens=0)
    reward = VLMRegionReward(oracle_chat())
    with pytest.raises(ValueError, match="edited"):
        reward(batch.target[:2], batch)
    with pytest.raises(TypeError, match="batch"):
        reward(batch.target, None)
    with pytest.raises(ValueError, match="decimals"):
        oracle_chat(decimals=-1)
