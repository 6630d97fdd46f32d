import json

import numpy as np
import pytest

from neurips26.llm import (
    IMAGE_TOKENS,
    ChatModel,
    Completion,
    Exchange,
    LLMReplayError,
    Message,
    Recorder,
    Replay,
    Scripted,
    Usage,
    count_prompt_tokens,
    count_tokens,
    messages_digest,
)
from neurips26.llm.offline import truncate_tokens
from tests.unit.llm import png


def echo_last(messages):
    """Answers with the last message upper-cased and how many images it saw."""
    last = messages[-1]
    return f"{last.content.upper()} ({len(last.images)} images)"


def test_count_tokens_rule():
    assert count_tokens("") == 0 and count_tokens(" \n\t ") == 0
    assert count_tokens("a bb ccc dddd") == 4  # words of at most 4 bytes cost one token each
    assert count_tokens("abcde") == 2 and count_tokens("abcdefgh") == 2 and count_tokens("abcdefghi") == 3
    assert count_tokens("ééé") == 2  # 6 UTF-8 bytes
    assert count_tokens("x  y\nz") == 3
    conv = [Message.system("one two"), Message.user("three", [png(), png()])]
    assert count_prompt_tokens(conv) == 2 + 2 + 2 * IMAGE_TOKENS
    with pytest.raises(TypeError, match="text"):
        count_tokens(b"bytes")


def test_truncate_tokens_keeps_the_longest_prefix_within_budget():
    rng = np.random.default_rng(0)
    alphabet = list("ab é\nxyz")
    for _ in range(300):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 40))))
        budget = int(rng.integers(1, 8))
        prefix, cut = truncate_tokens(text, budget)
        assert text.startswith(prefix)
        assert count_tokens(prefix) <= budget
        assert cut == (count_tokens(text) > budget)
        if cut:  # maximal: one more character would exceed the budget
            assert count_tokens(text[: len(prefix) + 1]) > budget
        else:
            assert prefix == text


def test_scripted_is_deterministic_and_applies_stop_and_max_tokens():
    model = Scripted(echo_last)
    assert isinstance(model, ChatModel)
    conv = [Message.system("sys"), Message.user("count the cubes")]
    a = model.complete(conv)
    b = model.complete(conv)
    assert a == b and a.text == "COUNT THE CUBES (0 images)" and a.finish_reason == "stop"
    assert a.usage == Usage(count_prompt_tokens(conv), count_tokens(a.text)) and a.model == "scripted"
    assert model.calls == 2
    stopped = model.complete(conv, stop=[" (", "CUBES"])
    assert stopped.text == "COUNT THE " and stopped.finish_reason == "stop"
    short = model.complete(conv, max_tokens=4)  # COUNT costs 2, THE 1, then 4 bytes of CUBES
    assert short.text == "COUNT THE CUBE" and short.finish_reason == "length"
    assert short.usage.completion_tokens == 4
    with_image = model.complete([Message.user("look", [png()])], images=[png(1, 1)])
    assert with_image.text == "LOOK (2 images)"
    assert with_image.usage.prompt_tokens == 1 + 2 * IMAGE_TOKENS


def test_scripted_passes_a_completion_through_and_checks_its_policy():
    fixed = Completion("42", Usage(1, 1), "oracle", "stop")
    assert Scripted(lambda m: fixed).complete([Message.user("q")], max_tokens=1) is fixed
    with pytest.raises(TypeError, match="policy"):
        Scripted("not callable")
    with pytest.raises(TypeError, match="policy"):
        Scripted(lambda m: 42).complete([Message.user("q")])
    with pytest.raises(ValueError, match="max_tokens"):
        Scripted(echo_last).complete([Message.user("q")], max_tokens=0)


def conversation(k: int) -> list[Message]:
    return [Message.system("You are a counter."), Message.user(f"question {k}", [png(1, 1, (k, 0, 0))])]


def test_recorder_to_replay_round_trip(tmp_path):
    recorder = Recorder(Scripted(echo_last, model="teacher"))
    live = [recorder.complete(conversation(k), temperature=0.0, max_tokens=20, stop="zz") for k in range(4)]
    assert [e.index for e in recorder.transcript] == [0, 1, 2, 3]
    assert recorder.transcript[2].digest == messages_digest(conversation(2))
    path = recorder.save(tmp_path / "run.json")

    blob = json.loads(path.read_text())
    assert blob["format"] == "neurips26.llm.transcript/1" and len(blob["exchanges"]) == 4
    assert blob["exchanges"][1]["messages"][1]["images"][0].startswith("sha256:")  # no image bytes on disk

    replay = Replay.load(path)
    assert isinstance(replay, ChatModel)
    assert [replay.complete(conversation(k)) for k in range(4)] == live
    replay.reset()
    assert replay.complete(conversation(0)) == live[0]

    by_digest = Replay.load(path, match="digest")
    assert [by_digest.complete(conversation(k)) for k in (3, 1, 0, 2)] == [live[3], live[1], live[0], live[2]]

    resaved = Replay.load(path).save(tmp_path / "again.json")
    assert json.loads(resaved.read_text()) == blob


def test_replay_in_order_detects_a_diverging_conversation(tmp_path):
    recorder = Recorder(Scripted(echo_last))
    for k in range(2):
        recorder.complete(conversation(k))
    replay = Replay(recorder.transcript)
    replay.complete(conversation(0))
    with pytest.raises(LLMReplayError, match="call 1") as info:
        replay.complete(conversation(5))
    assert "question 5" in str(info.value) and "question 1" in str(info.value)
    assert isinstance(info.value, LookupError)
    replay.complete(conversation(1))
    with pytest.raises(LLMReplayError, match="all 2 exchanges"):
        replay.complete(conversation(2))
    # a different image alone is a different conversation
    other_image = [Message.system("You are a counter."), Message.user("question 0", [png(2, 2)])]
    with pytest.raises(LLMReplayError, match="call 0"):
        Replay(recorder.transcript).complete(other_image)


def test_replay_by_digest_repeats_in_recorded_order_then_the_last():
    replies = iter(["first", "second"])
    recorder = Recorder(Scripted(lambda m: next(replies)))
    recorder.complete(conversation(0))
    recorder.complete(conversation(0))
    replay = Replay(recorder.transcript, match="digest")
    assert [replay.complete(conversation(0)).text for _ in range(3)] == ["first", "second", "second"]
    with pytest.raises(LLMReplayError, match="question 9"):
        replay.complete(conversation(9))


def test_hand_written_transcript_replays_in_order(tmp_path):
    path = tmp_path / "canned.json"
    path.write_text(json.dumps([{"completion": "plan A"}, {"completion": {"text": "plan B", "model": "h"}}]))
    replay = Replay.load(path)
    assert replay.complete([Message.user("anything")]).text == "plan A"
    assert replay.complete([Message.user("at all")]) == Completion("plan B", Usage(), "h", "stop")
    with pytest.raises(ValueError, match="digest"):
        Replay.load(path, match="digest")


def test_bad_transcripts_and_arguments_are_rejected(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.json"):
        Replay.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        Replay.load(bad)
    bad.write_text(json.dumps({"format": "something/else", "exchanges": []}))
    with pytest.raises(ValueError, match="format"):
        Replay.load(bad)
    bad.write_text(json.dumps([{"reply": "no completion key"}]))
    with pytest.raises(ValueError, match="exchange 0"):
        Replay.load(bad)
    with pytest.raises(ValueError, match="match"):
        Replay([], match="fuzzy")
    with pytest.raises(TypeError, match="transcript"):
        Replay(str(bad))
    with pytest.raises(TypeError, match=r"transcript\[0\]"):
        Replay([{"completion": "x"}])
    with pytest.raises(TypeError, match="backend"):
        Recorder(object())
    assert isinstance(Exchange(0, None, Completion("x")), Exchange)
