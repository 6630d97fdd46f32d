"""A client for any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp, hosted APIs).

:class:`OpenAICompatible` POSTs the conversation as JSON to ``{base_url}/chat/completions`` and
reads ``choices[0].message.content`` back. Images travel inside the user message as ``data:`` URLs
in the OpenAI content-parts format, so a vision-language model served this way sees them.

Failures are reported, never hidden:

- HTTP 429 (rate limited) and 5xx (server trouble) are retried up to ``max_retries`` times, waiting
  ``backoff * 2**k`` seconds before retry ``k + 1`` or, when the server sends ``Retry-After``, that
  long; every wait is capped at ``max_wait`` (:func:`backoff_delay`). There is no random jitter, so
  the schedule is reproducible.
- An unreachable endpoint raises :class:`~neurips26.llm.protocol.LLMConnectionError` naming
  ``base_url``; no answer within ``timeout`` raises :class:`~neurips26.llm.protocol.LLMTimeoutError`;
  another error status raises :class:`~neurips26.llm.protocol.LLMHTTPError`; a reply that is not
  JSON or has no choices raises :class:`~neurips26.llm.protocol.LLMResponseError` quoting its start.
- The API key is read from the environment variable ``api_key_env`` when the client is built (a
  missing variable is an error naming it); ``api_key_env=None`` sends no key, for local servers.
"""

from __future__ import annotations

import base64
import email.utils
import json
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import requests

from neurips26.llm.messages import Completion, Message, Usage
from neurips26.llm.protocol import (
    LLMConfigError,
    LLMConnectionError,
    LLMHTTPError,
    LLMResponseError,
    LLMTimeoutError,
    Request,
    excerpt,
    prepare_request,
)
from neurips26.validation import check_float, check_int


def is_retryable(status: int) -> bool:
    """HTTP statuses worth retrying: 429 Too Many Requests and every 5xx."""
    return status == 429 or 500 <= status <= 599


def backoff_delay(attempt: int, *, backoff: float, max_wait: float, retry_after: str | None = None) -> float:
    """Seconds to wait after failed attempt ``attempt`` (0-based) before the next one.

    ``min(max_wait, R)`` where ``R`` is the server's ``Retry-After`` (delta-seconds or an HTTP date)
    when it is present and readable, else ``backoff * 2**attempt``.
    """
    wait = backoff * 2.0**attempt
    if retry_after is not None:
        value = retry_after.strip()
        try:
            wait = float(value)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                pass  # unreadable header: keep the exponential schedule
            else:
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                wait = (when - datetime.now(UTC)).total_seconds()
    return min(max_wait, max(0.0, wait))


def image_part(image: bytes) -> dict[str, Any]:
    """One PNG image as an OpenAI content part with a ``data:`` URL."""
    url = "data:image/png;base64," + base64.b64encode(image).decode("ascii")
    return {"type": "image_url", "image_url": {"url": url}}


def message_payload(message: Message) -> dict[str, Any]:
    """A message in the chat-completions format: plain text, or text and image parts."""
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts = [{"type": "text", "text": message.content}, *(image_part(i) for i in message.images)]
    return {"role": message.role, "content": parts}


def chat_payload(model: str, request: Request) -> dict[str, Any]:
    """The JSON body of a ``/chat/completions`` call (``stop`` only when given)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [message_payload(m) for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def parse_completion(data: object, *, model: str, source: str) -> Completion:
    """Read a chat-completions reply (already decoded from JSON) into a :class:`Completion`."""
    shown = excerpt(json.dumps(data, ensure_ascii=False, default=str))
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMResponseError(f"reply from {source} has no 'choices': {shown!r}")
    choice = choices[0]
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers answer in content parts too
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise LLMResponseError(f"reply from {source} has no text in choices[0].message.content: {shown!r}")
    usage = data.get("usage") or {}
    try:
        counts = Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (AttributeError, TypeError, ValueError) as exc:
        raise LLMResponseError(f"reply from {source} has a malformed 'usage': {shown!r}") from exc
    reason = choice.get("finish_reason")
    return Completion(
        text=content,
        usage=counts,
        model=str(data.get("model") or model),
        finish_reason=reason if isinstance(reason, str) else None,
    )


class OpenAICompatible:
    """A :class:`~neurips26.llm.protocol.ChatModel` behind an OpenAI-compatible HTTP endpoint.

    ``base_url`` is the API root, e.g. ``"http://127.0.0.1:8000/v1"`` for a local vLLM server or
    ``"https://api.openai.com/v1"``; ``model`` is the name the server knows the model by.
    ``timeout`` bounds the connection and each read (seconds); ``max_retries``, ``backoff`` and
    ``max_wait`` set the retry schedule of :func:`backoff_delay`.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_wait: float = 30.0,
    ) -> None:
        if not isinstance(base_url, str):
            raise TypeError(f"base_url must be a str; got {type(base_url).__name__}")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://; got {base_url!r}")
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be a non-empty str; got {model!r}")
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env):
            raise ValueError(
                f"api_key_env must be the name of an environment variable or None; got {api_key_env!r}"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = check_float("timeout", timeout, minimum=0.0, strict_min=True)
        self.max_retries = check_int("max_retries", max_retries, minimum=0)
        self.backoff = check_float("backoff", backoff, minimum=0.0)
        self.max_wait = check_float("max_wait", max_wait, minimum=0.0)
        self._api_key: str | None = None
        if api_key_env is not None:
            key = os.environ.get(api_key_env, "").strip()
            if not key:
                raise LLMConfigError(
                    f"OpenAICompatible needs an API key in the environment variable {api_key_env}, which is "
                    f"not set; set it, or pass api_key_env=None for a server that needs no key"
                )
            self._api_key = key
        self._session = requests.Session()

    @property
    def url(self) -> str:
        """The endpoint every call is POSTed to."""
        return self.base_url + "/chat/completions"

    def __repr__(self) -> str:  # never shows the key
        key = self.api_key_env
        return f"OpenAICompatible(base_url={self.base_url!r}, model={self.model!r}, api_key_env={key!r})"

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._session.close()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: str | Sequence[str] | None = None,
        images: Sequence[bytes] | None = None,
    ) -> Completion:
        """One chat completion over HTTP (see :class:`~neurips26.llm.protocol.ChatModel`)."""
        request = prepare_request(
            messages, temperature=temperature, max_tokens=max_tokens, stop=stop, images=images
        )
        response = self._post(chat_payload(self.model, request))
        try:
            data = response.json()
        except ValueError as exc:
            raise LLMResponseError(f"reply from {self.url} is not JSON: {excerpt(response.text)!r}") from exc
        return parse_completion(data, model=self.model, source=self.url)

    def _post(self, body: dict[str, Any]) -> requests.Response:
        """POST ``body``, retrying 429/5xx answers on the back-off schedule; return the 2xx response."""
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        for attempt in range(self.max_retries + 1):
            try:
                response = self._session.post(self.url, json=body, headers=headers, timeout=self.timeout)
            except requests.Timeout as exc:
                raise LLMTimeoutError(
                    f"no reply from {self.url} within timeout={self.timeout} s (base_url={self.base_url!r})"
                ) from exc
            except requests.RequestException as exc:
                raise LLMConnectionError(
                    f"cannot reach the chat endpoint at base_url={self.base_url!r}: {excerpt(str(exc))}"
                ) from exc
            if response.ok:
                return response
            if not is_retryable(response.status_code) or attempt == self.max_retries:
                break
            time.sleep(
                backoff_delay(
                    attempt,
                    backoff=self.backoff,
                    max_wait=self.max_wait,
                    retry_after=response.headers.get("Retry-After"),
                )
            )
        hint = ""
        if response.status_code in (401, 403):
            hint = (
                f" (check the API key in {self.api_key_env})"
                if self.api_key_env
                else " (no API key was sent)"
            )
        raise LLMHTTPError(
            f"{self.url} answered HTTP {response.status_code} after {attempt + 1} attempt(s){hint}: "
            f"{_error_text(response)!r}",
            response.status_code,
        )


def _error_text(response: requests.Response) -> str:
    """The server's ``{"error": {"message": ...}}`` text if it sent one, else the start of the body."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        error = None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return excerpt(error["message"])
    if isinstance(error, str):
        return excerpt(error)
    return excerpt(response.text)
