"""Two tokenizers that need no training data and no download: bytes and characters.

A language model on the CPU does not need a learned vocabulary to make a chapter's point, and a fixed
one keeps every run comparable. Both tokenizers map text to integer ids and back exactly:
``decode(encode(text)) == text`` for every string the tokenizer accepts.

- :class:`ByteTokenizer` — the UTF-8 bytes of the text, ids ``0..255``; any string is accepted.
- :class:`CharTokenizer` — one id per character of a fixed alphabet (usually the characters of a
  corpus); a smaller vocabulary, so a tiny model learns faster, but it rejects unseen characters.

Optional special tokens (``"<bos>"``, ``"<eos>"``, ``"<pad>"``, ...) take the ids after the ordinary
ones. They never come out of ``encode(text)`` on their own; ``encode(..., bos=True, eos=True)`` adds them
and ``decode`` drops them unless asked to show them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Tokenizer(Protocol):
    """What the corpus and the notebooks need from a tokenizer."""

    @property
    def vocab_size(self) -> int: ...

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]: ...

    def decode(self, ids: Iterable[int], *, show_special: bool = False) -> str: ...


class _Specials:
    """Special tokens appended after ``base`` ordinary ids: ``specials[i]`` has id ``base + i``."""

    def __init__(self, base: int, specials: Sequence[str]) -> None:
        if isinstance(specials, str) or not all(isinstance(s, str) and s for s in specials):
            raise TypeError(f"specials must be a sequence of non-empty str; got {specials!r}")
        if len(set(specials)) != len(specials):
            raise ValueError(f"specials must be distinct; got {list(specials)}")
        self.base = base
        self.names: tuple[str, ...] = tuple(specials)
        self.ids = {name: base + i for i, name in enumerate(self.names)}

    def id(self, name: str) -> int:
        if name not in self.ids:
            raise ValueError(f"unknown special token {name!r}; this tokenizer has {list(self.names)}")
        return self.ids[name]

    def wrap(self, ids: list[int], bos: bool, eos: bool) -> list[int]:
        """``[<bos>] + ids + [<eos>]`` as requested (the names must be among the specials)."""
        head = [self.id("<bos>")] if bos else []
        tail = [self.id("<eos>")] if eos else []
        return head + ids + tail


def _as_ids(ids: Iterable[int], vocab_size: int) -> list[int]:
    """``ids`` (a list, NumPy array or CPU tensor of integers) as a list, each in ``[0, vocab_size)``."""
    if hasattr(ids, "detach"):  # a torch tensor
        ids = ids.detach().cpu().numpy()
    arr = np.asarray(ids if isinstance(ids, np.ndarray | Sequence) else list(ids))
    if arr.size == 0:
        return []
    if arr.dtype.kind not in "iu":
        raise TypeError(f"ids must be integers; got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"ids must be 1-dimensional; got shape {arr.shape}")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= vocab_size:
        raise ValueError(f"ids must lie in [0, {vocab_size}); got values in [{lo}, {hi}]")
    return arr.tolist()


class _SpecialTokensMixin:
    """The special-token part shared by both tokenizers (their ``_specials`` table)."""

    _specials: _Specials

    @property
    def specials(self) -> tuple[str, ...]:
        return self._specials.names

    def special_id(self, name: str) -> int:
        """The id of a special token, e.g. ``special_id("<eos>")``."""
        return self._specials.id(name)


class ByteTokenizer(_SpecialTokensMixin):
    """UTF-8 byte tokens: ids ``0..255`` are bytes, ids ``256..`` are the special tokens.

    ``decode`` of ids that are not valid UTF-8 (a model's sample can be anything) replaces the bad
    bytes with U+FFFD instead of failing; for ids that came from ``encode`` it is exact.
    """

    def __init__(self, specials: Sequence[str] = ()) -> None:
        self._specials = _Specials(256, specials)

    @property
    def vocab_size(self) -> int:
        """256 byte values plus the special tokens."""
        return 256 + len(self._specials.names)

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """The UTF-8 bytes of ``text`` as ids, wrapped in ``<bos>``/``<eos>`` when asked."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        return self._specials.wrap(list(text.encode("utf-8")), bos, eos)

    def decode(self, ids: Iterable[int], *, show_special: bool = False) -> str:
        """Text of the byte ids; special tokens are dropped, or shown by name if ``show_special``."""
        out: list[str] = []
        run = bytearray()
        for i in _as_ids(ids, self.vocab_size):
            if i < 256:
                run.append(i)
                continue
            out.append(run.decode("utf-8", errors="replace"))
            run.clear()
            if show_special:
                out.append(self._specials.names[i - 256])
        out.append(run.decode("utf-8", errors="replace"))
        return "".join(out)


class CharTokenizer(_SpecialTokensMixin):
    """One id per character of a fixed alphabet, in the alphabet's order, then the special tokens.

    Build it from a corpus with :meth:`from_text` (the sorted set of its characters). ``encode`` raises
    ``ValueError`` naming the first character outside the alphabet.
    """

    def __init__(self, alphabet: Iterable[str], specials: Sequence[str] = ()) -> None:
        chars = list(alphabet)
        if not chars:
            raise ValueError("alphabet must hold at least one character")
        if not all(isinstance(c, str) and len(c) == 1 for c in chars):
            raise TypeError("alphabet must be a string or an iterable of single characters")
        if len(set(chars)) != len(chars):
            raise ValueError("alphabet must not repeat a character")
        self.alphabet: str = "".join(chars)
        self._index = {c: i for i, c in enumerate(chars)}
        self._specials = _Specials(len(chars), specials)

    @classmethod
    def from_text(cls, text: str, specials: Sequence[str] = ()) -> CharTokenizer:
        """The tokenizer whose alphabet is the sorted set of characters of ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        return cls(sorted(set(text)), specials)

    @property
    def vocab_size(self) -> int:
        """Alphabet size plus the special tokens."""
        return len(self.alphabet) + len(self._specials.names)

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """The alphabet index of every character of ``text``, wrapped in ``<bos>``/``<eos>`` when asked."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        try:
            ids = [self._index[c] for c in text]
        except KeyError as err:
            raise ValueError(f"text holds the character {err.args[0]!r}, not in the alphabet") from None
        return self._specials.wrap(ids, bos, eos)

    def decode(self, ids: Iterable[int], *, show_special: bool = False) -> str:
        """Text of the ids; special tokens are dropped, or shown by name if ``show_special``."""
        n = len(self.alphabet)
        out = []
        for i in _as_ids(ids, self.vocab_size):
            if i < n:
                out.append(self.alphabet[i])
            elif show_special:
                out.append(self._specials.names[i - n])
        return "".join(out)
