"""Pluggable language-model backends for the chapters that use an LLM or a VLM (16, 18, 19).

A chapter's code takes any :class:`ChatModel` (``complete(messages, temperature=..., max_tokens=...,
stop=..., images=...) -> Completion``) and ships an offline, deterministic default, so its notebooks
run and are tested without a model. The backends:

- :class:`OpenAICompatible` — a real HTTP client for an OpenAI-compatible endpoint (vLLM, Ollama,
  llama.cpp server, hosted APIs); images go as ``data:`` URLs (:mod:`~neurips26.llm.openai_compatible`);
- :class:`TransformersChat` — a local ``transformers`` chat model from a folder you supply, never
  downloaded (:mod:`~neurips26.llm.transformers_chat`; optional install);
- :class:`Scripted`, :class:`Replay`, :class:`Recorder` — offline: a policy function, a recorded
  transcript, and the wrapper that records one (:mod:`~neurips26.llm.offline`).

Choosing the backend without editing a notebook: :func:`get_backend` reads the environment variable
``NEURIPS26_LLM``:

========================================  =====================================================
``NEURIPS26_LLM``                         backend
========================================  =====================================================
unset, empty or ``offline``               the offline default the chapter passes in
``openai:<model>@<base_url>``             ``OpenAICompatible(base_url, model)``, e.g.
                                          ``openai:Qwen2.5-VL-7B-Instruct@http://127.0.0.1:8000/v1``
``transformers:<local path>``             ``TransformersChat(path)``, e.g. ``transformers:~/models/qwen``
``replay:<transcript.json>``              ``Replay.load(path)``: a run recorded with :class:`Recorder`
========================================  =====================================================

For ``openai:`` the API key is read from ``OPENAI_API_KEY``; set ``NEURIPS26_LLM_KEY_ENV`` to the name
of another variable to read it from there, or to ``none`` for a local server that needs no key.
"""

from __future__ import annotations

import os
import re

from neurips26.llm.messages import (
    ROLES,
    Completion,
    Message,
    Usage,
    check_messages,
    messages_digest,
    with_images,
)
from neurips26.llm.offline import (
    IMAGE_TOKENS,
    Exchange,
    Recorder,
    Replay,
    Scripted,
    count_prompt_tokens,
    count_tokens,
    load_transcript,
    save_transcript,
)
from neurips26.llm.openai_compatible import OpenAICompatible, backoff_delay
from neurips26.llm.protocol import (
    ChatModel,
    LLMConfigError,
    LLMConnectionError,
    LLMError,
    LLMHTTPError,
    LLMReplayError,
    LLMResponseError,
    LLMTimeoutError,
    Request,
    prepare_request,
)
from neurips26.llm.transformers_chat import TransformersChat

ENV_VAR = "NEURIPS26_LLM"
KEY_ENV_VAR = "NEURIPS26_LLM_KEY_ENV"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
OFFLINE = "offline"

_OPENAI = re.compile(r"^openai:(?P<model>.+?)@(?P<url>https?://\S+)$")
_FORMS = (
    "unset or 'offline' (the chapter's offline default), 'openai:<model>@<base_url>', "
    "'transformers:<local path>', 'replay:<transcript.json>'"
)


def get_backend(default: ChatModel | None = None, *, spec: str | None = None) -> ChatModel:
    """The backend selected by ``spec`` (default: the environment variable ``NEURIPS26_LLM``).

    Returns ``default`` (the chapter's offline backend) when the selection is unset, empty or
    ``"offline"``; otherwise builds the backend the selection names (forms in the module docstring).
    """
    source = f"the environment variable {ENV_VAR}" if spec is None else "spec"
    if spec is None:
        spec = os.environ.get(ENV_VAR, "")
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a str or None; got {type(spec).__name__}")
    spec = spec.strip()
    if spec in ("", OFFLINE):
        if default is None:
            raise LLMConfigError(
                f"{source} selects the offline default, but none was given: pass get_backend(default=...)"
            )
        if not isinstance(default, ChatModel):
            raise TypeError(
                f"default must be a ChatModel (an object with complete); got {type(default).__name__}"
            )
        return default
    kind, _, rest = spec.partition(":")
    if kind == "openai":
        match = _OPENAI.match(spec)
        if match is None:
            raise LLMConfigError(
                f"{source} must look like 'openai:<model>@<base_url>' "
                f"(e.g. 'openai:gpt-4o-mini@https://api.openai.com/v1'); got {spec!r}"
            )
        key_env = os.environ.get(KEY_ENV_VAR, "").strip() or DEFAULT_KEY_ENV
        return OpenAICompatible(
            match["url"], match["model"], api_key_env=None if key_env.lower() == "none" else key_env
        )
    if kind == "transformers" and rest.strip():
        return TransformersChat(rest.strip())
    if kind == "replay" and rest.strip():
        return Replay.load(os.path.expanduser(rest.strip()))
    raise LLMConfigError(f"{source} must be one of: {_FORMS}; got {spec!r}")


__all__ = [
    "DEFAULT_KEY_ENV",
    "ENV_VAR",
    "IMAGE_TOKENS",
    "KEY_ENV_VAR",
    "ROLES",
    "ChatModel",
    "Completion",
    "Exchange",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMError",
    "LLMHTTPError",
    "LLMReplayError",
    "LLMResponseError",
    "LLMTimeoutError",
    "Message",
    "OpenAICompatible",
    "Recorder",
    "Replay",
    "Request",
    "Scripted",
    "TransformersChat",
    "Usage",
    "backoff_delay",
    "check_messages",
    "count_prompt_tokens",
    "count_tokens",
    "get_backend",
    "load_transcript",
    "messages_digest",
    "prepare_request",
    "save_transcript",
    "with_images",
]
