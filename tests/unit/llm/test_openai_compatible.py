"""OpenAICompatible end to end against a small OpenAI-compatible server on 127.0.0.1 (real HTTP)."""

import base64
import json
import socket
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from neurips26.llm import (
    ChatModel,
    LLMConfigError,
    LLMConnectionError,
    LLMHTTPError,
    LLMResponseError,
    LLMTimeoutError,
    Message,
    OpenAICompatible,
    backoff_delay,
)
from tests.unit.chat_server import ChatServer, client
from tests.unit.llm import png

KEY_VAR = "NEURIPS26_TEST_LLM_KEY"


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    s = ChatServer()
    yield s
    s.close()


def test_a_normal_reply_and_the_request_the_server_saw(server, monkeypatch):
    monkeypatch.setenv(KEY_VAR, "sk-test-123")
    server.reply()
    model = client(server, api_key_env=KEY_VAR)
    first, second = png(1, 1, (9, 9, 9)), png(2, 1)
    conv = [Message.system("Be brief."), Message.user("What is shown?", [first])]
    out = model.complete(conv, temperature=0.3, max_tokens=7, stop=["END"], images=[second])

    assert (out.text, out.model, out.finish_reason) == ("Hello there.", "served-model", "stop")
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.total_tokens) == (12, 3, 15)
    (seen,) = server.requests
    assert seen["path"] == "/v1/chat/completions"
    assert seen["headers"]["Authorization"] == "Bearer sk-test-123"
    body = seen["body"]
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.3 and body["max_tokens"] == 7 and body["stop"] == ["END"]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    text, *images = body["messages"][1]["content"]
    assert body["messages"][1]["role"] == "user"
    assert text == {"type": "text", "text": "What is shown?"}
    prefix = "data:image/png;base64,"
    urls = [part["image_url"]["url"] for part in images]
    assert [part["type"] for part in images] == ["image_url", "image_url"]
    assert all(u.startswith(prefix) for u in urls)
    assert [base64.b64decode(u[len(prefix) :]) for u in urls] == [first, second]
    assert isinstance(model, ChatModel)


def test_keyless_server_gets_no_authorization_and_no_stop(server):
    server.reply()
    client(server).complete([Message.user("hi")])
    (seen,) = server.requests
    assert "Authorization" not in seen["headers"]
    assert "stop" not in seen["body"] and seen["body"]["messages"] == [{"role": "user", "content": "hi"}]


def test_429_then_success_waits_as_retry_after_asks(server):
    server.reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.3"})
    server.reply()
    out = client(server, backoff=0.001, max_wait=2.0).complete([Message.user("hi")])
    assert out.text == "Hello there."
    assert len(server.requests) == 2
    assert server.requests[1]["t"] - server.requests[0]["t"] >= 0.29


def test_retry_after_is_capped_by_max_wait(server):
    server.reply(429, {"error": "busy"}, headers={"Retry-After": "120"})
    server.reply()
    start = time.monotonic()
    assert client(server, max_wait=0.05).complete([Message.user("hi")]).text == "Hello there."
    assert time.monotonic() - start < 2.0 and len(server.requests) == 2


def test_5xx_exhausted_raises_after_exponential_back_off(server):
    for _ in range(3):
        server.reply(503, b"<html>upstream down</html>", headers={"Content-Type": "text/html"})
    with pytest.raises(LLMHTTPError, match="3 attempt") as info:
        client(server, max_retries=2, backoff=0.05).complete([Message.user("hi")])
    assert info.value.status == 503 and "upstream down" in str(info.value)
    t = [r["t"] for r in server.requests]
    assert len(t) == 3
    assert t[1] - t[0] >= 0.045 and t[2] - t[1] >= 0.095  # waits of 0.05 then 0.1 s


def test_client_errors_are_not_retried_and_quote_the_server(server):
    server.reply(400, {"error": {"message": "max_tokens is too large for this model"}})
    with pytest.raises(LLMHTTPError, match="max_tokens is too large") as info:
        client(server).complete([Message.user("hi")])
    assert info.value.status == 400 and len(server.requests) == 1


def test_unauthorised_points_at_the_key_variable(server, monkeypatch):
    monkeypatch.setenv(KEY_VAR, "sk-wrong")
    server.reply(401, {"error": {"message": "Incorrect API key provided"}})
    with pytest.raises(LLMHTTPError, match=f"{KEY_VAR}.*Incorrect API key") as info:
        client(server, api_key_env=KEY_VAR).complete([Message.user("hi")])
    assert info.value.status == 401 and len(server.requests) == 1


def test_timeout_names_the_endpoint(server):
    server.reply(delay=3.0)
    start = time.monotonic()
    with pytest.raises(LLMTimeoutError, match="timeout") as info:
        client(server, timeout=0.2).complete([Message.user("hi")])
    assert time.monotonic() - start < 2.0
    assert server.base_url in str(info.value)
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, ConnectionError)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"<html><body>Bad Gateway from proxy</body></html>", "not JSON"),
        ({"object": "error", "detail": "nothing here"}, "choices"),
        ({"choices": []}, "choices"),
        ({"choices": [{"message": {"role": "assistant", "content": None}}]}, "content"),
        ({"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": "many"}}, "usage"),
    ],
)
def test_malformed_replies_raise_with_an_excerpt(server, body, needle):
    server.reply(200, body)
    with pytest.raises(LLMResponseError, match=needle) as info:
        client(server).complete([Message.user("hi")])
    shown = "Bad Gateway from proxy" if isinstance(body, bytes) else json.dumps(body)[:20]
    assert shown in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unreachable_endpoint_names_base_url(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with socket.socket() as s:  # a port that was just free and is now closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    model = OpenAICompatible(base_url, "m", api_key_env=None, timeout=2.0)
    with pytest.raises(LLMConnectionError, match="base_url") as info:
        model.complete([Message.user("hi")])
    assert base_url in str(info.value) and isinstance(info.value, ConnectionError)


def test_missing_api_key_names_the_variable(monkeypatch):
    monkeypatch.delenv(KEY_VAR, raising=False)
    with pytest.raises(LLMConfigError, match=KEY_VAR):
        OpenAICompatible("http://127.0.0.1:1/v1", "m", api_key_env=KEY_VAR)
    monkeypatch.setenv(KEY_VAR, "   ")
    with pytest.raises(ValueError, match=KEY_VAR):
        OpenAICompatible("http://127.0.0.1:1/v1", "m", api_key_env=KEY_VAR)
    monkeypatch.setenv(KEY_VAR, "sk-secret")
    model = OpenAICompatible("http://127.0.0.1:1/v1/", "m", api_key_env=KEY_VAR)
    assert "sk-secret" not in repr(model) and model.url == "http://127.0.0.1:1/v1/chat/completions"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"base_url": "127.0.0.1:8000/v1"}, "base_url"),
        ({"model": ""}, "model"),
        ({"api_key_env": ""}, "api_key_env"),
        ({"timeout": 0.0}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"backoff": -1.0}, "backoff"),
    ],
)
def test_constructor_arguments_are_checked(kwargs, name):
    args = {"base_url": "http://127.0.0.1:1/v1", "model": "m", "api_key_env": None} | kwargs
    with pytest.raises(ValueError, match=name):
        OpenAICompatible(**args)


def test_backoff_delay_schedule():
    assert [backoff_delay(k, backoff=0.5, max_wait=100) for k in range(4)] == [0.5, 1.0, 2.0, 4.0]
    assert backoff_delay(10, backoff=0.5, max_wait=3.0) == 3.0
    assert backoff_delay(0, backoff=0.5, max_wait=30, retry_after="7") == 7.0
    assert backoff_delay(0, backoff=0.5, max_wait=30, retry_after="120") == 30.0
    assert backoff_delay(2, backoff=0.5, max_wait=30, retry_after="soon") == 2.0  # unreadable: exponential
    assert backoff_delay(0, backoff=0.5, max_wait=30, retry_after="-3") == 0.0
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    assert 17.0 <= backoff_delay(0, backoff=0.5, max_wait=30, retry_after=when) <= 20.0
