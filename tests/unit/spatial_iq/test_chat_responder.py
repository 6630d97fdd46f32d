"""Any chat model as a responder: the requests a real OpenAI-compatible server sees, the parsing of its
replies, and the offline default (the tiny VLM behind the chat interface) agreeing with asking it directly."""

import numpy as np
import pytest

from neurips26.spatial_iq.chat_responder import VLMResponder, read_view_png, tiny_vlm_chat, view_png
from neurips26.spatial_iq.dataset import build
from neurips26.spatial_iq.evaluate import ask
from neurips26.spatial_iq.formats import QUESTIONS
from neurips26.spatial_iq.training import new_model


@pytest.fixture(scope="module")
def data():
    return build(range(3))


def test_png_round_trip_is_the_8_bit_image(data):
    img = data.images[0]
    back = read_view_png(view_png(img))
    np.testing.assert_allclose(back, np.round(img * 255) / 255, atol=1e-6)
    with pytest.raises(ValueError, match="image"):
        view_png(np.zeros((4, 4)))


def test_through_an_openai_compatible_server(data, monkeypatch):
    from tests.unit.chat_server import ChatServer, client

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    server = ChatServer()
    try:
        for text in ("There are 7 blocks.", "Cans", "no idea", "3 then 4"):
            server.reply(body={"choices": [{"message": {"content": text}, "finish_reason": "stop"}]})
        responder = VLMResponder(client(server))
        assert responder.ask(data, 0, "T1") == 7
        assert responder.ask(data, 0, "S1") == "can"
        assert responder.ask(data, 1, "S5") == -1 and responder.unreadable == 1
        assert responder.ask(data, 2, "T2a") == 4
        bodies = [r["body"] for r in server.requests]
        assert len(bodies) == 4 and all(b["temperature"] == 0.0 for b in bodies)
        content = bodies[0]["messages"][-1]["content"]
        texts = [p["text"] for p in content if p["type"] == "text"]
        images = [p for p in content if p["type"] == "image_url"]
        assert QUESTIONS["T1"] in texts[0] and len(images) == 1
        assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")
        last = bodies[3]["messages"][-1]["content"]
        assert len([p for p in last if p["type"] == "image_url"]) == 2  # rotation: two views
    finally:
        server.close()


def test_the_offline_default_is_the_tiny_vlm(data):
    model = new_model(seed=3)
    responder = VLMResponder(tiny_vlm_chat(model))
    for task in ("T1", "S5", "T2b"):
        via_chat = np.array([responder.ask(data, r, task) for r in range(len(data))])
        direct = ask(model, data, task)
        assert np.mean(via_chat == direct) >= 0.9, task  # PNGs round pixels to 8 bits
    with pytest.raises(TypeError, match="backend"):
        VLMResponder(model)
    with pytest.raises(TypeError, match="model"):
        tiny_vlm_chat("backbone")
