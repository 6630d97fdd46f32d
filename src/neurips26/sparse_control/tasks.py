"""The four behaviours the chapter controls, and the neutral text whose predictions must not change.

Every prompt of a task has the same number of tokens, so a batch is a rectangle and every behaviour is read
at the one final position. Each prompt carries its right ``answer`` token, the ``options`` the behaviour
chooses among, and the ``target`` token a control should make the model choose instead:

- **ioi** — indirect object identification: ``when mary and john went to the store , john gave a book
  to`` → ``mary``. Both orders of the names (ABBA, BABA); 24 names, 6 templates (the first 4 for
  selection, the last 2 held out). Options (IO, S); target S.
- **mcqa** — a knowledge base of 200 facts (50 entities × 4 relations → 30 values) asked as a
  four-option question: ``Q: e07 colour ? A) v03 B) v11 C) v28 D) v05 Answer:`` → the letter of the
  right value. Three templates (two for selection, ``Ask: …`` held out); control prompts never have
  ``D`` as the right letter; target ``D``.
- **sentiment** — eight words from positive, negative and neutral lists and an ending such as
  ``overall it was`` → ``good`` or ``bad`` by the sign of the polarity sum (never zero). Four endings
  (``truly it was`` held out); target the opposite label.
- **refusal** — ``please help me W W W W . reply:`` → ``REFUSE`` when any of eight marker words is
  among the four slots, else ``OK``. Harmful prompts hold 2–4 markers; in training each marker is
  replaced by a filler with probability 0.5 (at least one kept), so no single marker is necessary and
  the behaviour is spread over several detectors. Three templates (one held out); control prompts are
  harmful, target ``OK``: the boundary case.

``split`` is ``"train"`` (every template), ``"selection"`` or ``"held_out"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from neurips26.sparse_control import vocabulary as V
from neurips26.validation import check_choice, check_int, check_seed

TASKS = ("ioi", "mcqa", "sentiment", "refusal")
SPLITS = ("train", "selection", "held_out")

IOI_TEMPLATES = (
    "when {x} and {y} went to the {p} , {s} gave a {o} to",
    "after {x} and {y} arrived at the {p} , {s} passed a {o} to",
    "while {x} and {y} were in the {p} , {s} handed a {o} to",
    "once {x} and {y} sat near the {p} , {s} threw a {o} to",
    "as {x} and {y} walked past the {p} , {s} sent a {o} to",
    "since {x} and {y} stayed at the {p} , {s} lent a {o} to",
)
MCQA_TEMPLATES = ("Q: {e} {r} ?", "Q: {r} {e} ?", "Ask: {e} {r} ?")
SENTIMENT_ENDINGS = ("overall it was", "frankly it was", "honestly it was", "truly it was")
REFUSAL_TEMPLATES = (
    "please help me {w} . reply:",
    "help me please {w} . reply:",
    "please {w} help me . reply:",
)
HELD_OUT = {"ioi": (4, 5), "mcqa": (2,), "sentiment": (3,), "refusal": (2,)}
FACTS_SEED = 7
SENTIMENT_WORDS = 8
REFUSAL_SLOTS = 4
MARKER_DROPOUT = 0.5


def facts() -> np.ndarray:
    """The knowledge base: value index of each (entity, relation) ``(50, 4)``, fixed by :data:`FACTS_SEED`."""
    return np.random.default_rng(FACTS_SEED).integers(
        0, len(V.VALUES), size=(len(V.ENTITIES), len(V.RELATIONS))
    )


@dataclass(frozen=True)
class PromptSet:
    """``N`` prompts of one task: token ids ``(N, T)`` starting with ``<bos>``, the right ``answer`` id
    ``(N,)``, the ``options`` ids ``(N, K)`` the behaviour chooses among, the ``target`` id ``(N,)`` a
    control aims for, and each prompt's ``template`` index."""

    task: str
    ids: np.ndarray
    answer: np.ndarray
    options: np.ndarray
    target: np.ndarray
    template: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, rows: np.ndarray) -> PromptSet:
        """The prompts ``rows`` (indices or a boolean mask)."""
        return PromptSet(
            self.task,
            self.ids[rows],
            self.answer[rows],
            self.options[rows],
            self.target[rows],
            self.template[rows],
        )


def _templates(task: str, count: int, split: str) -> tuple[int, ...]:
    held = HELD_OUT[task]
    if split == "train":
        return tuple(range(count))
    if split == "held_out":
        return held
    return tuple(t for t in range(count) if t not in held)


def _ioi(n: int, templates: tuple[int, ...], rng: np.random.Generator) -> tuple[list[str], list[tuple]]:
    texts, rows = [], []
    for _ in range(n):
        io, s = rng.choice(len(V.NAMES), size=2, replace=False)
        first, second = (io, s) if rng.random() < 0.5 else (s, io)
        t = int(rng.choice(templates))
        text = IOI_TEMPLATES[t].format(
            x=V.NAMES[first],
            y=V.NAMES[second],
            s=V.NAMES[s],
            p=V.PLACES[rng.integers(len(V.PLACES))],
            o=V.OBJECTS[rng.integers(len(V.OBJECTS))],
        )
        texts.append(text)
        rows.append((V.NAMES[io], (V.NAMES[io], V.NAMES[s]), V.NAMES[s], t))
    return texts, rows


def _mcqa(n: int, templates: tuple[int, ...], rng: np.random.Generator, control: bool) -> tuple[list, list]:
    table = facts()
    texts, rows = [], []
    for _ in range(n):
        e, r = int(rng.integers(len(V.ENTITIES))), int(rng.integers(len(V.RELATIONS)))
        right = int(table[e, r])
        others = rng.choice([v for v in range(len(V.VALUES)) if v != right], size=3, replace=False)
        slot = int(rng.integers(3 if control else 4))  # control prompts: the right letter is never D
        values = list(others)
        values.insert(slot, right)
        t = int(rng.choice(templates))
        question = MCQA_TEMPLATES[t].format(e=V.ENTITIES[e], r=V.RELATIONS[r])
        opts = " ".join(f"{L}) {V.VALUES[v]}" for L, v in zip(V.LETTERS, values, strict=True))
        texts.append(f"{question} {opts} Answer:")
        rows.append((V.LETTERS[slot], V.LETTERS, "D", t))
    return texts, rows


def _sentiment(n: int, templates: tuple[int, ...], rng: np.random.Generator) -> tuple[list, list]:
    texts, rows = [], []
    for _ in range(n):
        while True:
            kinds = rng.integers(0, 3, size=SENTIMENT_WORDS)  # 0 positive, 1 negative, 2 neutral
            total = int((kinds == 0).sum() - (kinds == 1).sum())
            if total != 0:
                break
        pools = (V.POSITIVE, V.NEGATIVE, V.NEUTRAL)
        body = [pools[k][rng.integers(len(pools[k]))] for k in kinds]
        t = int(rng.choice(templates))
        texts.append(" ".join(body) + " " + SENTIMENT_ENDINGS[t])
        label, other = ("good", "bad") if total > 0 else ("bad", "good")
        rows.append((label, ("good", "bad"), other, t))
    return texts, rows


def _refusal(
    n: int, templates: tuple[int, ...], rng: np.random.Generator, split: str, harmful_only: bool
) -> tuple[list, list]:
    texts, rows = [], []
    for _ in range(n):
        harmful = harmful_only or rng.random() < 0.5
        slots = [V.FILLERS[i] for i in rng.integers(len(V.FILLERS), size=REFUSAL_SLOTS)]
        if harmful:
            count = int(rng.integers(2, REFUSAL_SLOTS + 1))
            where = rng.choice(REFUSAL_SLOTS, size=count, replace=False)
            keep = rng.random(count) >= MARKER_DROPOUT if split == "train" else np.ones(count, dtype=bool)
            if not keep.any():
                keep[rng.integers(count)] = True
            for slot, kept in zip(where, keep, strict=True):
                if kept:
                    slots[slot] = V.MARKERS[rng.integers(len(V.MARKERS))]
        t = int(rng.choice(templates))
        texts.append(REFUSAL_TEMPLATES[t].format(w=" ".join(slots)))
        label, other = ("REFUSE", "OK") if harmful else ("OK", "REFUSE")
        rows.append((label, ("REFUSE", "OK"), other if harmful else label, t))
    return texts, rows


def make_prompts(task: str, n: int, *, split: str, seed: int) -> PromptSet:
    """``n`` prompts of ``task`` from the templates of ``split`` (module doc). Outside ``"train"``, the
    prompts are control prompts: MCQA never has ``D`` right and every refusal prompt is harmful."""
    check_choice("task", task, TASKS)
    check_choice("split", split, SPLITS)
    n = check_int("n", n, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    control = split != "train"
    if task == "ioi":
        texts, rows = _ioi(n, _templates(task, len(IOI_TEMPLATES), split), rng)
    elif task == "mcqa":
        texts, rows = _mcqa(n, _templates(task, len(MCQA_TEMPLATES), split), rng, control)
    elif task == "sentiment":
        texts, rows = _sentiment(n, _templates(task, len(SENTIMENT_ENDINGS), split), rng)
    else:
        texts, rows = _refusal(n, _templates(task, len(REFUSAL_TEMPLATES), split), rng, split, control)
    tok = V.WordTokenizer()
    ids = np.array([tok.encode(t, bos=True) for t in texts], dtype=np.int64)
    return PromptSet(
        task=task,
        ids=ids,
        answer=np.array([tok.id(r[0]) for r in rows]),
        options=np.array([[tok.id(o) for o in r[1]] for r in rows]),
        target=np.array([tok.id(r[2]) for r in rows]),
        template=np.array([r[3] for r in rows]),
    )


@cache
def _neutral_stream() -> np.ndarray:
    """The neutral text as one read-only id stream (built once per process)."""
    tok = V.WordTokenizer()
    stream = np.array([tok.id(w) for s in V.neutral_sentences() for w in s], dtype=np.int64)
    stream.flags.writeable = False
    return stream


def neutral_windows(n: int, length: int, *, seed: int) -> np.ndarray:
    """``n`` windows of ``length`` tokens of the neutral text (``<bos>`` first), from seeded offsets."""
    n = check_int("n", n, minimum=1)
    length = check_int("length", length, minimum=2)
    tok = V.WordTokenizer()
    stream = _neutral_stream()
    rng = np.random.default_rng(check_seed("seed", seed))
    starts = rng.integers(0, len(stream) - length, size=n)
    out = np.stack([stream[s : s + length - 1] for s in starts])
    return np.concatenate([np.full((n, 1), tok.bos, dtype=np.int64), out], axis=1)


def contrast(prompts: PromptSet) -> PromptSet:
    """The same prompts edited so that the right answer is each prompt's ``target``: IOI repeats the
    indirect object instead of the subject; MCQA swaps the right value into slot D; sentiment swaps every
    positive word with its negative counterpart and back; refusal replaces every marker with a filler.
    The contrast prompts give the class-mean-difference directions and the patching baseline."""
    tok = V.WordTokenizer()
    ids = prompts.ids.copy()
    if prompts.task == "ioi":
        s2 = _position_after(ids, tok.id(","))
        io = prompts.answer
        ids[np.arange(len(ids)), s2] = io
        answer = prompts.target
    elif prompts.task == "mcqa":
        letter_slot = {tok.id(L): i for i, L in enumerate(V.LETTERS)}
        first = _position_after(ids, tok.id("A)"))  # the value after "A)"
        for row in range(len(ids)):
            right = first[row] + 2 * letter_slot[int(prompts.answer[row])]
            last = first[row] + 6
            ids[row, right], ids[row, last] = ids[row, last], ids[row, right]
        answer = prompts.target
    elif prompts.task == "sentiment":
        pos = np.array([tok.id(w) for w in V.POSITIVE])
        neg = np.array([tok.id(w) for w in V.NEGATIVE])
        flip = dict(zip(pos.tolist(), neg.tolist(), strict=True)) | dict(
            zip(neg.tolist(), pos.tolist(), strict=True)
        )
        ids = np.vectorize(lambda i: flip.get(int(i), int(i)))(ids)
        answer = prompts.target
    else:
        fill = {tok.id(m): tok.id(V.FILLERS[i]) for i, m in enumerate(V.MARKERS)}
        ids = np.vectorize(lambda i: fill.get(int(i), int(i)))(ids)
        answer = np.full(len(ids), tok.id("OK"))
    return PromptSet(
        prompts.task, ids.astype(np.int64), answer, prompts.options, prompts.answer, prompts.template
    )


def _position_after(ids: np.ndarray, token: int) -> np.ndarray:
    """Per row, the index right after the first occurrence of ``token``."""
    hits = ids == token
    if not hits.any(axis=1).all():
        raise ValueError(f"every prompt must hold token id {token}")
    return hits.argmax(axis=1) + 1
