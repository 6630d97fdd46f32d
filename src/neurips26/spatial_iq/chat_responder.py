"""Any chat model as a responder: the benchmark's text questions with the view attached, through
:mod:`neurips26.llm`.

:class:`VLMResponder` asks each question as the free-response format does (:func:`~.formats.prompt`:
the instruction, the definitions, one question), attaches the view as a PNG (and its rotation partner for
T2), and parses the reply with the released cascade (:func:`~.formats.parse_integer`; the object category
with :func:`~.formats.parse_category`). A reply it cannot read scores wrong (-1, or "" for S1).

The offline default, :func:`tiny_vlm_chat`, is the chapter's trained model behind the same interface: a
:class:`~neurips26.llm.Scripted` backend that reads the pixels back from the PNGs, recognises which
question the text asks, lets the tiny VLM answer greedily and writes its answer as text. It sees what a
real VLM sees — pixels and a question — but it can only answer the twelve questions it was trained on,
in their exact wording; a real model (``NEURIPS26_LLM=openai:...``) reads any prompt.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import torch

from neurips26.llm import ChatModel, Message, Scripted
from neurips26.spatial_iq.dataset import ViewSet
from neurips26.spatial_iq.formats import QUESTIONS, parse_category, parse_integer, prompt
from neurips26.spatial_iq.tasks import TASKS, check_task
from neurips26.spatial_iq.tokens import question, read_answer
from neurips26.spatial_iq.vlm import TinyVLM, generate
from neurips26.validation import check_int

#: PNGs are sent at 4x the model's 48 pixels (nearest neighbour), closer to what chat VLMs expect.
UPSCALE = 4
SIZE = 48


def view_png(image: np.ndarray, upscale: int = UPSCALE) -> bytes:
    """PNG bytes of one (S, S, 3) image in [0, 1], rounded to 8 bits and upscaled ``upscale``x."""
    from PIL import Image

    img = np.asarray(image)
    if img.ndim != 3 or img.shape[-1] != 3:
        raise ValueError(f"image must have shape (S, S, 3); got {img.shape}")
    upscale = check_int("upscale", upscale, minimum=1)
    pixels = np.round(np.clip(img, 0.0, 1.0) * 255.0).astype(np.uint8)
    pixels = pixels.repeat(upscale, axis=0).repeat(upscale, axis=1)
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="PNG")
    return buffer.getvalue()


def read_view_png(data: bytes, size: int = SIZE) -> np.ndarray:
    """The (size, size, 3) float32 image in [0, 1] of a PNG written by :func:`view_png`."""
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.float32) / 255.0
    step = pixels.shape[0] // size
    if step < 1 or pixels.shape[:2] != (step * size, step * size):
        raise ValueError(f"data must be a square PNG whose side is a multiple of {size}; got {pixels.shape}")
    return pixels[::step, ::step]


class VLMResponder:
    """Free-response answers from ``backend`` (module doc); ``requests`` counts the calls and
    ``unreadable`` the replies no answer could be read from."""

    def __init__(self, backend: ChatModel, *, max_tokens: int = 32, upscale: int = UPSCALE) -> None:
        if not isinstance(backend, ChatModel):
            raise TypeError(
                f"backend must be a ChatModel (an object with complete); got {type(backend).__name__}"
            )
        self.backend = backend
        self.max_tokens = check_int("max_tokens", max_tokens, minimum=1)
        self.upscale = check_int("upscale", upscale, minimum=1)
        self.requests = 0
        self.unreadable = 0

    def ask(self, data: ViewSet, row: int, task: str) -> int | str:
        """One answer: question ``task`` about view ``row`` of ``data``."""
        task = check_task(task)
        images = [view_png(data.images[row], self.upscale)]
        if task in ("T2a", "T2b"):
            images.append(view_png(data.images[int(data.partner[task][row])], self.upscale))
        reply = self.backend.complete(
            [Message.user(prompt(task), tuple(images))], temperature=0.0, max_tokens=self.max_tokens
        )
        self.requests += 1
        value = parse_category(reply.text) if task == "S1" else parse_integer(reply.text)
        if value is None:
            self.unreadable += 1
            return "" if task == "S1" else -1
        return value

    def answer(self, data: ViewSet, tasks: Sequence[str] = TASKS) -> dict[str, np.ndarray]:
        """The answer sheet over every view of ``data`` for ``tasks`` (each question asked on its own)."""
        if not isinstance(data, ViewSet):
            raise TypeError(f"data must be a ViewSet; got {type(data).__name__}")
        return {
            t: np.array(
                [self.ask(data, r, t) for r in range(len(data))], dtype=object if t == "S1" else np.int64
            )
            for t in tasks
        }


def _task_of(text: str) -> str | None:
    """The task whose question ``text`` ends with (the formats' wording), else None."""
    for task in TASKS:
        if text.rstrip().endswith(QUESTIONS[task]):
            return task
    return None


def tiny_vlm_chat(model: TinyVLM) -> Scripted:
    """The offline default backend: ``model`` answering from the attached pixels (module doc); "I cannot
    answer that." to a question it was not trained on."""
    if not isinstance(model, TinyVLM):
        raise TypeError(f"model must be a TinyVLM; got {type(model).__name__}")

    def reply(messages: tuple[Message, ...]) -> str:
        last = messages[-1]
        task = _task_of(last.content)
        wanted = 2 if task in ("T2a", "T2b") else 1
        if task is None or len(last.images) != wanted:
            return "I cannot answer that."
        images = torch.as_tensor(np.stack([read_view_png(b) for b in last.images]))[None]
        tokens = generate(model, images, torch.tensor([question(task)]))[0].tolist()
        value = read_answer(tokens, task)
        return str(value) if value not in (-1, "") else "I cannot answer that."

    return Scripted(reply, model="tiny-vlm")


__all__ = ["SIZE", "UPSCALE", "VLMResponder", "read_view_png", "tiny_vlm_chat", "view_png"]
