"""Offline text corpora for small language models, their train/validation split and batches.

Every corpus is on every machine that runs Python, with no download:

- ``"prose"`` — the English help texts of the standard library's ``pydoc_data.topics`` module: the
  dictionary ``pydoc_data.topics.topics`` (79 entries in Python 3.11, ~465,000 characters), which
  CPython's release process generates from the language reference and which ``help("topics")`` prints.
  One document per entry, in sorted key order.
- ``"code"`` — Python source: the files named in :data:`CODE_FILES`, read as UTF-8 from the standard
  library directory ``sysconfig.get_paths()["stdlib"]`` (~543,000 characters in Python 3.11). One
  document per file, in the listed order.
- ``"synthetic"`` — sentences of a seeded word-level Markov language (:func:`synthetic_documents`):
  made-up words, each followed by one of a few likely successors. Cheap, unlimited and with a known
  structure, for tests and smoke runs.

The text of ``"prose"`` and ``"code"`` is fixed for a given Python version (CPython ships it), so two
machines with the same Python see the same characters; :attr:`Corpus.sha256` prints a fingerprint a
notebook can show. ``"synthetic"`` is fixed for a given seed.

The split is by document: a seeded draw assigns whole documents to validation until it holds about
``val_fraction`` of the characters, so no text of a validation document is ever trained on.
"""

from __future__ import annotations

import hashlib
import sysconfig
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from neurips26.text.tokenizer import ByteTokenizer, CharTokenizer, Tokenizer
from neurips26.validation import check_choice, check_float, check_int, check_seed

CORPORA: tuple[str, ...] = ("prose", "code", "synthetic")
TOKENIZERS: tuple[str, ...] = ("byte", "char")

CODE_FILES: tuple[str, ...] = (
    "heapq.py", "bisect.py", "textwrap.py", "fractions.py", "colorsys.py", "pprint.py", "queue.py",
    "graphlib.py", "functools.py", "dataclasses.py", "statistics.py", "difflib.py", "calendar.py",
    "random.py", "copy.py", "fnmatch.py", "contextlib.py", "numbers.py", "operator.py", "reprlib.py",
    "sched.py", "csv.py", "base64.py", "weakref.py",
)  # fmt: skip
"""Pure-Python standard-library modules present as single files in CPython 3.11-3.14."""

SEPARATOR = "\n\n"
"""Placed between two documents when a split's documents are joined into one text."""


@dataclass(frozen=True)
class Document:
    """One unit of a corpus: a name (topic key, file name, ...) and its text."""

    name: str
    text: str


def prose_documents() -> list[Document]:
    """The entries of ``pydoc_data.topics.topics``, one document each, sorted by key."""
    from pydoc_data.topics import topics

    return [Document(name, topics[name]) for name in sorted(topics)]


def code_documents(files: Sequence[str] = CODE_FILES) -> list[Document]:
    """The standard-library source files ``files`` (paths relative to the stdlib directory)."""
    if isinstance(files, str) or not files:
        raise TypeError("files must be a non-empty sequence of file names")
    root = Path(sysconfig.get_paths()["stdlib"])
    documents = []
    for name in files:
        path = root / name
        if not path.is_file():
            raise FileNotFoundError(
                f"standard-library source {path} is missing (this Python ships no source for {name!r}); "
                "use the 'prose' or 'synthetic' corpus instead"
            )
        documents.append(Document(name, path.read_text(encoding="utf-8")))
    return documents


def synthetic_documents(
    n_documents: int = 400, *, seed: int, n_words: int = 64, successors: int = 4, sentences: int = 6
) -> list[Document]:
    """Paragraphs of a seeded word-level Markov language.

    The seed fixes a vocabulary of ``n_words`` made-up lower-case words (consonant-vowel syllables),
    and for every word ``successors`` possible next words with Dirichlet(1) probabilities. A sentence
    starts at a uniformly drawn word, walks the chain for 3-11 more words, and ends with ". "; a
    document is ``sentences`` sentences. A model that learns the chain predicts each next word from
    ``successors`` candidates instead of ``n_words``.
    """
    n_documents = check_int("n_documents", n_documents, minimum=1)
    n_words = check_int("n_words", n_words, minimum=2, maximum=10_000)
    successors = check_int("successors", successors, minimum=1, maximum=n_words)
    sentences = check_int("sentences", sentences, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < n_words:
        syllables = rng.integers(1, 4)
        word = "".join(rng.choice(list(consonants)) + rng.choice(list(vowels)) for _ in range(syllables))
        if word not in seen:
            seen.add(word)
            words.append(word)
    # Transition table: next[w] lists the successors of word w, prob[w] their probabilities.
    nexts = np.stack([rng.choice(n_words, size=successors, replace=False) for _ in range(n_words)])
    cumulative = np.cumsum(rng.dirichlet(np.ones(successors), size=n_words), axis=1)
    documents = []
    for d in range(n_documents):
        out = []
        for _ in range(sentences):
            w = int(rng.integers(n_words))
            sentence = [words[w]]
            for _ in range(int(rng.integers(3, 12))):
                k = min(int(np.searchsorted(cumulative[w], rng.random(), side="right")), successors - 1)
                w = int(nexts[w, k])  # successor k drawn with probability p[w, k]
                sentence.append(words[w])
            out.append(" ".join(sentence).capitalize() + ".")
        documents.append(Document(f"synthetic-{d:05d}", " ".join(out)))
    return documents


def split_documents(
    documents: Sequence[Document], *, val_fraction: float, seed: int
) -> tuple[list[Document], list[Document]]:
    """Assign whole documents to (train, validation).

    Documents are visited in a seeded random order; one joins validation while validation stays within
    ``val_fraction`` of all characters (at least one document always does). Both parts keep the input
    order. The parts are disjoint and together hold every document.
    """
    if len(documents) < 2 or not all(isinstance(d, Document) for d in documents):
        raise ValueError("documents must be a sequence of at least two Document objects")
    names = [d.name for d in documents]
    if len(set(names)) != len(names):
        raise ValueError("document names must be distinct")
    val_fraction = check_float("val_fraction", val_fraction, minimum=0.0, maximum=0.5, strict_min=True)
    rng = np.random.default_rng(check_seed("seed", seed))
    target = val_fraction * sum(len(d.text) for d in documents)
    chosen: set[int] = set()
    size = 0
    for i in rng.permutation(len(documents)):
        if size + len(documents[i].text) <= target or not chosen:
            chosen.add(int(i))
            size += len(documents[i].text)
    train = [d for i, d in enumerate(documents) if i not in chosen]
    val = [d for i, d in enumerate(documents) if i in chosen]
    return train, val


class TokenBatches:
    """Random windows of a token stream for next-token prediction, a pure function of the step.

    ``batches(step)`` returns ``(inputs, targets)``, two ``LongTensor`` of shape ``(batch_size,
    context)`` with ``targets[b, t] = inputs[b, t + 1]`` in the stream (the next token). The windows'
    start offsets are drawn uniformly by ``numpy.random.default_rng([seed, step])``, so a step's batch
    does not depend on which steps ran before it (resuming, or skipping, gives the same data).
    Iterating yields steps 0, 1, 2, ... forever.
    """

    def __init__(self, tokens: np.ndarray, *, batch_size: int, context: int, seed: int) -> None:
        self.tokens = _check_tokens(tokens)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.context = check_int("context", context, minimum=1)
        if self.context + 1 > len(self.tokens):
            raise ValueError(f"context must be < the number of tokens ({len(self.tokens)}); got {context}")
        self.seed = check_seed("seed", seed)

    def __call__(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        step = check_int("step", step, minimum=0)
        rng = np.random.default_rng([self.seed, step])
        starts = rng.integers(0, len(self.tokens) - self.context, size=self.batch_size)
        index = starts[:, None] + np.arange(self.context + 1)  # (B, T + 1)
        window = torch.from_numpy(self.tokens[index])
        return window[:, :-1], window[:, 1:]

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        step = 0
        while True:
            yield self(step)
            step += 1


def sequential_batches(
    tokens: np.ndarray, *, batch_size: int, context: int, max_batches: int | None = None
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Non-overlapping windows in stream order, for a deterministic validation loss.

    Window ``k`` covers tokens ``[k T, (k + 1) T]`` (inputs the first ``T``, targets shifted by one);
    windows are grouped ``batch_size`` at a time, a last partial batch is kept, and at most
    ``max_batches`` batches are returned.
    """
    tokens = _check_tokens(tokens)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    context = check_int("context", context, minimum=1)
    if max_batches is not None:
        max_batches = check_int("max_batches", max_batches, minimum=1)
    n_windows = (len(tokens) - 1) // context
    if n_windows == 0:
        raise ValueError(f"context must be < the number of tokens ({len(tokens)}); got {context}")
    if max_batches is not None:
        n_windows = min(n_windows, max_batches * batch_size)
    index = np.arange(n_windows)[:, None] * context + np.arange(context + 1)  # (N, T + 1)
    windows = torch.from_numpy(tokens[index])
    return [(w[:, :-1], w[:, 1:]) for w in windows.split(batch_size)]


def _check_tokens(tokens: object) -> np.ndarray:
    if not isinstance(tokens, np.ndarray) or tokens.ndim != 1 or tokens.dtype != np.int64:
        raise TypeError("tokens must be a 1-D numpy array of int64 token ids")
    if len(tokens) < 2:
        raise ValueError(f"tokens must hold at least two ids; got {len(tokens)}")
    return tokens


@dataclass(frozen=True)
class Corpus:
    """A tokenized corpus split into train and validation streams.

    ``train_text`` is the training documents joined by :data:`SEPARATOR` and ``train`` its token ids
    (``tokenizer.decode(train) == train_text`` exactly); likewise for validation.
    """

    name: str
    tokenizer: Tokenizer
    train_text: str
    val_text: str
    train_documents: tuple[str, ...]
    val_documents: tuple[str, ...]
    train: np.ndarray = field(repr=False)
    val: np.ndarray = field(repr=False)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def sha256(self) -> str:
        """A fingerprint of the corpus text (train, then validation), to print beside results."""
        digest = hashlib.sha256(self.train_text.encode("utf-8"))
        digest.update(b"\0" + self.val_text.encode("utf-8"))
        return digest.hexdigest()[:16]

    def batches(self, split: str = "train", *, batch_size: int, context: int, seed: int) -> TokenBatches:
        """Random next-token windows of ``split`` (``"train"`` or ``"val"``), see :class:`TokenBatches`."""
        return TokenBatches(self._tokens(split), batch_size=batch_size, context=context, seed=seed)

    def sequential(
        self, split: str = "val", *, batch_size: int, context: int, max_batches: int | None = None
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Non-overlapping windows of ``split`` in order, see :func:`sequential_batches`."""
        return sequential_batches(
            self._tokens(split), batch_size=batch_size, context=context, max_batches=max_batches
        )

    def _tokens(self, split: str) -> np.ndarray:
        return self.train if check_choice("split", split, ("train", "val")) == "train" else self.val


def corpus_from_documents(
    name: str,
    documents: Sequence[Document],
    *,
    tokenizer: str | Tokenizer = "char",
    val_fraction: float = 0.1,
    seed: int = 0,
) -> Corpus:
    """Split ``documents`` (see :func:`split_documents`), join each part and tokenize it.

    ``tokenizer`` is ``"byte"``, ``"char"`` (alphabet = the characters of *all* documents, so validation
    never meets an unknown character) or a ready tokenizer object.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str; got {name!r}")
    train_docs, val_docs = split_documents(documents, val_fraction=val_fraction, seed=seed)
    train_text = SEPARATOR.join(d.text for d in train_docs)
    val_text = SEPARATOR.join(d.text for d in val_docs)
    if isinstance(tokenizer, str):
        check_choice("tokenizer", tokenizer, TOKENIZERS)
        if tokenizer == "byte":
            tokenizer = ByteTokenizer()
        else:
            tokenizer = CharTokenizer.from_text(train_text + SEPARATOR + val_text)
    elif not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be one of {TOKENIZERS} or a tokenizer object; got {tokenizer!r}")
    return Corpus(
        name=name,
        tokenizer=tokenizer,
        train_text=train_text,
        val_text=val_text,
        train_documents=tuple(d.name for d in train_docs),
        val_documents=tuple(d.name for d in val_docs),
        train=np.asarray(tokenizer.encode(train_text), dtype=np.int64),
        val=np.asarray(tokenizer.encode(val_text), dtype=np.int64),
    )


def load_corpus(
    name: str = "prose", *, tokenizer: str | Tokenizer = "char", val_fraction: float = 0.1, seed: int = 0
) -> Corpus:
    """One of :data:`CORPORA`, split by document with ``seed`` (which also seeds ``"synthetic"``)."""
    check_choice("name", name, CORPORA)
    seed = check_seed("seed", seed)
    if name == "prose":
        documents = prose_documents()
    elif name == "code":
        documents = code_documents()
    else:
        documents = synthetic_documents(seed=seed)
    return corpus_from_documents(name, documents, tokenizer=tokenizer, val_fraction=val_fraction, seed=seed)
