"""The chapter's character corpus (in place of the paper's chat data) and the distillation data format.

Three domains with different predictability, so that acceptance and branching matter:

- ``"code"``: a probabilistic context-free grammar of code-like text with matched brackets and a small
  pool of identifiers that recur inside a document, e.g. ``def f(a,b):return g(a)+b;``;
- ``"arithmetic"``: arithmetic traces whose every result is correct and starts the next step,
  ``12+7=19;19*3=57;57-8=49;`` (deterministic once the operator and operand are read);
- ``"dialogue"``: templated question/answer pairs, ``Q: what colour is the sky? A: blue.``

Every generator takes ``n`` and a ``seed`` and is a pure function of them. All text lies in the fixed
:data:`ALPHABET`; :func:`tokenizer` maps it to one id per character plus ``<bos>`` and ``<eos>``. A
document is encoded as ``<bos> text <eos>``; a prompt (:func:`prompts`) is a prefix of a document, and the
response is what the target model continues it with.

Distillation data (:class:`DistillData`) follows the chapter's alignment convention: the target's logits
at position ``j`` predict token ``j+1``; ``loss_mask[b, j]`` is True where ``tokens[b, j+1]`` is a token the
target generated (a response token), False on the prompt and on the padding after a row's end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import torch
from torch import Tensor

from neurips26.text.tokenizer import CharTokenizer
from neurips26.validation import check_choice, check_int, check_seed

#: Every character the corpus uses (space first); the tokenizer's ids follow this order.
ALPHABET: str = (
    " !'(),-.:;<=>?[]{}*+/" + "0123456789" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "abcdefghijklmnopqrstuvwxyz"
)
SPECIALS: tuple[str, ...] = ("<bos>", "<eos>")
DOMAINS: tuple[str, ...] = ("code", "arithmetic", "dialogue")


@cache
def tokenizer() -> CharTokenizer:
    """The chapter's tokenizer: one id per :data:`ALPHABET` character, then ``<bos>``, ``<eos>``."""
    return CharTokenizer(ALPHABET, specials=SPECIALS)


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([check_seed("seed", seed), stream])


# ------------------------------------------------------------------------------------ (a) code-like text

_NAMES = ("a", "b", "x", "y", "n", "i", "k", "acc", "val", "tmp", "total", "count", "item", "node", "key")
_FUNCS = ("f", "g", "h", "add", "mul", "get", "put", "step", "norm", "size")


class _CodeGrammar:
    """A small PCFG; ``names``/``funcs`` are the document's identifier pools (so identifiers repeat)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.names = list(rng.choice(_NAMES, size=4, replace=False))
        self.funcs = list(rng.choice(_FUNCS, size=3, replace=False))

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return str(options[int(self.rng.integers(len(options)))])

    def expr(self, depth: int) -> str:
        # expr → term | term op expr ; the deeper, the likelier a plain term
        term = self.term(depth)
        if depth < 3 and self.rng.random() < 0.35:
            return term + self.pick(("+", "-", "*")) + self.expr(depth + 1)
        return term

    def term(self, depth: int) -> str:
        r = self.rng.random() if depth < 3 else 0.0
        if r < 0.5:
            return self.pick(self.names) if self.rng.random() < 0.75 else str(int(self.rng.integers(10)))
        if r < 0.75:  # call: f(expr,expr)
            args = ",".join(self.expr(depth + 1) for _ in range(int(self.rng.integers(1, 3))))
            return f"{self.pick(self.funcs)}({args})"
        if r < 0.88:
            return f"({self.expr(depth + 1)})"
        return f"[{self.expr(depth + 1)},{self.expr(depth + 1)}]"

    def statement(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            params = ",".join(self.rng.choice(self.names, size=int(self.rng.integers(1, 3)), replace=False))
            return f"def {self.pick(self.funcs)}({params}):return {self.expr(0)};"
        if r < 0.7:
            return f"{self.pick(self.names)}={self.expr(0)};"
        if r < 0.88:
            cmp = self.pick(("<", ">", "=="))
            var = self.pick(self.names)
            return f"if {var}{cmp}{int(self.rng.integers(10))}:{self.pick(self.names)}={self.expr(1)};"
        return f"print({self.pick(self.names)});"


def code_documents(n: int, seed: int, *, length: int = 160) -> list[str]:
    """``n`` code-like documents of about ``length`` characters (whole statements, no trailing space)."""
    n, length = check_int("n", n, minimum=0), check_int("length", length, minimum=1)
    rng = _rng(seed, 0)
    docs = []
    for _ in range(n):
        grammar, text = _CodeGrammar(rng), ""
        while len(text) < length:
            text += grammar.statement()
        docs.append(text)
    return docs


# ----------------------------------------------------------------------------------- (b) arithmetic

_ARITH_MAX = 999


def arithmetic_step(value: int, rng: np.random.Generator) -> tuple[str, int]:
    """One correct step ``"v op b=r;"`` from ``value``; results stay in ``0 … 999``."""
    op = ("+", "-", "*")[int(rng.integers(3))]
    b = int(rng.integers(2, 10)) if op == "*" else int(rng.integers(1, 50))
    if op == "*" and value * b > _ARITH_MAX:
        op = "-" if value > b else "+"
    if op == "-" and value - b < 0:
        op = "+"
    if op == "+" and value + b > _ARITH_MAX:
        op = "-"
    result = {"+": value + b, "-": value - b, "*": value * b}[op]
    return f"{value}{op}{b}={result};", result


def arithmetic_documents(n: int, seed: int, *, length: int = 160) -> list[str]:
    """``n`` arithmetic traces: each step's left operand is the previous step's (correct) result."""
    n, length = check_int("n", n, minimum=0), check_int("length", length, minimum=1)
    rng = _rng(seed, 1)
    docs = []
    for _ in range(n):
        value, text = int(rng.integers(1, 100)), ""
        while len(text) < length:
            step, value = arithmetic_step(value, rng)
            text += step
        docs.append(text)
    return docs


# ------------------------------------------------------------------------------------- (c) dialogue

_FACTS = (
    ("what colour is the sky?", "blue."),
    ("what colour is grass?", "green."),
    ("what colour is snow?", "white."),
    ("where does a fish live?", "in water."),
    ("where does a bird live?", "in a nest."),
    ("how many legs does a cat have?", "four."),
    ("how many legs does a bird have?", "two."),
    ("what do cows drink?", "water."),
    ("what do bees make?", "honey."),
    ("what is the opposite of hot?", "cold."),
    ("what is the opposite of up?", "down."),
    ("what comes after monday?", "tuesday."),
)
_PEOPLE = ("Ada", "Bob", "Cleo", "Dan", "Eve", "Finn", "Gus", "Ivy", "Jo", "Kim")
_THINGS = ("tea", "jazz", "chess", "rain", "maps", "soup", "kites", "books")
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _dialogue_pair(rng: np.random.Generator) -> str:
    r = rng.random()
    if r < 0.45:
        question, answer = _FACTS[int(rng.integers(len(_FACTS)))]
    elif r < 0.7:
        a, b = (int(v) for v in rng.integers(0, 6, size=2))
        question, answer = f"what is {a} plus {b}?", f"{_NUMBER_WORDS[a + b]}."
    elif r < 0.85:
        question, answer = "what is your name?", f"my name is {_PEOPLE[int(rng.integers(len(_PEOPLE)))]}."
    else:
        thing = _THINGS[int(rng.integers(len(_THINGS)))]
        question, answer = f"do you like {thing}?", ("yes, I do.", "no, I do not.")[int(rng.integers(2))]
    return f"Q: {question} A: {answer}"


def dialogue_documents(n: int, seed: int, *, length: int = 160) -> list[str]:
    """``n`` dialogues of templated ``Q: … A: …`` pairs separated by a space."""
    n, length = check_int("n", n, minimum=0), check_int("length", length, minimum=1)
    rng = _rng(seed, 2)
    docs = []
    for _ in range(n):
        pairs: list[str] = []
        while len(" ".join(pairs)) < length:
            pairs.append(_dialogue_pair(rng))
        docs.append(" ".join(pairs))
    return docs


_GENERATORS: dict[str, Callable[..., list[str]]] = {
    "code": code_documents,
    "arithmetic": arithmetic_documents,
    "dialogue": dialogue_documents,
}


def documents(domain: str, n: int, seed: int, *, length: int = 160) -> list[str]:
    """``n`` documents of one domain (``"code"``, ``"arithmetic"``, ``"dialogue"``)."""
    return _GENERATORS[check_choice("domain", domain, DOMAINS)](n, seed, length=length)


def mixed_documents(n: int, seed: int, *, domains: tuple[str, ...] = DOMAINS, length: int = 160) -> list[str]:
    """``n`` documents drawn evenly from ``domains`` (round robin), each domain with its own stream."""
    n = check_int("n", n, minimum=0)
    if not isinstance(domains, tuple) or not domains:
        raise TypeError(f"domains must be a non-empty tuple of domain names; got {domains!r}")
    for d in domains:
        check_choice("domains", d, DOMAINS)
    per = {d: documents(d, -(-n // len(domains)), seed, length=length) for d in dict.fromkeys(domains)}
    taken = dict.fromkeys(per, 0)
    out = []
    for i in range(n):
        d = domains[i % len(domains)]
        out.append(per[d][taken[d]])
        taken[d] += 1
    return out


def corpus_tokens(docs: list[str]) -> np.ndarray:
    """One int64 token stream ``<bos> doc₁ <eos> <bos> doc₂ <eos> …`` for next-token training."""
    tok = tokenizer()
    ids: list[int] = []
    for doc in docs:
        ids.extend(tok.encode(doc, bos=True, eos=True))
    return np.asarray(ids, dtype=np.int64)


def prompts(domain: str, n: int, seed: int, *, min_chars: int = 16, max_chars: int = 40) -> list[str]:
    """``n`` prompts of one domain: a prefix of ``min_chars … max_chars`` characters of a fresh document.

    Encode a prompt with ``tokenizer().encode(prompt, bos=True)``; the response is the target's greedy
    continuation. Use a ``seed`` not used for the target's training documents to get held-out prompts.
    """
    n = check_int("n", n, minimum=0)
    min_chars = check_int("min_chars", min_chars, minimum=1)
    max_chars = check_int("max_chars", max_chars, minimum=min_chars)
    docs = documents(domain, n, seed, length=max_chars + 1)
    cuts = _rng(seed, 3 + DOMAINS.index(domain)).integers(min_chars, max_chars + 1, size=n)
    return [doc[: int(c)] for doc, c in zip(docs, cuts, strict=True)]


# -------------------------------------------------------------------------------- distillation data


@dataclass(frozen=True)
class DistillData:
    """Teacher data for the drafters: the target's own greedy responses and its outputs on them.

    ``tokens`` ``(B, T)`` long: prompt, then the target's response, then padding (``<eos>`` ids) to ``T``.
    ``logits`` ``(B, T, V)``: the target's logits; position ``j`` predicts ``tokens[:, j+1]``.
    ``hidden`` ``(B, T, depth+1, H)``: the target's residual stream (embedding, then each block's output).
    ``loss_mask`` ``(B, T)`` bool: True where ``tokens[:, j+1]`` is a generated (response) token.
    """

    tokens: Tensor
    logits: Tensor
    hidden: Tensor
    loss_mask: Tensor

    def __post_init__(self) -> None:
        for name in ("tokens", "logits", "hidden", "loss_mask"):
            if not isinstance(getattr(self, name), Tensor):
                raise TypeError(f"{name} must be a torch.Tensor; got {type(getattr(self, name)).__name__}")
        if self.tokens.dim() != 2 or self.tokens.dtype != torch.long:
            raise ValueError(f"tokens must be a (B, T) long tensor; got {tuple(self.tokens.shape)}")
        b, t = self.tokens.shape
        if self.logits.dim() != 3 or self.logits.shape[:2] != (b, t):
            raise ValueError(f"logits must have shape ({b}, {t}, V); got {tuple(self.logits.shape)}")
        if self.hidden.dim() != 4 or self.hidden.shape[:2] != (b, t):
            raise ValueError(f"hidden must have shape ({b}, {t}, depth+1, H); got {tuple(self.hidden.shape)}")
        if self.loss_mask.shape != (b, t) or self.loss_mask.dtype != torch.bool:
            raise ValueError(f"loss_mask must be a ({b}, {t}) bool tensor; got {tuple(self.loss_mask.shape)}")

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def subset(self, rows: slice | Tensor | list[int]) -> DistillData:
        """The rows ``rows`` (e.g. a train/validation split)."""
        return DistillData(self.tokens[rows], self.logits[rows], self.hidden[rows], self.loss_mask[rows])


def interleaved_prompts(domains: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` held-out prompts spread evenly over ``domains`` (the first ones get the remainder), interleaved
    domain by domain so that any prefix of the list mixes the domains."""
    if isinstance(domains, str) or not isinstance(domains, Sequence) or not domains:
        raise TypeError(f"domains must be a non-empty sequence of domain names; got {domains!r}")
    n = check_int("n", n, minimum=0)
    per = [n // len(domains) + (i < n % len(domains)) for i in range(len(domains))]
    lists = [prompts(d, k, seed) for d, k in zip(domains, per, strict=True)]
    return [lst[i] for i in range(max(per, default=0)) for lst in lists if i < len(lst)]
