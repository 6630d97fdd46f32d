"""VLMRegionReward: region rewards from a chat model that looks at the images, as the paper's SFReward.

SFReward is a vision-language model that judges each region of an edit. :class:`VLMRegionReward` asks any
:class:`~neurips26.llm.ChatModel` **one question per valid region** with two images attached (the source
and the edit, upscaled ×:data:`UPSCALE` with nearest neighbour, as PNG) and reads a 0-10 score from the
reply:

- an instructed region k ≥ 1: "Image 2 is an edit of image 1. The instruction was: "‹text›". On a scale of
  0 to 10, how well does the square that was ‹c› in image 1 now have the colour ‹c′› in image 2? …";
- the preservation region Ω₀: "… how well is everything else (the background and every square the
  instruction does not mention) unchanged from image 1 to image 2? …".

:func:`parse_score` takes the first number of the reply ("7", "7/10", "Score: 7.5"); a reply without one
in [0, 10] scores ``fallback`` and is counted in :attr:`VLMRegionReward.failures`. The score / 10 lands in
the oracle's layout (B, K_MAX + 1), unused slots 0, so RL takes it as ``reward_fn``.

The offline default, :func:`oracle_chat`, is a :class:`~neurips26.llm.Scripted` backend that answers like a
perfect judge: it reads what a VLM would see (the two PNGs and the question's text: the instruction and
which square is asked about), finds the squares by their colour in image 1, computes the oracle's region
score (:mod:`~neurips26.spatialflow_grpo.reward`) on the 8-bit images and answers ``round(10 · r)``. It
shows **no VLM noise or bias**: its only errors are the rounding (≤ 0.05) and the 8-bit quantisation of the
PNGs. Select a real model with ``neurips26.llm.get_backend(oracle_chat())`` and ``NEURIPS26_LLM``.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from neurips26.llm import ChatModel, Message, Scripted
from neurips26.spatialflow_grpo.editworld import K_MAX, PALETTE, SIZE, EditBatch, decode_instruction
from neurips26.spatialflow_grpo.reward import COLOUR_SCALE, PRESERVE_SCALE
from neurips26.validation import check_float, check_int

#: Nearest-neighbour upscaling of the 16 × 16 images before PNG encoding (128 × 128 pixels).
UPSCALE = 8
#: The top of the answer scale.
SCALE_MAX = 10.0
SYSTEM_PROMPT = (
    "You judge image edits. You get two images: image 1 is the original, image 2 the edited version. "
    "Answer every question with a single number from 0 to 10."
)
_HEAD = 'Image 2 is an edit of image 1. The instruction was: "{text}". '
_EDIT = (
    "On a scale of 0 to 10, how well does the square that was {old} in image 1 now have the colour {new} "
    "in image 2? Answer with one number."
)
_KEEP = (
    "On a scale of 0 to 10, how well is everything else (the background and every square the instruction "
    "does not mention) unchanged from image 1 to image 2? Answer with one number."
)
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")
_TEXT = re.compile(r'The instruction was: "(?P<text>[^"]*)"')
_CLAUSE = re.compile(r"the (?P<old>[a-z]+) square (?P<new>[a-z]+)")
_ASK_EDIT = re.compile(r"the square that was (?P<old>[a-z]+) in image 1 now have the colour (?P<new>[a-z]+)")


def parse_score(text: str) -> float | None:
    """The first number in ``text`` if it lies in [0, 10] ("7", "7/10", "Score: 7.5" → 7, 7, 7.5), else
    None (no number, or the first one is negative or above 10)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    match = _NUMBER.search(text)
    if match is None:
        return None
    value = float(match.group())
    return value if 0.0 <= value <= SCALE_MAX else None


def image_png(image: Tensor, upscale: int = UPSCALE) -> bytes:
    """PNG bytes of one image (3, H, W) in [0, 1]: rounded to 8 bits, upscaled ``upscale``× (nearest)."""
    from PIL import Image

    if (
        not isinstance(image, Tensor)
        or not image.is_floating_point()
        or image.ndim != 3
        or image.shape[0] != 3
    ):
        got = tuple(image.shape) if isinstance(image, Tensor) else type(image).__name__
        raise ValueError(f"image must be a floating tensor of shape (3, H, W); got {got}")
    upscale = check_int("upscale", upscale, minimum=1)
    pixels = np.round(image.detach().cpu().clamp(0.0, 1.0).numpy() * 255.0).astype(np.uint8)
    pixels = pixels.transpose(1, 2, 0).repeat(upscale, axis=0).repeat(upscale, axis=1)
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="PNG")
    return buffer.getvalue()


def read_png(data: bytes, size: int = SIZE) -> np.ndarray:
    """The (3, size, size) float array in [0, 1] of a PNG written by :func:`image_png` (every
    ``upscale``-th pixel of the decoded image)."""
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.float64) / 255.0
    step = pixels.shape[0] // size
    if step < 1 or pixels.shape[0] != step * size or pixels.shape[1] != step * size:
        raise ValueError(f"data must be a square PNG whose side is a multiple of {size}; got {pixels.shape}")
    return pixels[::step, ::step].transpose(2, 0, 1)


def region_question(batch: EditBatch, row: int, slot: int) -> str:
    """The question about region ``slot`` (0 = Ω₀, k = clause k) of case ``row`` (module docstring)."""
    if not isinstance(batch, EditBatch):
        raise TypeError(f"batch must be an EditBatch; got {type(batch).__name__}")
    row = check_int("row", row, minimum=0, maximum=len(batch) - 1)
    slot = check_int("slot", slot, minimum=0, maximum=K_MAX)
    if not bool(batch.region_valid[row, slot]):
        raise ValueError(f"slot must be a valid region of case {row}; got {slot}")
    head = _HEAD.format(text=batch.text[row])
    if slot == 0:
        return head + _KEEP
    old, new = decode_instruction(batch.instruction[row].cpu())[slot - 1]
    return head + _EDIT.format(old=old, new=new)


class VLMRegionReward:
    """Region rewards from a chat model: ``__call__(edited, batch) -> (B, K_MAX + 1)`` in [0, 1] on
    ``edited``'s device (module docstring). One request per valid region: a system prompt, then a user
    message with :func:`region_question` and the two PNGs (source, edit), ``temperature`` 0 and a small
    ``max_tokens``. ``fallback`` (in [0, 1]) scores a reply without a usable number; ``failures`` counts
    them and ``requests`` counts every request; ``last_replies`` keeps the texts of the latest call
    (``(row, slot, text)``)."""

    def __init__(
        self,
        backend: ChatModel,
        *,
        fallback: float = 0.5,
        upscale: int = UPSCALE,
        temperature: float = 0.0,
        max_tokens: int = 8,
        system: str | None = SYSTEM_PROMPT,
    ) -> None:
        if not isinstance(backend, ChatModel):
            raise TypeError(
                f"backend must be a ChatModel (an object with complete); got {type(backend).__name__}"
            )
        self.backend = backend
        self.fallback = check_float("fallback", fallback, minimum=0.0, maximum=1.0)
        self.upscale = check_int("upscale", upscale, minimum=1)
        self.temperature = check_float("temperature", temperature, minimum=0.0, maximum=2.0)
        self.max_tokens = check_int("max_tokens", max_tokens, minimum=1)
        if system is not None and not isinstance(system, str):
            raise TypeError(f"system must be a str or None; got {type(system).__name__}")
        self.system = system
        self.failures = 0
        self.requests = 0
        self.last_replies: list[tuple[int, int, str]] = []

    def __call__(self, edited: Tensor, batch: EditBatch) -> Tensor:
        if not isinstance(batch, EditBatch):
            raise TypeError(f"batch must be an EditBatch; got {type(batch).__name__}")
        if not isinstance(edited, Tensor) or not edited.is_floating_point():
            raise TypeError(f"edited must be a floating torch.Tensor; got {type(edited).__name__}")
        if tuple(edited.shape) != (len(batch), 3, SIZE, SIZE):
            raise ValueError(
                f"edited must have shape {(len(batch), 3, SIZE, SIZE)}; got {tuple(edited.shape)}"
            )
        scores = torch.zeros(len(batch), K_MAX + 1, dtype=torch.float64)
        self.last_replies = []
        valid = batch.region_valid.cpu()
        for row in range(len(batch)):
            images = (image_png(batch.source[row], self.upscale), image_png(edited[row], self.upscale))
            for slot in valid[row].nonzero()[:, 0].tolist():
                scores[row, slot] = self._ask(batch, row, slot, images)
        return scores.to(edited.device, edited.dtype)

    def _ask(self, batch: EditBatch, row: int, slot: int, images: Sequence[bytes]) -> float:
        messages = [] if self.system is None else [Message.system(self.system)]
        messages.append(Message.user(region_question(batch, row, slot), images))
        self.requests += 1
        reply = self.backend.complete(messages, temperature=self.temperature, max_tokens=self.max_tokens)
        self.last_replies.append((row, slot, reply.text))
        value = parse_score(reply.text)
        if value is None:
            self.failures += 1
            return self.fallback
        return value / SCALE_MAX


# --- the offline default ------------------------------------------------------------------------------------
def _judge(messages: tuple[Message, ...], decimals: int) -> str:
    """A perfect judge's reply to one :class:`VLMRegionReward` question (see :func:`oracle_chat`)."""
    question = messages[-1]
    text = _TEXT.search(question.content)
    if text is None or len(question.images) != 2:
        return "I cannot tell."
    source, edited = (read_png(image) for image in question.images)
    palette = {name: np.array(rgb)[:, None, None] for name, rgb in PALETTE.items()}

    def where(colour: str) -> np.ndarray:  # the square of this colour in the source: exact palette pixels
        return np.all(source == palette[colour], axis=0)

    ask = _ASK_EDIT.search(question.content)
    if ask is not None:
        if ask["old"] not in palette or ask["new"] not in palette or not where(ask["old"]).any():
            return "I cannot tell."
        mean = edited[:, where(ask["old"])].mean(axis=1)
        score = math.exp(-float(((mean - palette[ask["new"]][:, 0, 0]) ** 2).sum()) / COLOUR_SCALE)
    elif "everything else" in question.content:
        named = [c["old"] for c in _CLAUSE.finditer(text["text"]) if c["old"] in palette]
        keep = ~np.any([where(c) for c in named], axis=0) if named else np.ones((SIZE, SIZE), dtype=bool)
        if not keep.any():
            return "I cannot tell."
        score = math.exp(-float(((edited - source)[:, keep] ** 2).mean()) / PRESERVE_SCALE)
    else:
        return "I cannot tell."
    value = round(SCALE_MAX * score, decimals)
    return f"{int(value)}" if decimals == 0 else f"{value:.{decimals}f}"


def oracle_chat(decimals: int = 0) -> Scripted:
    """The chapter's offline judge: a :class:`~neurips26.llm.Scripted` backend that answers each
    :class:`VLMRegionReward` question with the oracle's region score × 10 rounded to ``decimals`` places
    (module docstring), computed from the two attached PNGs and the question's text alone; "I cannot tell."
    to anything else. No VLM noise or bias."""
    decimals = check_int("decimals", decimals, minimum=0, maximum=6)

    def judge(messages: tuple[Message, ...]) -> str:
        return _judge(messages, decimals)

    return Scripted(judge, model=f"oracle-judge-{decimals}")
