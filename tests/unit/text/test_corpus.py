import re
import sysconfig
from pathlib import Path
from pydoc_data.topics import topics

import numpy as np
import pytest
import torch

from neurips26.text import (
    CODE_FILES,
    Document,
    TokenBatches,
    code_documents,
    corpus_from_documents,
    load_corpus,
    prose_documents,
    sequential_batches,
    split_documents,
    synthetic_documents,
)
from neurips26.text.corpus import SEPARATOR


@pytest.fixture(scope="module")
def prose():
    return load_corpus("prose", tokenizer="char")


@pytest.mark.parametrize("name", ["prose", "code", "synthetic"])
@pytest.mark.parametrize("tokenizer", ["byte", "char"])
def test_corpus_round_trips_exactly(name, tokenizer):
    corpus = load_corpus(name, tokenizer=tokenizer)
    assert corpus.train.dtype == np.int64 and corpus.train.ndim == 1
    assert corpus.tokenizer.decode(corpus.train) == corpus.train_text
    assert corpus.tokenizer.decode(corpus.val) == corpus.val_text
    assert int(corpus.train.max()) < corpus.vocab_size


def test_prose_is_the_pydoc_topics_text(prose):
    documents = prose_documents()
    assert [d.name for d in documents] == sorted(topics)
    assert all(d.text == topics[d.name] for d in documents)
    assert sorted(prose.train_documents + prose.val_documents) == sorted(topics)
    by_name = {d.name: d.text for d in documents}
    assert prose.val_text == SEPARATOR.join(by_name[n] for n in prose.val_documents)


def test_code_is_the_listed_standard_library_files():
    root = Path(sysconfig.get_paths()["stdlib"])
    documents = code_documents()
    assert [d.name for d in documents] == list(CODE_FILES)
    assert all(d.text == (root / d.name).read_text(encoding="utf-8") for d in documents)
    with pytest.raises(FileNotFoundError, match="no_such_module"):
        code_documents(("no_such_module.py",))


def test_split_is_disjoint_complete_deterministic_and_seeded():
    documents = prose_documents()
    train, val = split_documents(documents, val_fraction=0.1, seed=0)
    names_train, names_val = {d.name for d in train}, {d.name for d in val}
    assert names_train.isdisjoint(names_val)
    assert names_train | names_val == {d.name for d in documents}
    total = sum(len(d.text) for d in documents)
    assert 0.05 * total < sum(len(d.text) for d in val) <= 0.1 * total
    again_train, again_val = split_documents(documents, val_fraction=0.1, seed=0)
    assert again_train == train and again_val == val
    _, other_val = split_documents(documents, val_fraction=0.1, seed=1)
    assert {d.name for d in other_val} != names_val


def test_corpus_load_is_deterministic(prose):
    again = load_corpus("prose", tokenizer="char")
    assert again.sha256 == prose.sha256
    assert np.array_equal(again.train, prose.train) and np.array_equal(again.val, prose.val)
    assert load_corpus("prose", tokenizer="char", seed=1).val_documents != prose.val_documents


def test_char_alphabet_covers_validation(prose):
    assert set(prose.val_text) <= set(prose.tokenizer.alphabet)


def test_random_batches_are_next_token_windows_of_the_stream(prose):
    batches = prose.batches("train", batch_size=4, context=32, seed=7)
    x, y = batches(5)
    assert x.shape == y.shape == (4, 32) and x.dtype == y.dtype == torch.long
    assert torch.equal(x[:, 1:], y[:, :-1])
    stream = torch.from_numpy(prose.train)
    for row_x, row_y in zip(x, y, strict=True):
        # Each row is a contiguous window: find its start in the stream.
        starts = (stream[: len(stream) - 32].unfold(0, 32, 1) == row_x).all(1).nonzero().flatten()
        assert len(starts) >= 1
        assert torch.equal(stream[starts[0] + 1 : starts[0] + 33], row_y)


def test_random_batches_depend_only_on_seed_and_step(prose):
    a = prose.batches(batch_size=3, context=16, seed=1)
    b = prose.batches(batch_size=3, context=16, seed=1)
    b(9)  # touching other steps first changes nothing
    assert torch.equal(a(4)[0], b(4)[0])
    assert not torch.equal(a(4)[0], a(5)[0])
    assert not torch.equal(a(4)[0], prose.batches(batch_size=3, context=16, seed=2)(4)[0])
    first_two = [batch[0] for _, batch in zip(range(2), iter(a), strict=False)]
    assert torch.equal(first_two[1], a(1)[0])


def test_sequential_batches_tile_the_stream_in_order():
    tokens = np.arange(103, dtype=np.int64)
    batches = sequential_batches(tokens, batch_size=4, context=10)
    xs = torch.cat([x for x, _ in batches])
    ys = torch.cat([y for _, y in batches])
    assert xs.shape == (10, 10) and [len(x) for x, _ in batches] == [4, 4, 2]
    assert torch.equal(xs.flatten(), torch.arange(100))
    assert torch.equal(ys.flatten(), torch.arange(1, 101))
    assert len(sequential_batches(tokens, batch_size=4, context=10, max_batches=2)) == 2


def test_synthetic_text_is_seeded_and_follows_its_chain():
    a = synthetic_documents(50, seed=3, n_words=20, successors=3)
    assert a == synthetic_documents(50, seed=3, n_words=20, successors=3)
    assert a != synthetic_documents(50, seed=4, n_words=20, successors=3)
    following: dict[str, set[str]] = {}
    for document in a:
        for sentence in re.split(r"\. ?", document.text.lower()):
            words = sentence.split()
            for w, nxt in zip(words, words[1:], strict=False):
                following.setdefault(w, set()).add(nxt)
    assert len({w for d in a for w in re.findall(r"[a-z]+", d.text.lower())}) <= 20
    assert max(len(s) for s in following.values()) <= 3  # each word has at most 3 successors


def test_bad_arguments_are_rejected(prose):
    with pytest.raises(ValueError, match="name"):
        load_corpus("wikipedia")
    with pytest.raises(ValueError, match="tokenizer"):
        load_corpus("prose", tokenizer="bpe")
    with pytest.raises(ValueError, match="split"):
        prose.batches("test", batch_size=2, context=8, seed=0)
    with pytest.raises(ValueError, match="val_fraction"):
        split_documents(prose_documents(), val_fraction=0.9, seed=0)
    with pytest.raises(ValueError, match="context"):
        TokenBatches(np.arange(10, dtype=np.int64), batch_size=2, context=10, seed=0)
    with pytest.raises(TypeError, match="int64"):
        TokenBatches(np.arange(10, dtype=np.int32), batch_size=2, context=4, seed=0)
    with pytest.raises(ValueError, match="two Document"):
        corpus_from_documents("one", [Document("a", "text")])
