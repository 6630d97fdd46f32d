"""A local OpenAI-compatible chat-completions endpoint for tests (real HTTP on 127.0.0.1).

Chapters that query a model through ``neurips26.llm.OpenAICompatible`` test that path against it: either
with replies scripted in order (:meth:`ChatServer.reply`), or with an ``answer`` function that computes each
reply's text from the request body. Every request is recorded (path, headers, JSON body, arrival time).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from neurips26.llm import OpenAICompatible

OK = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "served-model",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Hello there."}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
}
"""A well-formed chat completion: the default scripted reply."""


def completion(text: str, number: int = 1) -> dict:
    """A chat completion whose one choice says ``text``."""
    return OK | {
        "id": f"chatcmpl-{number}",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }


class ChatServer:
    """Answers POSTs with the scripted replies in order (an unscripted request gets a 500), or, when built
    with ``answer``, with ``answer(request body)`` as the reply's text; records every request it saw."""

    def __init__(self, answer: Callable[[dict], str] | None = None) -> None:
        self.replies: deque[tuple[int, dict[str, str], bytes, float]] = deque()
        self.requests: list[dict] = []
        self.answer = answer
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body, "t": time.monotonic()}
                )
                if server.answer is not None:
                    blob = json.dumps(completion(server.answer(body), len(server.requests))).encode()
                    status, headers, delay = 200, {"Content-Type": "application/json"}, 0.0
                elif server.replies:
                    status, headers, blob, delay = server.replies.popleft()
                else:
                    status, headers, blob, delay = 500, {}, b"no scripted reply", 0.0
                if delay:
                    server.release.wait(delay)
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(blob)))
                    self.end_headers()
                    self.wfile.write(blob)
                except OSError:  # the client gave up (timeout tests)
                    pass

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, status: int = 200, body: dict | bytes = OK, headers=None, delay: float = 0.0) -> None:
        """Script the next reply: a JSON body (or raw bytes), its status, extra headers and a delay."""
        blob = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **(headers or {})}
        self.replies.append((status, headers, blob, delay))

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def client(server: ChatServer, **kwargs) -> OpenAICompatible:
    """An OpenAICompatible client of ``server`` with short timeouts and back-off (overridable)."""
    kwargs = {
        "api_key_env": None,
        "timeout": 5.0,
        "max_retries": 2,
        "backoff": 0.001,
        "max_wait": 1.0,
    } | kwargs
    return OpenAICompatible(server.base_url, "test-model", **kwargs)


@pytest.fixture
def chat_server(monkeypatch) -> Iterator[ChatServer]:
    """A scripted :class:`ChatServer`, with the local address kept off any proxy; closed after the test."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    s = ChatServer()
    yield s
    s.close()
