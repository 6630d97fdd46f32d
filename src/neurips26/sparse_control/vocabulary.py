"""A closed word vocabulary: every name, letter, label and template word is one token (chapter 12).

The chapter's tasks are read at one final position, so each behaviour is a comparison of a few single
tokens (the indirect object against the subject, one answer letter against the others, ``good`` against
``bad``, ``REFUSE`` against ``OK``). A word tokenizer over a fixed list makes that exact: ``encode``
splits on spaces and maps each word to its id, and ``decode`` joins them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

from neurips26.text import synthetic_documents

SPECIALS = ("<pad>", "<bos>")

NAMES = (
    "mary", "john", "anna", "paul", "lucy", "mark", "emma", "tom", "sara", "jack", "kate", "ben",
    "rose", "adam", "nina", "leo", "ruth", "sam", "iris", "dan", "vera", "max", "jane", "ivan",
)  # fmt: skip
PLACES = ("store", "park", "school", "garden", "office", "beach", "market", "station")
OBJECTS = ("book", "ball", "drink", "key", "gift", "letter", "ring", "cake")
IOI_WORDS = (
    "when", "after", "while", "once", "as", "since", "and", "went", "arrived", "were", "sat", "walked",
    "stayed", "to", "at", "in", "near", "past", "the", ",", "gave", "passed", "handed", "threw", "sent",
    "lent", "a",
)  # fmt: skip

ENTITIES = tuple(f"e{i:02d}" for i in range(50))
RELATIONS = ("colour", "city", "food", "animal")
VALUES = tuple(f"v{i:02d}" for i in range(30))
LETTERS = ("A", "B", "C", "D")
MCQA_WORDS = ("Q:", "Ask:", "?", "A)", "B)", "C)", "D)", "Answer:")

POSITIVE = ("great", "lovely", "happy", "bright", "kind", "calm", "fresh", "warm", "sweet", "fine")
NEGATIVE = ("awful", "sad", "dull", "cold", "rude", "broken", "noisy", "bitter", "dirty", "grim")
NEUTRAL = ("table", "window", "paper", "street", "number", "chair", "door", "river", "plate", "corner")
SENTIMENT_WORDS = ("overall", "frankly", "honestly", "truly", "it", "was", "good", "bad")

MARKERS = ("weapon", "poison", "steal", "hack", "explode", "forge", "smuggle", "attack")
FILLERS = ("cook", "paint", "write", "fix", "plant", "sing", "clean", "draw", "build", "read")
REFUSAL_WORDS = ("please", "help", "me", "reply:", "REFUSE", "OK", ".")

NEUTRAL_SEED = 12
NEUTRAL_DOCUMENTS = 200


def neutral_sentences() -> list[list[str]]:
    """The neutral text: sentences of a seeded word-level Markov language
    (:func:`neurips26.text.synthetic_documents`, seed :data:`NEUTRAL_SEED`), lower-cased, each ending in
    ``.``; none of its made-up words is a task word. (A fresh copy: the text is built once per process.)"""
    return [list(s) for s in _neutral_sentences()]


@cache
def _neutral_sentences() -> tuple[tuple[str, ...], ...]:
    out = []
    for doc in synthetic_documents(NEUTRAL_DOCUMENTS, seed=NEUTRAL_SEED):
        for sentence in doc.text.split("."):
            if sentence.strip():
                out.append((*(w.lower() for w in sentence.split()), "."))
    return tuple(out)


@cache
def neutral_words() -> tuple[str, ...]:
    """The made-up words of the neutral text, sorted."""
    return tuple(sorted({w for s in neutral_sentences() for w in s} - {"."}))


@cache
def words() -> tuple[str, ...]:
    """Every ordinary token, in id order (duplicates across groups removed, first kept)."""
    groups: Iterable[Sequence[str]] = (
        NAMES, PLACES, OBJECTS, IOI_WORDS, ENTITIES, RELATIONS, VALUES, LETTERS, MCQA_WORDS, POSITIVE,
        NEGATIVE, NEUTRAL, SENTIMENT_WORDS, MARKERS, FILLERS, REFUSAL_WORDS, neutral_words(),
    )  # fmt: skip
    out: list[str] = []
    seen: set[str] = set()
    for group in groups:
        for w in group:
            if w not in seen:
                seen.add(w)
                out.append(w)
    return tuple(out)


class WordTokenizer:
    """Space-separated words of a closed vocabulary (default :func:`words`) after the special tokens
    (``<pad>`` = 0, ``<bos>`` = 1)."""

    def __init__(self, vocabulary: Sequence[str] | None = None):
        vocab = tuple(SPECIALS) + tuple(words() if vocabulary is None else vocabulary)
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocabulary must not repeat a word or a special token")
        self.vocab = vocab
        self._index = {w: i for i, w in enumerate(vocab)}
        self.pad, self.bos = self._index["<pad>"], self._index["<bos>"]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def id(self, word: str) -> int:
        """The id of one word (``ValueError`` naming it when outside the vocabulary)."""
        try:
            return self._index[word]
        except KeyError:
            raise ValueError(f"word {word!r} is not in the vocabulary") from None

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """Ids of the space-separated words of ``text`` (``<bos>`` first when asked; no ``<eos>``)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        if eos:
            raise ValueError("this vocabulary has no <eos> token")
        ids = [self.id(w) for w in text.split()]
        return [self.bos, *ids] if bos else ids

    def decode(self, ids: Iterable[int], *, show_special: bool = False) -> str:
        """The words of ``ids`` joined by spaces (special tokens dropped unless ``show_special``)."""
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self.vocab):
                raise ValueError(f"ids must lie in [0, {len(self.vocab)}); got {i}")
            if i >= len(SPECIALS) or show_special:
                out.append(self.vocab[i])
        return " ".join(out)
