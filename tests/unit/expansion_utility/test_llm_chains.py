"""Segmentation round-trips; the chat sampler asks for continuations of the kept prefix."""

import pytest

from neurips26.expansion_utility.llm_chains import ChatSampler, parse_answer, reasoning_of, segment
from neurips26.llm import Scripted

TEXT = (
    "First we add the two numbers given in the problem statement together carefully.\n"
    "12 + 30 = 42. Then 42 * 2 = 84; that doubles it as the question asks us to.\n"
    "ok\n"
    "Check: 84 / 2 = 42, which matches the sum we computed in the first step.\n"
    "Answer: 84\n"
)


def test_segmentation_round_trips_without_empty_steps():
    steps = segment(TEXT)
    assert "".join(steps) == reasoning_of(TEXT)
    assert all(s.strip() for s in steps)
    assert not any("Answer" in s for s in steps)
    assert all(len(s.split()) >= 8 for s in steps[:-1])
    assert len(steps) >= 3
    assert parse_answer(TEXT) == "84" and parse_answer("no answer here") is None
    with pytest.raises(ValueError, match="empty chain"):
        segment("Answer: 3")
    with pytest.raises(TypeError, match="text"):
        parse_answer(3)


def test_chat_sampler_keeps_the_prefix_and_parses_answers():
    seen = []

    def policy(messages):
        seen.append(messages[-1].content)
        return TEXT

    sampler = ChatSampler(Scripted(policy))
    chain = sampler.sample("What is (12 + 30) * 2?")
    assert chain.answer == "84" and len(chain.steps) >= 3
    answers = sampler.continue_from("What is (12 + 30) * 2?", chain, 2, r=3)
    assert answers == ["84"] * 3
    assert chain.steps[0].strip() in seen[-1] and chain.steps[1].strip() in seen[-1]
    assert chain.steps[2].strip() not in seen[-1]
    with pytest.raises(ValueError, match="k"):
        sampler.continue_from("q", chain, len(chain.steps) + 1, r=1)
    with pytest.raises(TypeError, match="backend"):
        ChatSampler(object())


def test_chat_sampler_through_an_openai_compatible_server(monkeypatch):
    """The same sampler on a real HTTP client: the server sees the system rule, the kept prefix and the
    temperature; the answers are parsed from its replies."""
    from tests.unit.chat_server import ChatServer, client

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    server = ChatServer()
    try:
        for _ in range(3):
            server.reply(body={"choices": [{"message": {"content": TEXT}, "finish_reason": "stop"}]})
        sampler = ChatSampler(client(server), temperature=0.7)
        chain = sampler.sample("What is (12 + 30) * 2?")
        answers = sampler.continue_from("What is (12 + 30) * 2?", chain, 1, r=2)
        assert chain.answer == "84" and answers == ["84", "84"]
        bodies = [r["body"] for r in server.requests]
        assert len(bodies) == 3 and all(b["temperature"] == 0.7 for b in bodies)
        assert (
            bodies[0]["messages"][0]["role"] == "system" and "Answer:" in bodies[0]["messages"][0]["content"]
        )
        assert chain.steps[0].strip() in bodies[1]["messages"][-1]["content"]
    finally:
        server.close()
