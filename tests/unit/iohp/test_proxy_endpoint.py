"""Proxy inference through a real OpenAI-compatible endpoint: the server answers as the offline oracle would
(computed from the request body alone), so the endpoint path must give the oracle's proxies; a malformed
first reply is retried once with the errors quoted, and a second failure falls back to the defaults."""

from neurips26.iohp.initial import initial_layout
from neurips26.iohp.proxy import ProxyOracle, default_proxies, infer_proxies, proxy_oracle
from neurips26.iohp.rooms import sample_room
from neurips26.llm import Message
from tests.unit.chat_server import ChatServer, chat_server, client, completion  # noqa: F401


def _layout():
    room, furniture = sample_room("office", 101, density="medium")
    return initial_layout(room, furniture, 101)


def test_the_endpoint_path_gives_the_oracles_proxies(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    oracle = ProxyOracle()

    def answer(body: dict) -> str:
        messages = [Message(m["role"], m["content"]) for m in body["messages"]]
        return oracle(messages)

    server = ChatServer(answer=answer)
    try:
        layout = _layout()
        got = infer_proxies(layout, client(server))
        assert got.proxies == infer_proxies(layout, proxy_oracle()).proxies == default_proxies(layout)
        assert got.counts == {"replies": 1, "retries": 0, "fallbacks": 0}
        body = server.requests[0]["body"]
        assert body["temperature"] == 0.0
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
    finally:
        server.close()


def test_a_malformed_reply_is_retried_then_falls_back(chat_server):  # noqa: F811
    layout = _layout()
    chat_server.reply(body=completion("Sure! Chairs are for sitting."))
    chat_server.reply(body=completion('{"answers": [{"object": "nothing"}]}', 2))
    got = infer_proxies(layout, client(chat_server))
    assert got.counts == {"replies": 2, "retries": 1, "fallbacks": layout.n}
    assert got.proxies == default_proxies(layout)
    retry = chat_server.requests[1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "Sure! Chairs are for sitting."
