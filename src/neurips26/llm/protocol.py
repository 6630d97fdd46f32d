"""The contract every language-model backend fulfils: :class:`ChatModel`, its arguments and its errors.

A chapter that needs a language model takes any object with a ``complete`` method of this shape and
never asks which backend it got: an HTTP endpoint, a local ``transformers`` model, or an offline,
deterministic stand-in. :func:`prepare_request` checks and normalises the arguments in one place, so
every backend accepts and rejects the same inputs with the same messages.

Errors raised by backends derive from :class:`LLMError` (a ``RuntimeError``), each also from the
builtin a caller would naturally catch:

- :class:`LLMConfigError` (``ValueError``): a backend cannot be built (bad selection string, API key
  missing from the environment);
- :class:`LLMConnectionError` (``ConnectionError``): the endpoint cannot be reached;
  :class:`LLMTimeoutError` (also ``TimeoutError``): it did not answer in time;
- :class:`LLMHTTPError`: the server answered with an error status (after any retries);
- :class:`LLMResponseError` (``ValueError``): the reply is not what the protocol promises;
- :class:`LLMReplayError` (``LookupError``): a recorded transcript has no reply for this request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from neurips26.llm.messages import Completion, Message, with_images
from neurips26.validation import check_float, check_int


class LLMError(RuntimeError):
    """Base class of every error raised by a language-model backend."""


class LLMConfigError(LLMError, ValueError):
    """A backend cannot be built as asked (bad selection string, missing API key variable)."""


class LLMConnectionError(LLMError, ConnectionError):
    """The endpoint could not be reached."""


class LLMTimeoutError(LLMConnectionError, TimeoutError):
    """The endpoint did not answer within the timeout."""


class LLMHTTPError(LLMError):
    """The server answered with an HTTP error status; ``status`` holds it."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class LLMResponseError(LLMError, ValueError):
    """The server's reply is malformed (not JSON, or without the fields a chat completion has)."""


class LLMReplayError(LLMError, LookupError):
    """A replayed transcript has no matching reply for a request."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that completes a conversation.

    ``complete(messages, temperature=0.0, max_tokens=512, stop=None, images=None)`` returns a
    :class:`~neurips26.llm.messages.Completion`. ``temperature == 0`` asks for greedy (reproducible)
    decoding; ``max_tokens`` caps the reply's length; ``stop`` is one string or a list of strings
    at which the reply ends (the stop string itself is not returned); ``images`` are PNG bytes
    attached to the last (user) message.
    """

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: str | Sequence[str] | None = None,
        images: Sequence[bytes] | None = None,
    ) -> Completion: ...


@dataclass(frozen=True)
class Request:
    """A checked call: the messages (images attached) and the decoding settings."""

    messages: tuple[Message, ...]
    temperature: float
    max_tokens: int
    stop: tuple[str, ...]


def prepare_request(
    messages: Sequence[Message],
    *,
    temperature: float = 0.0,
    max_tokens: int = 512,
    stop: str | Sequence[str] | None = None,
    images: Sequence[bytes] | None = None,
) -> Request:
    """Check the arguments of :meth:`ChatModel.complete` and normalise them into a :class:`Request`.

    ``temperature`` in ``[0, 2]`` (the OpenAI range), ``max_tokens >= 1``, ``stop`` as a tuple of
    non-empty strings (empty when ``None``), ``images`` appended to the last user message.
    """
    temperature = check_float("temperature", temperature, minimum=0.0, maximum=2.0)
    max_tokens = check_int("max_tokens", max_tokens, minimum=1)
    if stop is None:
        stops: tuple[str, ...] = ()
    elif isinstance(stop, str):
        stops = (stop,)
    elif isinstance(stop, Sequence):
        stops = tuple(stop)
    else:
        raise TypeError(f"stop must be a str, a list of str or None; got {type(stop).__name__}")
    if not all(isinstance(s, str) and s for s in stops):
        raise ValueError(f"stop must hold non-empty strings; got {stop!r}")
    return Request(with_images(messages, images), temperature, max_tokens, stops)


def excerpt(text: str, limit: int = 200) -> str:
    """The first ``limit`` characters of ``text`` on one line, with ``...`` when cut (for error messages)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to (not including) the earliest occurrence of any stop string, and whether one occurred."""
    cuts = [i for i in (text.find(s) for s in stop) if i >= 0]
    if not cuts:
        return text, False
    return text[: min(cuts)], True
