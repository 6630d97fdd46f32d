"""What goes into a chat model and what comes back: :class:`Message`, :class:`Usage`, :class:`Completion`.

A conversation is a sequence of messages, each with a role (``"system"``, ``"user"`` or
``"assistant"``), its text and, on user messages, images as PNG bytes for vision-language models.
The model answers with a :class:`Completion`: the text, the token counts and why it stopped.

All three are frozen dataclasses that check their fields on construction and convert to and from
plain JSON-able dictionaries (images as base64), so transcripts can be saved and replayed.
:func:`messages_digest` gives a conversation a stable SHA-256 name (the same messages give the same
digest in every process and on every machine), which :class:`~neurips26.llm.offline.Replay` uses to
find a recorded reply.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from neurips26.validation import check_choice, check_int

ROLES: tuple[str, ...] = ("system", "user", "assistant")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_png(name: str, value: object) -> bytes:
    """PNG-encoded image bytes (checked by the 8-byte PNG signature)."""
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"{name} must be PNG bytes; got {type(value).__name__}")
    value = bytes(value)
    if not value.startswith(PNG_SIGNATURE):
        raise ValueError(f"{name} must be PNG-encoded bytes (they must start with the PNG signature)")
    return value


def check_images(name: str, images: object) -> tuple[bytes, ...]:
    """A sequence of PNG images as a tuple of bytes."""
    if isinstance(images, bytes | bytearray | memoryview | str) or not isinstance(images, Iterable):
        raise TypeError(f"{name} must be a list of PNG bytes; got {type(images).__name__}")
    return tuple(check_png(f"{name}[{i}]", image) for i, image in enumerate(images))


@dataclass(frozen=True)
class Message:
    """One turn of a conversation: ``role``, ``content`` text and (user turns only) PNG ``images``."""

    role: str
    content: str
    images: tuple[bytes, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        check_choice("role", self.role, ROLES)
        if not isinstance(self.content, str):
            raise TypeError(f"content must be a str; got {type(self.content).__name__}")
        object.__setattr__(self, "images", check_images("images", self.images))
        if self.images and self.role != "user":
            raise ValueError(f"images may only be attached to user messages; got role {self.role!r}")

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str, images: Sequence[bytes] = ()) -> Message:
        return cls("user", content, images)  # type: ignore[arg-type]  # checked into a tuple

    @classmethod
    def assistant(cls, content: str) -> Message:
        return cls("assistant", content)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form; images as base64 strings."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.images:
            out["images"] = [base64.b64encode(image).decode("ascii") for image in self.images]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping):
            raise TypeError(
                f"a message must be a mapping with 'role' and 'content'; got {type(data).__name__}"
            )
        missing = {"role", "content"} - set(data)
        if missing:
            raise ValueError(f"a message needs the keys 'role' and 'content'; missing {sorted(missing)}")
        images = tuple(base64.b64decode(image, validate=True) for image in data.get("images", ()))
        return cls(data["role"], data["content"], images)


@dataclass(frozen=True)
class Usage:
    """Token counts of one call; ``total_tokens`` is their sum."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __post_init__(self) -> None:
        check_int("prompt_tokens", self.prompt_tokens, minimum=0)
        check_int("completion_tokens", self.completion_tokens, minimum=0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True)
class Completion:
    """A model's reply: ``text``, token ``usage``, the ``model`` that wrote it and ``finish_reason``.

    ``finish_reason`` follows the OpenAI convention: ``"stop"`` (natural end or a stop sequence),
    ``"length"`` (hit ``max_tokens``), or whatever else a server reports; ``None`` if unknown.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = "stop"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"text must be a str; got {type(self.text).__name__}")
        if not isinstance(self.usage, Usage):
            raise TypeError(f"usage must be a Usage; got {type(self.usage).__name__}")
        if not isinstance(self.model, str):
            raise TypeError(f"model must be a str; got {type(self.model).__name__}")
        if self.finish_reason is not None and not isinstance(self.finish_reason, str):
            raise TypeError(f"finish_reason must be a str or None; got {type(self.finish_reason).__name__}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "usage": self.usage.to_dict(),
            "model": self.model,
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Completion:
        """Inverse of :meth:`to_dict` (``total_tokens`` is recomputed, not read)."""
        if not isinstance(data, Mapping) or "text" not in data:
            raise ValueError(f"a completion must be a mapping with a 'text' key; got {data!r:.120}")
        usage = data.get("usage") or {}
        return cls(
            text=data["text"],
            usage=Usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            model=data.get("model", ""),
            finish_reason=data.get("finish_reason", "stop"),
        )


def check_messages(messages: object) -> tuple[Message, ...]:
    """A non-empty sequence of :class:`Message` as a tuple."""
    if isinstance(messages, Message | str) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of Message; got {type(messages).__name__}")
    if not messages:
        raise ValueError("messages must not be empty")
    for i, message in enumerate(messages):
        if not isinstance(message, Message):
            raise TypeError(
                f"messages[{i}] must be a Message (e.g. Message.user('...')); got {type(message).__name__}"
            )
    return tuple(messages)


def with_images(messages: Sequence[Message], images: Sequence[bytes] | None) -> tuple[Message, ...]:
    """``messages`` with ``images`` appended to the last message, which must then be a user message.

    This is what the ``images=`` argument of :meth:`ChatModel.complete` means: pictures that go
    with the latest question.
    """
    messages = check_messages(messages)
    if images is None:
        return messages
    images = check_images("images", images)
    if not images:
        return messages
    last = messages[-1]
    if last.role != "user":
        raise ValueError(
            f"images= attaches to the last message, which must be a user message; got {last.role!r}"
        )
    return (*messages[:-1], Message("user", last.content, last.images + images))


def image_digest(image: bytes) -> str:
    """``"sha256:<hex>"`` of one image, used in transcripts instead of the bytes themselves."""
    return "sha256:" + hashlib.sha256(image).hexdigest()


def messages_digest(messages: Sequence[Message]) -> str:
    """Stable SHA-256 hex digest of a conversation (roles, texts and image digests, in order)."""
    canonical = [
        {"role": m.role, "content": m.content, "images": [image_digest(i) for i in m.images]}
        for m in check_messages(messages)
    ]
    blob = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
