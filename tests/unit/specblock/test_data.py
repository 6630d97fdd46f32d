"""The procedural corpus: determinism, correct arithmetic, matched brackets, the alphabet, DistillData."""

from __future__ import annotations

import re

import pytest
import torch

from neurips26.specblock.data import (
    ALPHABET,
    DOMAINS,
    DistillData,
    arithmetic_documents,
    code_documents,
    corpus_tokens,
    dialogue_documents,
    documents,
    mixed_documents,
    prompts,
    tokenizer,
)


@pytest.mark.parametrize("domain", DOMAINS)
def test_generators_are_deterministic_and_seed_dependent(domain):
    assert documents(domain, 5, 3) == documents(domain, 5, 3)
    assert documents(domain, 5, 3) != documents(domain, 5, 4)
    assert prompts(domain, 5, 3) == prompts(domain, 5, 3)


@pytest.mark.parametrize("domain", DOMAINS)
def test_text_lies_in_the_alphabet_and_round_trips(domain):
    tok = tokenizer()
    for doc in documents(domain, 20, 0):
        assert set(doc) <= set(ALPHABET)
        assert len(doc) >= 160
        ids = tok.encode(doc, bos=True, eos=True)
        assert ids[0] == tok.special_id("<bos>") and ids[-1] == tok.special_id("<eos>")
        assert tok.decode(ids) == doc


def test_arithmetic_traces_are_correct_and_chained():
    step = re.compile(r"(\d+)([+\-*])(\d+)=(\d+);")
    for doc in arithmetic_documents(50, 1):
        steps = step.findall(doc)
        assert "".join(f"{a}{op}{b}={r};" for a, op, b, r in steps) == doc  # nothing but steps
        for i, (a, op, b, r) in enumerate(steps):
            a, b, r = int(a), int(b), int(r)
            assert r == {"+": a + b, "-": a - b, "*": a * b}[op]
            assert 0 <= r <= 999
            if i:
                assert a == int(steps[i - 1][3])  # the previous result starts the next step


def test_code_has_matched_brackets_and_repeated_names():
    pairs = {")": "(", "]": "["}
    for doc in code_documents(50, 2):
        stack = []
        for c in doc:
            if c in "([":
                stack.append(c)
            elif c in ")]":
                assert stack and stack.pop() == pairs[c]
        assert not stack
        assert doc.endswith(";")
        names = re.findall(r"[a-z]+", doc)
        assert len(names) > len(set(names))  # identifiers recur


def test_dialogue_is_question_answer_pairs():
    for doc in dialogue_documents(20, 3):
        pairs = doc.split(" Q: ")
        assert doc.startswith("Q: ")
        for pair in pairs:
            assert "? A: " in pair and pair.endswith(".")


def test_prompts_are_short_prefixes():
    for domain in DOMAINS:
        for p in prompts(domain, 30, 5, min_chars=10, max_chars=20):
            assert 10 <= len(p) <= 20
    code = prompts("code", 4, 9, min_chars=5, max_chars=5)
    assert all(doc.startswith(p) for doc, p in zip(documents("code", 4, 9, length=6), code, strict=True))


def test_mixed_documents_round_robin_and_stream():
    docs = mixed_documents(6, 0)
    assert docs[0] == documents("code", 2, 0)[0] and docs[1] == documents("arithmetic", 2, 0)[0]
    assert docs[3] == documents("code", 2, 0)[1]
    stream = corpus_tokens(docs[:2])
    tok = tokenizer()
    assert stream.dtype.name == "int64"
    assert (stream == tok.special_id("<bos>")).sum() == 2 == (stream == tok.special_id("<eos>")).sum()
    assert tokenizer().vocab_size == len(ALPHABET) + 2


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="domain"):
        documents("poetry", 2, 0)
    with pytest.raises(ValueError, match="n"):
        code_documents(-1, 0)
    with pytest.raises(ValueError, match="seed"):
        arithmetic_documents(2, -1)
    with pytest.raises(TypeError, match="n"):
        dialogue_documents(2.5, 0)
    with pytest.raises(ValueError, match="max_chars"):
        prompts("code", 2, 0, min_chars=10, max_chars=5)


def test_distill_data_checks_shapes():
    tokens = torch.zeros(2, 5, dtype=torch.long)
    ok = DistillData(
        tokens, torch.zeros(2, 5, 7), torch.zeros(2, 5, 3, 4), torch.zeros(2, 5, dtype=torch.bool)
    )
    assert len(ok) == 2 and ok.subset([1]).tokens.shape == (1, 5)
    with pytest.raises(ValueError, match="logits"):
        DistillData(
            tokens, torch.zeros(2, 4, 7), torch.zeros(2, 5, 3, 4), torch.zeros(2, 5, dtype=torch.bool)
        )
    with pytest.raises(ValueError, match="loss_mask"):
        DistillData(tokens, torch.zeros(2, 5, 7), torch.zeros(2, 5, 3, 4), torch.zeros(2, 5))
    with pytest.raises(TypeError, match="hidden"):
        DistillData(tokens, torch.zeros(2, 5, 7), None, torch.zeros(2, 5, dtype=torch.bool))


def test_interleaved_prompts_spread_over_domains_and_validate():
    from neurips26.specblock.data import interleaved_prompts

    got = interleaved_prompts(("code", "dialogue"), 5, seed=3)
    code, dialogue = prompts("code", 3, seed=3), prompts("dialogue", 2, seed=3)
    assert got == [code[0], dialogue[0], code[1], dialogue[1], code[2]]
    assert interleaved_prompts(("code",), 0, seed=3) == []
    with pytest.raises(TypeError, match="domains"):
        interleaved_prompts("code", 2, seed=3)
    with pytest.raises(ValueError, match="n"):
        interleaved_prompts(("code",), -1, seed=3)
