"""Vocabulary and tasks: one token per word, rectangular prompts, held-out templates apart from the
selection ones, contrast prompts whose answer is the target, and bad input named."""

import numpy as np
import pytest

from neurips26.sparse_control import tasks as T
from neurips26.sparse_control import vocabulary as V


def test_tokenizer_round_trips_and_names_unknown_words():
    tok = V.WordTokenizer()
    text = "when mary and john went to the store , john gave a book to"
    assert tok.decode(tok.encode(text, bos=True)) == text
    assert tok.encode(text, bos=True)[0] == tok.bos
    with pytest.raises(ValueError, match="zebra"):
        tok.encode("mary zebra")
    assert len(set(V.words())) == len(V.words())


@pytest.mark.parametrize("task", T.TASKS)
def test_prompts_are_rectangular_and_splits_use_their_templates(task):
    sel = T.make_prompts(task, 40, split="selection", seed=1)
    held = T.make_prompts(task, 40, split="held_out", seed=2)
    assert sel.ids.ndim == 2 and sel.ids.shape[1] == held.ids.shape[1]
    assert set(held.template) <= set(T.HELD_OUT[task])
    assert not set(sel.template) & set(T.HELD_OUT[task])
    for p in (sel, held):
        assert (p.options == p.answer[:, None]).any(1).all()
        assert (p.options == p.target[:, None]).any(1).all()
        assert (p.target != p.answer).all()  # control prompts always ask for a change


def test_ioi_answers_the_name_that_is_not_repeated():
    tok = V.WordTokenizer()
    p = T.make_prompts("ioi", 30, split="train", seed=3)
    for row, io, s in zip(p.ids, p.answer, p.target, strict=True):
        words = tok.decode(row).split()
        assert words.count(tok.vocab[io]) == 1 and words.count(tok.vocab[s]) == 2


def test_mcqa_answers_the_fact_and_control_prompts_never_have_d_right():
    tok = V.WordTokenizer()
    table = T.facts()
    p = T.make_prompts("mcqa", 60, split="selection", seed=4)
    assert tok.id("D") not in set(p.answer)
    for row, answer in zip(p.ids, p.answer, strict=True):
        words = tok.decode(row).split()
        e = next(w for w in words if w in V.ENTITIES)
        r = next(w for w in words if w in V.RELATIONS)
        letter = tok.vocab[answer]
        assert (
            words[words.index(f"{letter})") + 1] == V.VALUES[table[V.ENTITIES.index(e), V.RELATIONS.index(r)]]
        )


@pytest.mark.parametrize("task", T.TASKS)
def test_contrast_prompts_make_the_target_right(task):
    p = T.make_prompts(task, 30, split="selection", seed=5)
    c = T.contrast(p)
    assert c.ids.shape == p.ids.shape
    np.testing.assert_array_equal(c.answer, p.target)
    assert (c.ids != p.ids).any(1).all()


def test_sentiment_and_refusal_labels_follow_their_rule():
    tok = V.WordTokenizer()
    s = T.make_prompts("sentiment", 50, split="train", seed=6)
    for row, answer in zip(s.ids, s.answer, strict=True):
        words = tok.decode(row).split()
        total = sum(w in V.POSITIVE for w in words) - sum(w in V.NEGATIVE for w in words)
        assert tok.vocab[answer] == ("good" if total > 0 else "bad")
    r = T.make_prompts("refusal", 80, split="train", seed=7)
    for row, answer in zip(r.ids, r.answer, strict=True):
        has_marker = any(w in V.MARKERS for w in tok.decode(row).split())
        assert tok.vocab[answer] == ("REFUSE" if has_marker else "OK")


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="task"):
        T.make_prompts("poetry", 4, split="train", seed=0)
    with pytest.raises(ValueError, match="split"):
        T.make_prompts("ioi", 4, split="test", seed=0)
    with pytest.raises(ValueError, match="n"):
        T.make_prompts("ioi", 0, split="train", seed=0)


def test_label_noise_flips_about_its_share_to_another_option():
    from neurips26.sparse_control.model import noisy_answers

    p = T.make_prompts("mcqa", 4000, split="train", seed=8)
    noisy = noisy_answers(p, 0.1, seed=0)
    flipped = noisy != p.answer
    assert 0.08 < flipped.mean() < 0.12
    assert (p.options == noisy[:, None]).any(1).all()
    np.testing.assert_array_equal(noisy_answers(p, 0.0, seed=0), p.answer)
