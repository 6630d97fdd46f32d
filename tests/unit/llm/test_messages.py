import base64

import pytest

from neurips26.llm import (
    Completion,
    Message,
    Usage,
    check_messages,
    messages_digest,
    prepare_request,
    with_images,
)
from neurips26.llm.protocol import cut_at_stop
from tests.unit.llm import png


def test_message_checks_its_fields():
    with pytest.raises(ValueError, match="role"):
        Message("robot", "hi")
    with pytest.raises(TypeError, match="content"):
        Message("user", 3)
    with pytest.raises(ValueError, match=r"images\[1\]"):
        Message.user("look", [png(), b"GIF89a..."])
    with pytest.raises(TypeError, match="images must be a list"):
        Message.user("look", png())  # one image must still come in a list
    with pytest.raises(ValueError, match="user messages"):
        Message("assistant", "I drew this", (png(),))


def test_message_and_completion_round_trip_through_dicts():
    m = Message.user("what colour?", [png(rgb=(1, 2, 3)), png(3, 1)])
    d = m.to_dict()
    assert base64.b64decode(d["images"][0]) == png(rgb=(1, 2, 3))
    assert Message.from_dict(d) == m
    assert Message.from_dict(Message.system("be brief").to_dict()) == Message.system("be brief")
    c = Completion("red", Usage(10, 1), "m", "length")
    assert Completion.from_dict(c.to_dict()) == c
    with pytest.raises(ValueError, match="role"):
        Message.from_dict({"content": "x"})


def test_usage_total_is_the_sum_and_counts_are_checked():
    assert Usage(7, 5).total_tokens == 12
    assert Usage(7, 5).to_dict() == {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
    with pytest.raises(ValueError, match="prompt_tokens"):
        Usage(-1, 0)
    with pytest.raises(TypeError, match="completion_tokens"):
        Usage(0, 1.5)


def test_check_messages_names_the_bad_element():
    with pytest.raises(ValueError, match="messages"):
        check_messages([])
    with pytest.raises(TypeError, match="messages"):
        check_messages(Message.user("a lone message is not a list"))
    with pytest.raises(TypeError, match=r"messages\[1\]"):
        check_messages([Message.user("ok"), {"role": "user", "content": "a dict"}])


def test_with_images_attaches_to_the_last_user_message():
    conv = [Message.system("s"), Message.user("u", [png(1, 1)])]
    out = with_images(conv, [png(2, 2)])
    assert out[0] == conv[0]
    assert out[1].images == (png(1, 1), png(2, 2)) and out[1].content == "u"
    assert with_images(conv, None) == tuple(conv)
    with pytest.raises(ValueError, match="last message"):
        with_images([Message.user("u"), Message.assistant("a")], [png()])


def test_digest_is_stable_and_sensitive_to_every_part():
    # pinned: transcripts on disk depend on this exact value across processes, machines and versions
    # (fixed bytes, not png(): zlib builds may compress differently)
    fixed = [Message.system("You count."), Message.user("How many?", [b"\x89PNG\r\n\x1a\npinned"])]
    assert messages_digest(fixed) == PINNED_DIGEST
    conv = [Message.system("You count."), Message.user("How many?", [png()])]
    d = messages_digest(conv)
    assert messages_digest(list(conv)) == d
    variants = [
        [Message.system("You count."), Message.user("How many?!", [png()])],
        [Message.system("You count."), Message.user("How many?", [png(rgb=(0, 0, 0))])],
        [Message.system("You count."), Message.user("How many?")],
        [Message.user("You count."), Message.user("How many?", [png()])],
        [Message.user("How many?", [png()]), Message.system("You count.")],
    ]
    assert len({messages_digest(v) for v in variants} | {d}) == len(variants) + 1


PINNED_DIGEST = "691ecba9b6ffd36029c370ed7da3f48b44613f39a70e76982ec6935b45879f57"


def test_prepare_request_checks_and_normalises():
    conv = [Message.user("q")]
    r = prepare_request(conv, temperature=0.5, max_tokens=3, stop="END", images=[png()])
    assert r.stop == ("END",) and r.max_tokens == 3 and r.temperature == 0.5
    assert r.messages[-1].images == (png(),)
    assert prepare_request(conv).stop == ()
    assert prepare_request(conv, stop=["a", "b"]).stop == ("a", "b")
    with pytest.raises(ValueError, match="temperature"):
        prepare_request(conv, temperature=-0.1)
    with pytest.raises(ValueError, match="temperature"):
        prepare_request(conv, temperature=2.5)
    with pytest.raises(ValueError, match="max_tokens"):
        prepare_request(conv, max_tokens=0)
    with pytest.raises(ValueError, match="stop"):
        prepare_request(conv, stop=["ok", ""])
    with pytest.raises(TypeError, match="stop"):
        prepare_request(conv, stop=5)


def test_cut_at_stop_cuts_at_the_earliest_stop_string():
    assert cut_at_stop("abc END def STOP", ["STOP", "END"]) == ("abc ", True)
    assert cut_at_stop("nothing here", ["STOP"]) == ("nothing here", False)
    assert cut_at_stop("x", []) == ("x", False)
