"""Chains of thought from a language model: segmentation into steps, and a sampler that continues a kept
prefix through any chat backend of :mod:`neurips26.llm`.

**Segmentation** (:func:`segment`): the reasoning is the text before the final ``Answer:`` line (the
answer is not a step). It is split at line breaks, long lines again after sentence ends (``.``, ``;`` or
``!``/``?`` followed by a space), and a fragment of fewer than ``min_tokens`` whitespace tokens is merged
into the step that follows it (the last one into the step before). Every separator stays with its step, so
joining the steps gives the reasoning back exactly.

**Chat sampling** (:class:`ChatSampler`): a chat server cannot be asked to continue an assistant turn,
so a continuation from step ``k`` is requested by instruction: the problem, the kept steps ``1…k−1``
verbatim, and "continue from the next step". The sampler sees text only (no token log-probabilities), so a
router on its chains can use position, length and step type, not confidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neurips26.llm import ChatModel, Message
from neurips26.validation import check_float, check_int

ANSWER = re.compile(r"^\s*answer\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+")
SYSTEM = (
    "Solve the problem step by step. Write one step per line. "
    "End with a last line of the form 'Answer: <answer>'."
)


def parse_answer(text: str) -> str | None:
    """The answer of the last ``Answer:`` line of ``text``, or None (a parse failure)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    found = ANSWER.findall(text)
    return found[-1] if found else None


def reasoning_of(text: str) -> str:
    """The text before the last ``Answer:`` line (all of it without one)."""
    matches = list(ANSWER.finditer(text))
    return text[: matches[-1].start()] if matches else text


def _pieces(reasoning: str) -> list[str]:
    """Lines (with their line break), long lines cut after sentence ends (with the following space)."""
    pieces = []
    for line in reasoning.splitlines(keepends=True):
        start = 0
        for m in _SENTENCE_END.finditer(line):
            if m.end() < len(line.rstrip("\n")):
                pieces.append(line[start : m.end()])
                start = m.end()
        pieces.append(line[start:])
    return [p for p in pieces if p]


def segment(text: str, *, min_tokens: int = 8) -> list[str]:
    """The steps of a chain's reasoning (module doc); ``ValueError`` when it has no non-blank text."""
    min_tokens = check_int("min_tokens", min_tokens, minimum=1)
    reasoning = reasoning_of(text)
    if not reasoning.strip():
        raise ValueError("text must hold some reasoning before its answer (an empty chain)")
    steps: list[str] = []
    carry = ""
    for piece in _pieces(reasoning):
        carry += piece
        if len(carry.split()) >= min_tokens:
            steps.append(carry)
            carry = ""
    if carry:
        if steps and (len(carry.split()) < min_tokens or not carry.strip()):
            steps[-1] += carry
        else:
            steps.append(carry)
    return steps


@dataclass(frozen=True)
class SampledChain:
    """A chain: the model's ``text``, its ``steps`` (:func:`segment`) and its ``answer`` (None: unparsed)."""

    text: str
    steps: tuple[str, ...]
    answer: str | None


class ChatSampler:
    """Chains and continuations from a chat ``backend`` at ``temperature`` (module doc)."""

    def __init__(
        self, backend: ChatModel, *, temperature: float = 0.7, max_tokens: int = 384, min_tokens: int = 8
    ):
        if not hasattr(backend, "complete"):
            raise TypeError(f"backend must be a neurips26.llm ChatModel; got {type(backend).__name__}")
        self.backend = backend
        self.temperature = check_float("temperature", temperature, minimum=0.0)
        self.max_tokens = check_int("max_tokens", max_tokens, minimum=1)
        self.min_tokens = check_int("min_tokens", min_tokens, minimum=1)

    def _ask(self, user: str) -> str:
        messages = [Message("system", SYSTEM), Message("user", user)]
        return self.backend.complete(messages, temperature=self.temperature, max_tokens=self.max_tokens).text

    def sample(self, problem: str) -> SampledChain:
        """One chain for ``problem``."""
        text = self._ask(problem)
        answer = parse_answer(text)
        try:
            steps = tuple(segment(text, min_tokens=self.min_tokens))
        except ValueError:
            steps = ()
        return SampledChain(text, steps, answer)

    def continue_from(self, problem: str, chain: SampledChain, k: int, r: int) -> list[str | None]:
        """``r`` answers of continuations that keep steps ``1…k`` of ``chain`` (0-based ``k``: the steps
        before ``k``) and regenerate the rest."""
        k = check_int("k", k, minimum=0, maximum=len(chain.steps))
        r = check_int("r", r, minimum=1)
        kept = "".join(chain.steps[:k])
        if k == 0:
            user = problem
        else:
            user = (
                f"{problem}\n\nHere is the beginning of a solution:\n{kept.rstrip()}\n\n"
                "Continue this solution from the next step, one step per line, and end with "
                "'Answer: <answer>'. Do not repeat the steps above."
            )
        return [parse_answer(self._ask(user)) for _ in range(r)]
