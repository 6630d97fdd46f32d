"""A tiny character-level language model that writes arithmetic chains of thought, and the offline chain
sampler built on it: real sampled text whose steps can be kept and whose rest can be regenerated.

**Task.** A problem is a sum of ``m`` two-digit terms, each named by a letter: ``Q:a23b45c67d12``. The
chain adds them one at a time in fixed-width lines — the running total in three digits, the next term's
letter and value, the new total — and ends with the answer::

    Q:a23b45c67d12
    023+b45=068
    068+c67=135
    135+d12=147
    Answer:147

A step has two parts a small transformer can learn: fetch the next term (find its letter in the problem
and copy the two digits after it, an induction-head pattern) and add it (carries included).

The ``m − 1`` lines are the chain's steps (:func:`~neurips26.expansion_utility.llm_chains.segment` with
``min_tokens=1`` gives them back); the answer line is not a step. Every step line has the same width
(:data:`STEP_WIDTH` characters), so the prefix that keeps steps ``1…k`` of any chain of an ``m``-term
problem has one length, and the continuations of many chains, ``r`` each, run as one batch through
:func:`neurips26.nn.generate`.

**Model.** A :class:`~neurips26.nn.Decoder` of two layers of width 64 (four heads, rotary positions),
trained with :func:`neurips26.train.fit` on correct chains of 3–8 terms, the loss on the chain's characters
only (the problem is given). Trained briefly, it copies and adds imperfectly: sampled at temperature 0.8 it
makes mistakes now and then — a wrong copy or a wrong carry — after which the running total is wrong and the
chain, which never checks, stays wrong. That is the mechanism the chapter's simulator abstracts, here in
real sampled text.

**Confidence.** Teacher forcing gives each character's probability under the model; a step's confidence is
the geometric mean of its characters' probabilities and its minimum the smallest of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.expansion_utility.llm_chains import SampledChain, parse_answer, segment
from neurips26.expansion_utility.utility import Utilities, utilities_from_hits
from neurips26.llm import Scripted
from neurips26.nn import Decoder, DecoderConfig, generate
from neurips26.seeding import sub_seed
from neurips26.text import CharTokenizer
from neurips26.text.tasks import masked_cross_entropy
from neurips26.train import choose_device, fit
from neurips26.validation import check_float, check_int, check_seed

LETTERS = "abcdefgh"
ALPHABET = "\n+0123456789:=AQ" + LETTERS + "nrswy"
STEP_WIDTH = len("023+b45=068\n")
ANSWER_WIDTH = len("Answer:147\n")
MIN_TERMS, MAX_TERMS = 3, 8
CONTEXT = 3 + 3 * MAX_TERMS + (MAX_TERMS - 1) * STEP_WIDTH + ANSWER_WIDTH + 1  # <bos> included


def tokenizer() -> CharTokenizer:
    """The model's tokenizer: :data:`ALPHABET` and a ``<bos>`` token."""
    return CharTokenizer(ALPHABET, specials=("<bos>",))


def _check_terms(terms: object) -> np.ndarray:
    if not isinstance(terms, np.ndarray) or terms.ndim != 2 or not np.issubdtype(terms.dtype, np.integer):
        raise TypeError("terms must be a 2-d integer numpy array (problems × terms)")
    if not MIN_TERMS <= terms.shape[1] <= MAX_TERMS:
        raise ValueError(f"terms must have {MIN_TERMS}–{MAX_TERMS} columns; got {terms.shape[1]}")
    if terms.min() < 10 or terms.max() > 99:
        raise ValueError("terms must be two-digit numbers (10–99)")
    return terms


def sample_terms(count: int, m: int, seed: int) -> np.ndarray:
    """``count`` problems of ``m`` two-digit terms ``(count, m)``."""
    count = check_int("count", count, minimum=1)
    m = check_int("m", m, minimum=MIN_TERMS, maximum=MAX_TERMS)
    return np.random.default_rng(check_seed("seed", seed)).integers(10, 100, size=(count, m))


def problem_text(terms: np.ndarray) -> str:
    """``Q:`` and the terms, each after its letter, with the line break."""
    return "Q:" + "".join(f"{LETTERS[i]}{int(t):02d}" for i, t in enumerate(terms)) + "\n"


def step_text(total: int, index: int, term: int) -> str:
    """One step: the running total, the added term (letter ``index`` and value), the new total."""
    return f"{total:03d}+{LETTERS[index]}{term:02d}={total + term:03d}\n"


def chain_text(terms: np.ndarray) -> str:
    """The correct chain of a problem: its steps and its answer line (the problem not included)."""
    total, out = int(terms[0]), []
    for index, term in enumerate(terms[1:], start=1):
        out.append(step_text(total, index, int(term)))
        total += int(term)
    return "".join(out) + f"Answer:{total:03d}\n"


def partial_sums(terms: np.ndarray) -> np.ndarray:
    """The running total after each step ``(m − 1,)``: what a correct step ``k`` writes last."""
    return np.cumsum(terms)[1:]


def first_error(terms: np.ndarray, steps: tuple[str, ...]) -> int:
    """The first step whose new total is not the true running total (0-based); ``len(terms) − 1`` when none
    is (or ``len(steps)`` when the chain is cut short)."""
    truth = partial_sums(terms)
    for k, step in enumerate(steps):
        if k >= len(truth) or step.strip()[-3:] != f"{int(truth[k]):03d}":
            return k
    return len(steps)


@dataclass(frozen=True)
class TinyLMSpec:
    """Sizes and training of the tiny model: ``steps`` updates of ``batch`` chains at rate ``lr``."""

    width: int = 64
    depth: int = 2
    heads: int = 4
    steps: int = 1500
    batch: int = 64
    lr: float = 3e-3
    seed: int = 0

    def config(self) -> DecoderConfig:
        return DecoderConfig(
            vocab_size=tokenizer().vocab_size,
            width=self.width,
            depth=self.depth,
            heads=self.heads,
            context=CONTEXT,
        )


def training_batch(batch: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``batch`` correct chains of random length, right-padded: inputs, targets and the mask of the chain's
    characters (the problem and the padding are not scored)."""
    rng = np.random.default_rng(seed)
    tok = tokenizer()
    rows, scored = [], []
    for m in rng.integers(MIN_TERMS, MAX_TERMS + 1, size=batch):
        terms = rng.integers(10, 100, size=m)
        head = tok.encode(problem_text(terms), bos=True)
        tail = tok.encode(chain_text(terms))
        rows.append(head + tail)
        scored.append(len(head))
    width = max(len(r) for r in rows)
    ids = np.zeros((batch, width), dtype=np.int64)
    mask = np.zeros((batch, width - 1), dtype=bool)
    for i, (row, start) in enumerate(zip(rows, scored, strict=True)):
        ids[i, : len(row)] = row
        mask[i, start - 1 : len(row) - 1] = True  # predicting the chain's characters
    ids_t = torch.from_numpy(ids)
    return ids_t[:, :-1], ids_t[:, 1:], torch.from_numpy(mask)


def _loss(model: Decoder, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    inputs, targets, mask = batch
    return masked_cross_entropy(model(inputs).logits, targets, mask)


def train_tiny_lm(spec: TinyLMSpec, *, progress: bool = False) -> tuple[Decoder, list[float]]:
    """Train the tiny model from ``spec``'s seed on :func:`~neurips26.train.choose_device`'s device; returns
    it (eval mode, on that device) and its loss curve. Under ``torchrun`` it trains data-parallel; each
    rank's loss is the mean over its own rows' chain characters, so the update follows the mean of the
    ranks' means (close to, not exactly, the global batch's mean over characters)."""
    model = Decoder(spec.config(), seed=spec.seed).to(choose_device())
    history = fit(
        model,
        _loss,
        lambda s: training_batch(spec.batch, sub_seed(spec.seed, s)),
        steps=spec.steps,
        seed=spec.seed,
        lr=spec.lr,
        warmup=min(50, spec.steps // 10),
        weight_decay=0.01,
        progress=progress,
        desc="tiny LM",
    )
    return model.eval(), list(history.loss)


class TinyLMSampler:
    """Chains and batched continuations from the tiny ``model`` at ``temperature`` (module doc). Every
    call takes a ``seed``: the same seed gives the same samples on one machine (another CPU may differ)."""

    def __init__(self, model: Decoder, *, temperature: float = 0.8):
        if not isinstance(model, Decoder):
            raise TypeError(f"model must be a neurips26.nn.Decoder; got {type(model).__name__}")
        self.model = model
        self.temperature = check_float("temperature", temperature, minimum=0.0, strict_min=True)
        self.tok = tokenizer()

    def _device(self) -> torch.device:
        return next(self.model.parameters()).device

    def encode_prefixes(self, terms: np.ndarray, kept: list[str]) -> torch.Tensor:
        """Token ids ``(C, L)`` of each problem followed by its kept steps (one length for all)."""
        ids = [self.tok.encode(problem_text(t) + s, bos=True) for t, s in zip(terms, kept, strict=True)]
        if len({len(i) for i in ids}) != 1:
            raise ValueError("prefixes must have one length (fixed-width steps of equally long problems)")
        return torch.tensor(ids, dtype=torch.long, device=self._device())

    def sample_text(self, prompts: torch.Tensor, new: int, seed: int) -> list[str]:
        """The text of ``new`` sampled characters after each prompt row, as one batch."""
        generator = torch.Generator(device=self._device()).manual_seed(check_seed("seed", seed))
        with torch.no_grad():
            out = generate(
                self.model,
                prompts,
                new,
                strategy="temperature",
                temperature=self.temperature,
                generator=generator,
            )
        return [self.tok.decode(row) for row in out[:, prompts.shape[1] :].tolist()]

    def sample(self, terms: np.ndarray, seed: int) -> list[SampledChain]:
        """One chain per problem of ``terms`` ``(C, m)``, as one batch."""
        terms = _check_terms(terms)
        m = terms.shape[1]
        texts = self.sample_text(
            self.encode_prefixes(terms, [""] * len(terms)), (m - 1) * STEP_WIDTH + ANSWER_WIDTH, seed
        )
        return [_chain(text) for text in texts]

    def continue_from(
        self, terms: np.ndarray, chains: list[SampledChain], k: int, r: int, seed: int
    ) -> np.ndarray:
        """Answers (as integers, −1 when unparsed) ``(C, r)`` of ``r`` continuations of every chain that keep
        its steps before ``k`` (0-based) and regenerate the rest; one batch of ``C · r`` sequences."""
        terms = _check_terms(terms)
        m = terms.shape[1]
        k = check_int("k", k, minimum=0, maximum=m - 1)
        r = check_int("r", r, minimum=1)
        if len(chains) != len(terms) or any(len(c.steps) != m - 1 for c in chains):
            raise ValueError(f"chains must be {len(terms)} chains of {m - 1} steps, one per problem")
        kept = ["".join(c.steps[:k]) for c in chains]
        prompts = self.encode_prefixes(terms, kept).repeat_interleave(r, dim=0)
        texts = self.sample_text(prompts, (m - 1 - k) * STEP_WIDTH + ANSWER_WIDTH, seed)
        return np.array([_as_int(parse_answer(t)) for t in texts]).reshape(len(terms), r)

    def step_confidence(self, terms: np.ndarray, chains: list[SampledChain]) -> tuple[np.ndarray, np.ndarray]:
        """Teacher-forced confidence of every step ``(C, m − 1)``: the geometric mean of its characters'
        probabilities, and the smallest of them."""
        terms = _check_terms(terms)
        m = terms.shape[1]
        ids = self.encode_prefixes(terms, ["".join(c.steps) for c in chains])
        with torch.no_grad():
            logp = torch.log_softmax(self.model(ids[:, :-1]).logits.float(), dim=-1)
        token_logp = logp.gather(-1, ids[:, 1:, None])[..., 0].cpu().numpy()
        start = len(self.tok.encode(problem_text(terms[0]), bos=True)) - 1  # predicting the first step
        steps = token_logp[:, start : start + (m - 1) * STEP_WIDTH].reshape(len(terms), m - 1, STEP_WIDTH)
        return np.exp(steps.mean(axis=2)), np.exp(steps.min(axis=2))


def _as_int(answer: str | None) -> int:
    return int(answer) if answer is not None and answer.isdigit() else -1


def _chain(text: str) -> SampledChain:
    answer = parse_answer(text)
    try:
        steps = tuple(segment(text, min_tokens=1))
    except ValueError:
        steps = ()
    return SampledChain(text, steps, answer)


@dataclass(frozen=True)
class LMCell:
    """The tiny model's chains on ``C`` problems of ``m`` terms and their resamples: the problems ``terms``,
    the ``chains``, whether each answers right (``y0``), the first wrong step (``first_error``; ``m − 1``:
    none), the steps' ``confidence`` and ``confidence_min``, and ``hits`` ``(C, m, r)``: whether each of
    ``r`` continuations from step ``k`` (``k = m − 1``: the answer line only) answers right."""

    terms: np.ndarray
    chains: list[SampledChain]
    y0: np.ndarray
    first_error: np.ndarray
    confidence: np.ndarray
    confidence_min: np.ndarray
    hits: np.ndarray

    @property
    def n(self) -> np.ndarray:
        """Steps per chain ``(C,)``."""
        return np.full(len(self.terms), self.terms.shape[1] - 1)

    def utilities(self) -> Utilities:
        """The cell's utilities from the selection and evaluation halves of its resamples and from all of
        them (an even ``r``); a language model has no exact value, so ``exact`` and ``inc_exact`` are
        NaN."""
        return utilities_from_hits(self.hits, self.y0, self.n)


def lm_cell(sampler: TinyLMSampler, terms: np.ndarray, r: int, seed: int) -> LMCell:
    """Sample one chain per problem, then ``r`` continuations from every step of every chain (a chain that
    does not parse into ``m − 1`` steps is kept with its steps padded by its truth, so that it can be
    continued; it is wrong by its own answer)."""
    terms = _check_terms(terms)
    r = check_int("r", r, minimum=2)
    m = terms.shape[1]
    chains = sampler.sample(terms, sub_seed(seed, 0))
    fixed = [c if _well_formed(c, m) else _padded(c, t) for c, t in zip(chains, terms, strict=True)]
    truth = terms.sum(axis=1)
    y0 = np.array([_as_int(c.answer) == t for c, t in zip(chains, truth, strict=True)])
    hits = np.stack(
        [
            sampler.continue_from(terms, fixed, k, r, sub_seed(seed, 1 + k)) == truth[:, None]
            for k in range(m)
        ],
        axis=1,
    )
    confidence, confidence_min = sampler.step_confidence(terms, fixed)
    errors = np.array([first_error(t, c.steps) for t, c in zip(terms, fixed, strict=True)])
    return LMCell(terms, chains, y0, errors, confidence, confidence_min, hits)


def _well_formed(chain: SampledChain, m: int) -> bool:
    return len(chain.steps) == m - 1 and all(len(s) == STEP_WIDTH and s.endswith("\n") for s in chain.steps)


def _padded(chain: SampledChain, terms: np.ndarray) -> SampledChain:
    """A malformed chain's steps, cut or completed to ``m − 1`` fixed-width lines so it can be continued."""
    m = len(terms)
    good = [s for s in chain.steps if len(s) == STEP_WIDTH and s.endswith("\n")][: m - 1]
    truth = segment(chain_text(terms), min_tokens=1)
    return SampledChain(chain.text, tuple(good + truth[len(good) :]), chain.answer)


EVAL_TERMS = (5, 7)
EVAL_PROBLEMS = 100


def evaluate_tiny_lm(model: Decoder, *, problems: int = EVAL_PROBLEMS) -> dict[str, float]:
    """The model's mean loss per chain character on a fixed set of correct chains, and its greedy accuracy
    on their problems (``problems`` of each length in :data:`EVAL_TERMS`; seeds fixed)."""
    problems = check_int("problems", problems, minimum=1)
    tok = tokenizer()
    device = next(model.parameters()).device
    losses, right = [], []
    with torch.no_grad():
        for m in EVAL_TERMS:
            terms = sample_terms(problems, m, seed=10_000 + m)
            heads = [tok.encode(problem_text(t), bos=True) for t in terms]
            ids = torch.tensor([h + tok.encode(chain_text(t)) for h, t in zip(heads, terms, strict=True)])
            ids = ids.to(device)
            mask = torch.zeros(ids.shape[0], ids.shape[1] - 1, dtype=torch.bool, device=device)
            mask[:, len(heads[0]) - 1 :] = True
            losses.append(float(masked_cross_entropy(model(ids[:, :-1]).logits, ids[:, 1:], mask)))
            prompts = ids[:, : len(heads[0])]
            out = generate(model, prompts, ids.shape[1] - prompts.shape[1], strategy="greedy")
            texts = [tok.decode(row) for row in out[:, prompts.shape[1] :].tolist()]
            right += [_as_int(parse_answer(x)) == int(t.sum()) for x, t in zip(texts, terms, strict=True)]
    return {"loss": float(np.mean(losses)), "greedy_accuracy": float(np.mean(right))}


_PROBLEM = re.compile(r"Q:((?:[a-h]\d\d){3,8})")
_STEP = re.compile(r"^\d{3}\+[a-h]\d{2}=\d{3}$", re.MULTILINE)


def chat_backend(sampler: TinyLMSampler, *, seed: int = 0) -> Scripted:
    """The tiny model behind a chat interface, the offline default of
    :class:`~neurips26.expansion_utility.llm_chains.ChatSampler`: it reads the problem (``Q:a23b45…``) and
    any kept steps from the user's message and replies with the model's continuation and answer. Call
    ``i`` samples with seed ``sub_seed(seed, i)``; a message without a problem gets ``"Answer: ?"``."""
    if not isinstance(sampler, TinyLMSampler):
        raise TypeError(f"sampler must be a TinyLMSampler; got {type(sampler).__name__}")
    seed = check_seed("seed", seed)
    calls = [0]

    def policy(messages) -> str:
        user = messages[-1].content
        found = _PROBLEM.search(user)
        calls[0] += 1
        if found is None:
            return "Answer: ?"
        digits = re.findall(r"[a-h](\d\d)", found.group(1))
        terms = np.array([[int(d) for d in digits]])
        kept = [line + "\n" for line in _STEP.findall(user[found.end() :])][: terms.shape[1] - 1]
        prompt = sampler.encode_prefixes(terms, ["".join(kept)])
        new = (terms.shape[1] - 1 - len(kept)) * STEP_WIDTH + ANSWER_WIDTH
        return sampler.sample_text(prompt, new, sub_seed(seed, calls[0]))[0]

    return Scripted(policy, model="tiny-lm")
