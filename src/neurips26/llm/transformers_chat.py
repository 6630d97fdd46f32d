"""A local chat model through Hugging Face ``transformers``, loaded from a directory the user supplies.

:class:`TransformersChat` is for readers who have a chat (instruction-tuned) model on disk and no
server. It never downloads: everything is loaded with ``local_files_only=True`` from ``path``. The
conversation is formatted with the model's own chat template; ``temperature == 0`` decodes greedily
(reproducible), a positive temperature samples. Each sampled call draws its own seed from a generator
seeded once with ``seed`` (or takes the seed its caller gives), so ``r`` samples of one prompt differ while
a whole run, repeated with the same ``seed``, gives the same replies; the caller's global random state is
left as it was.

``transformers`` (and ``torch``) are optional: they are imported only when a model is loaded, and a
missing install raises an ``ImportError`` that says what to install. This backend serves text-only
causal language models; for images, serve a vision-language model behind an OpenAI-compatible
server (vLLM, Ollama) and use :class:`~neurips26.llm.openai_compatible.OpenAICompatible`.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from neurips26.llm.messages import Completion, Message, Usage
from neurips26.llm.protocol import LLMConfigError, cut_at_stop, prepare_request
from neurips26.validation import check_seed

INSTALL_HINT = "pip install 'transformers>=4.43' torch  (or: pip install 'neurips26[llm]')"


def import_transformers() -> ModuleType:
    """The ``transformers`` module, or an ``ImportError`` that says how to install it."""
    try:
        import transformers
    except ImportError as exc:
        raise ImportError(
            f"TransformersChat needs the optional package 'transformers' (with torch); install it with: "
            f"{INSTALL_HINT}"
        ) from exc
    return transformers


def check_model_dir(path: object) -> Path:
    """``path`` as an existing local directory (a model is never downloaded)."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be a local directory (str or Path); got {type(path).__name__}")
    directory = Path(path).expanduser()
    if not directory.exists():
        raise FileNotFoundError(
            f"path {str(path)!r} does not exist; TransformersChat loads a model from a local directory only "
            f"(it never downloads)"
        )
    if not directory.is_dir():
        raise NotADirectoryError(f"path {str(path)!r} is not a directory; give the model's folder")
    return directory


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in eos} if isinstance(eos, list | tuple) else {int(eos)}


class TransformersChat:
    """A :class:`~neurips26.llm.protocol.ChatModel` running a local ``transformers`` causal LM.

    ``path`` is the model's folder (``config.json``, weights, tokenizer with a chat template);
    ``device`` moves the model there (``None`` keeps where it loaded); ``load_kwargs`` go to the
    model's ``from_pretrained`` (e.g. ``{"torch_dtype": "auto"}``), with ``local_files_only`` always
    forced to ``True``; ``seed`` seeds the generator from which every sampled call (``temperature > 0``)
    draws its own seed (:meth:`sampling_seed`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        device: str | None = None,
        load_kwargs: Mapping[str, Any] | None = None,
        seed: int = 0,
    ) -> None:
        self.path = check_model_dir(path)
        self.seed = check_seed("seed", seed)
        self._seeds = np.random.default_rng(self.seed)  # one seed per sampled call, drawn in call order
        if load_kwargs is not None and not isinstance(load_kwargs, Mapping):
            raise TypeError(f"load_kwargs must be a dict or None; got {type(load_kwargs).__name__}")
        kwargs = {**(load_kwargs or {}), "local_files_only": True}
        self._transformers = import_transformers()
        self.tokenizer = self._transformers.AutoTokenizer.from_pretrained(
            str(self.path), local_files_only=True
        )
        if not getattr(self.tokenizer, "chat_template", None):
            raise LLMConfigError(
                f"the tokenizer in path {str(self.path)!r} has no chat template; TransformersChat needs a "
                f"chat (instruction-tuned) model"
            )
        self.model = self._transformers.AutoModelForCausalLM.from_pretrained(str(self.path), **kwargs)
        if device is not None:
            self.model = self.model.to(device)
        self.model.eval()
        self.name = self.path.name

    def __repr__(self) -> str:
        return f"TransformersChat({str(self.path)!r})"

    def sampling_seed(self, seed: int | None = None) -> int:
        """The seed of the next sampled call: ``seed`` when the caller gives one, else the next draw of the
        generator seeded once with :attr:`seed` (so repeated samples differ and a rerun repeats them)."""
        if seed is not None:
            return check_seed("seed", seed)
        return int(self._seeds.integers(0, 2**31 - 1))

    def _sample(self, seed: int, generate: Any, **kwargs: Any) -> Any:
        """Run ``generate`` with the global random states seeded to ``seed`` (``transformers.set_seed``:
        Python, NumPy, torch), then give the caller's states back."""
        import torch

        device = torch.device(self.model.device)
        cuda = [device.index or 0] if device.type == "cuda" else []
        python_state, numpy_state = random.getstate(), np.random.get_state()  # noqa: NPY002 (set_seed's)
        try:
            with torch.random.fork_rng(devices=cuda):
                self._transformers.set_seed(seed)
                return generate(**kwargs)
        finally:
            random.setstate(python_state)
            np.random.set_state(numpy_state)  # noqa: NPY002 - the global state set_seed overwrote

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stop: str | Sequence[str] | None = None,
        images: Sequence[bytes] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Generate a reply with the model's chat template (greedy at ``temperature == 0``).

        At a positive temperature the call samples with :meth:`sampling_seed` (``seed``, when given,
        makes this one call reproducible on its own); greedy calls draw no seed."""
        request = prepare_request(
            messages, temperature=temperature, max_tokens=max_tokens, stop=stop, images=images
        )
        if any(m.images for m in request.messages):
            raise ValueError(
                "TransformersChat serves text-only models and cannot take images; serve a vision-language "
                "model behind an OpenAI-compatible server and use OpenAICompatible"
            )
        chat = [{"role": m.role, "content": m.content} for m in request.messages]
        encoded = self.tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        inputs = {name: tensor.to(self.model.device) for name, tensor in encoded.items()}
        n_prompt = int(inputs["input_ids"].shape[-1])
        pad = self.tokenizer.pad_token_id
        generate: dict[str, Any] = {
            "max_new_tokens": request.max_tokens,
            "do_sample": request.temperature > 0,
            "pad_token_id": pad if pad is not None else self.tokenizer.eos_token_id,
        }
        if request.stop:
            generate["stop_strings"] = list(request.stop)
            generate["tokenizer"] = self.tokenizer
        if request.temperature > 0:
            generate["temperature"] = request.temperature
            output = self._sample(self.sampling_seed(seed), self.model.generate, **inputs, **generate)
        else:
            output = self.model.generate(**inputs, **generate)
        new_ids = [int(t) for t in output[0, n_prompt:].tolist()]
        text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
        text, stopped = cut_at_stop(text, request.stop)
        ended = stopped or (bool(new_ids) and new_ids[-1] in _eos_ids(self.model, self.tokenizer))
        finish = "stop" if ended or len(new_ids) < request.max_tokens else "length"
        return Completion(text, Usage(n_prompt, len(new_ids)), self.name, finish)
