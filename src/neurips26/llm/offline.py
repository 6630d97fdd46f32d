"""Offline, deterministic backends: :class:`Scripted`, :class:`Replay` and the :class:`Recorder` feeding it.

Every notebook must run, and be tested, without a language model. These three stand in for one:

- :class:`Scripted` answers with a policy function the chapter writes (``messages -> str``): a rule,
  an oracle with the right answer, a deliberately noisy stand-in. Same messages, same answer.
- :class:`Recorder` wraps any backend (for example a real model behind
  :class:`~neurips26.llm.openai_compatible.OpenAICompatible`) and keeps a transcript of every call.
- :class:`Replay` plays a transcript back, so a run made once with a real model can be repeated
  offline, exactly, by anyone. It matches calls either in order (checking each call's messages
  against the recorded digest) or by the digest of the messages alone.

Token counts of the offline backends follow one documented rule (:func:`count_tokens`): each
whitespace-separated word costs one token per started 4 bytes of its UTF-8 encoding (roughly what a
BPE tokenizer gives for English) and each image costs :data:`IMAGE_TOKENS`.

A transcript file is JSON: ``{"format": "neurips26.llm.transcript/1", "exchanges": [...]}`` where each
exchange holds ``index``, ``digest`` (of the messages, :func:`~neurips26.llm.messages.messages_digest`),
``messages`` (for reading; images as their SHA-256), the decoding settings and the ``completion``.
A hand-written exchange may omit everything but ``completion`` (or give it as a plain string): it is
then replayed in order without a digest check.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neurips26.llm.messages import Completion, Message, Usage, image_digest, messages_digest
from neurips26.llm.protocol import ChatModel, LLMReplayError, Request, cut_at_stop, excerpt, prepare_request
from neurips26.validation import check_choice

IMAGE_TOKENS = 85
"""Tokens charged per image by the offline backends (OpenAI's flat cost of a low-detail image)."""

BYTES_PER_TOKEN = 4
TRANSCRIPT_FORMAT = "neurips26.llm.transcript/1"

_WORD = re.compile(r"\S+")


def _word_tokens(word: str) -> int:
    return math.ceil(len(word.encode("utf-8")) / BYTES_PER_TOKEN)


def count_tokens(text: str) -> int:
    """Tokens in ``text``: sum over whitespace-separated words of ``ceil(utf8_bytes(word) / 4)``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    return sum(_word_tokens(w) for w in _WORD.findall(text))


def count_prompt_tokens(messages: Sequence[Message]) -> int:
    """Prompt tokens: :func:`count_tokens` of every message plus :data:`IMAGE_TOKENS` per image."""
    return sum(count_tokens(m.content) + IMAGE_TOKENS * len(m.images) for m in messages)


def truncate_tokens(text: str, max_tokens: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` that costs at most ``max_tokens`` tokens, and whether it was cut.

    Whole words are kept while they fit; a word that does not fit is cut at a character boundary
    within the bytes still allowed. ``count_tokens(prefix) <= max_tokens`` always holds.
    """
    budget = max_tokens
    for match in _WORD.finditer(text):
        cost = _word_tokens(match.group())
        if cost <= budget:
            budget -= cost
            continue
        allowed, end = budget * BYTES_PER_TOKEN, match.start()
        for ch in match.group():
            size = len(ch.encode("utf-8"))
            if size > allowed:
                break
            allowed -= size
            end += 1
        return text[:end], True
    return text, False


def _finish(text: str, request: Request, model: str) -> Completion:
    """Apply ``stop`` then ``max_tokens`` to a scripted reply and count its tokens."""
    text, stopped = cut_at_stop(text, request.stop)
    text, cut = truncate_tokens(text, request.max_tokens)
    usage = Usage(count_prompt_tokens(request.messages), count_tokens(text))
    return Completion(text, usage, model, "length" if cut else "stop")


class Scripted:
    """A :class:`~neurips26.llm.protocol.ChatModel` whose replies come from ``policy(messages)``.

    ``policy`` receives the conversation (a tuple of :class:`~neurips26.llm.messages.Message`,
    images attached) and returns the reply text, or a full :class:`~neurips26.llm.messages.Completion`
    to control usage and finish reason itself (then it is returned unchanged). A text reply is cut at
    the first ``stop`` string and at ``max_tokens`` (``finish_reason="length"``), and its tokens are
    counted with :func:`count_tokens`. ``calls`` counts the calls made so far.
    """

    def __init__(self, policy: Callable[[tuple[Message, ...]], str | Completion], *, model: str = "scripted"):
        if not callable(policy):
            raise TypeError(f"policy must be callable (messages -> str); got {type(policy).__name__}")
        if not isinstance(model, str):
            raise TypeError(f"model must be a str; got {type(model).__name__}")
        self.policy = policy
        self.model = model
        self.calls = 0

    def __repr__(self) -> str:
        return f"Scripted({getattr(self.policy, '__name__', self.policy)!r}, model={self.model!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: str | Sequence[str] | None = None,
        images: Sequence[bytes] | None = None,
    ) -> Completion:
        """The policy's reply to ``messages`` (``temperature`` is accepted and ignored)."""
        request = prepare_request(
            messages, temperature=temperature, max_tokens=max_tokens, stop=stop, images=images
        )
        self.calls += 1
        reply = self.policy(request.messages)
        if isinstance(reply, Completion):
            return reply
        if not isinstance(reply, str):
            raise TypeError(f"policy must return a str or a Completion; got {type(reply).__name__}")
        return _finish(reply, request, self.model)


@dataclass(frozen=True)
class Exchange:
    """One recorded call: its position, the digest of its messages, the request and the reply.

    ``digest`` is ``None`` for hand-written exchanges, which are replayed in order without a check.
    ``messages`` is a readable summary (images as their SHA-256), not needed for replay.
    """

    index: int
    digest: str | None
    completion: Completion
    messages: tuple[dict[str, Any], ...] = ()
    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "digest": self.digest,
            "messages": list(self.messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "completion": self.completion.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], index: int) -> Exchange:
        """Read one exchange; ``index`` (its position in the file) is used when the record has none."""
        if not isinstance(data, dict) or "completion" not in data:
            raise ValueError(
                f"transcript exchange {index} must be an object with a 'completion'; got {data!r:.120}"
            )
        completion = data["completion"]
        if isinstance(completion, str):
            completion = Completion(completion, Usage(0, count_tokens(completion)))
        else:
            completion = Completion.from_dict(completion)
        return cls(
            index=int(data.get("index", index)),
            digest=data.get("digest"),
            completion=completion,
            messages=tuple(data.get("messages", ())),
            temperature=data.get("temperature"),
            max_tokens=data.get("max_tokens"),
            stop=tuple(data.get("stop", ())),
        )


def _summary(messages: Sequence[Message]) -> tuple[dict[str, Any], ...]:
    return tuple(
        {"role": m.role, "content": m.content, "images": [image_digest(i) for i in m.images]}
        for m in messages
    )


def save_transcript(path: str | os.PathLike[str], exchanges: Sequence[Exchange]) -> Path:
    """Write ``exchanges`` to a JSON transcript file (UTF-8, indented, keys sorted); return the path."""
    path = Path(path)
    blob = {"format": TRANSCRIPT_FORMAT, "exchanges": [e.to_dict() for e in exchanges]}
    path.write_text(json.dumps(blob, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_transcript(path: str | os.PathLike[str]) -> tuple[Exchange, ...]:
    """Read a transcript file written by :func:`save_transcript` (or a hand-written one)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"transcript file not found: {str(path)!r}")
    try:
        blob = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"transcript {str(path)!r} is not valid JSON: {exc}") from exc
    if isinstance(blob, dict):
        if blob.get("format", TRANSCRIPT_FORMAT) != TRANSCRIPT_FORMAT:
            raise ValueError(
                f"transcript {str(path)!r} has format {blob.get('format')!r}; expected {TRANSCRIPT_FORMAT!r}"
            )
        blob = blob.get("exchanges")
    if not isinstance(blob, list):
        raise ValueError(f"transcript {str(path)!r} must hold a list of exchanges")
    return tuple(Exchange.from_dict(record, i) for i, record in enumerate(blob))


class Recorder:
    """Wraps a :class:`~neurips26.llm.protocol.ChatModel` and records every call as an :class:`Exchange`.

    ``transcript`` holds the exchanges so far; :meth:`save` writes them for :class:`Replay`.
    """

    def __init__(self, backend: ChatModel) -> None:
        if not isinstance(backend, ChatModel):
            raise TypeError(
                f"backend must be a ChatModel (an object with complete); got {type(backend).__name__}"
            )
        self.backend = backend
        self._exchanges: list[Exchange] = []

    def __repr__(self) -> str:
        return f"Recorder({self.backend!r}, calls={len(self._exchanges)})"

    @property
    def transcript(self) -> tuple[Exchange, ...]:
        return tuple(self._exchanges)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: str | Sequence[str] | None = None,
        images: Sequence[bytes] | None = None,
    ) -> Completion:
        """The wrapped backend's reply, recorded."""
        request = prepare_request(
            messages, temperature=temperature, max_tokens=max_tokens, stop=stop, images=images
        )
        completion = self.backend.complete(
            request.messages,
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
        )
        self._exchanges.append(
            Exchange(
                index=len(self._exchanges),
                digest=messages_digest(request.messages),
                completion=completion,
                messages=_summary(request.messages),
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                stop=request.stop,
            )
        )
        return completion

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the transcript to ``path`` (JSON); :meth:`Replay.load` reads it back."""
        return save_transcript(path, self._exchanges)


class Replay:
    """A :class:`~neurips26.llm.protocol.ChatModel` that answers from a recorded transcript.

    ``match="order"``: the ``k``-th call gets exchange ``k``; when that exchange has a digest, the
    call's messages must have the same digest, else :class:`~neurips26.llm.protocol.LLMReplayError`
    says where the conversations diverged. Running past the end is an error too.
    ``match="digest"``: a call gets the exchanges recorded for the same messages, in recorded order;
    once they are used up the last one repeats (a greedy model answers the same prompt the same way).
    Decoding settings are not compared: the recorded reply is returned as recorded.
    """

    def __init__(self, transcript: Sequence[Exchange], *, match: str = "order") -> None:
        if isinstance(transcript, str | os.PathLike):
            raise TypeError("transcript must be a list of Exchange; use Replay.load(path) to read a file")
        transcript = tuple(transcript)
        for i, exchange in enumerate(transcript):
            if not isinstance(exchange, Exchange):
                raise TypeError(f"transcript[{i}] must be an Exchange; got {type(exchange).__name__}")
        self.match = check_choice("match", match, ("order", "digest"))
        if self.match == "digest" and any(e.digest is None for e in transcript):
            raise ValueError(
                "match='digest' needs a digest on every exchange; this transcript has some without"
            )
        self.transcript = transcript
        self.position = 0
        self._by_digest: dict[str, list[Exchange]] = defaultdict(list)
        for exchange in transcript:
            if exchange.digest is not None:
                self._by_digest[exchange.digest].append(exchange)
        self._used: dict[str, int] = defaultdict(int)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, match: str = "order") -> Replay:
        """A replay of the transcript file at ``path``."""
        return cls(load_transcript(path), match=match)

    def __repr__(self) -> str:
        return f"Replay({len(self.transcript)} exchanges, match={self.match!r}, position={self.position})"

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the transcript back to a JSON file."""
        return save_transcript(path, self.transcript)

    def reset(self) -> None:
        """Start again from the first exchange."""
        self.position = 0
        self._used.clear()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: str | Sequence[str] | None = None,
        images: Sequence[bytes] | None = None,
    ) -> Completion:
        """The recorded reply to ``messages``."""
        request = prepare_request(
            messages, temperature=temperature, max_tokens=max_tokens, stop=stop, images=images
        )
        digest = messages_digest(request.messages)
        if self.match == "digest":
            return self._by_digest_reply(digest, request)
        if self.position >= len(self.transcript):
            raise LLMReplayError(
                f"all {len(self.transcript)} exchanges of the transcript were used; call {self.position} "
                f"(last message {excerpt(request.messages[-1].content, 80)!r}) has no recorded reply"
            )
        exchange = self.transcript[self.position]
        if exchange.digest is not None and exchange.digest != digest:
            raise LLMReplayError(
                f"call {self.position} differs from the transcript: recorded digest {exchange.digest[:12]}, "
                f"got {digest[:12]}; recorded last message {_recorded_last(exchange)!r}, "
                f"got {excerpt(request.messages[-1].content, 80)!r}"
            )
        self.position += 1
        return exchange.completion

    def _by_digest_reply(self, digest: str, request: Request) -> Completion:
        recorded = self._by_digest.get(digest)
        if not recorded:
            raise LLMReplayError(
                f"none of the {len(self.transcript)} recorded exchanges has these messages (digest "
                f"{digest[:12]}, last message {excerpt(request.messages[-1].content, 80)!r})"
            )
        k = min(self._used[digest], len(recorded) - 1)
        self._used[digest] += 1
        self.position += 1
        return recorded[k].completion


def _recorded_last(exchange: Exchange) -> str:
    if not exchange.messages:
        return "(not recorded)"
    return excerpt(str(exchange.messages[-1].get("content", "")), 80)
