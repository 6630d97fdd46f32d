"""The tiny language model's chains: their format, the training mask, batched sampling and continuation,
teacher-forced confidence against a one-chain forward, the chat backend, and bad input."""

import numpy as np
import pytest
import torch

from neurips26.expansion_utility import tiny_lm as T
from neurips26.expansion_utility.llm_chains import ChatSampler, parse_answer, segment
from neurips26.nn import Decoder


@pytest.fixture(scope="module")
def sampler():
    return T.TinyLMSampler(Decoder(T.TinyLMSpec().config(), seed=3).eval())


def test_a_correct_chain_has_fixed_width_steps_and_the_sum():
    terms = T.sample_terms(4, 6, seed=1)
    for row in terms:
        text = T.chain_text(row)
        steps = segment(text, min_tokens=1)
        assert len(steps) == 5 and all(len(s) == T.STEP_WIDTH for s in steps)
        assert "".join(steps) + f"Answer:{row.sum():03d}\n" == text
        assert int(parse_answer(text)) == row.sum()
        assert T.first_error(row, tuple(steps)) == 5
        wrong = list(steps)
        wrong[2] = wrong[2][:-4] + f"{(int(wrong[2][-4:-1]) + 1) % 1000:03d}\n"
        assert T.first_error(row, tuple(wrong)) == 2
        assert len(T.tokenizer().encode(T.problem_text(row) + text, bos=True)) <= T.CONTEXT


def test_training_mask_scores_exactly_the_chain():
    inputs, targets, mask = T.training_batch(8, seed=0)
    tok = T.tokenizer()
    for i in range(8):
        problem = tok.decode(inputs[i].tolist()).split("\n", 1)[0]
        terms = np.array([int(problem[j : j + 2]) for j in range(3, len(problem), 3)])
        assert T.problem_text(terms) == problem + "\n"
        assert tok.decode(targets[i][mask[i]].tolist()) == T.chain_text(terms)


def test_sampling_is_seeded_and_continuations_batch(sampler):
    terms = T.sample_terms(3, 4, seed=2)
    a, b = sampler.sample(terms, seed=5), sampler.sample(terms, seed=5)
    assert [c.text for c in a] == [c.text for c in b]
    assert len(a[0].text) <= 3 * T.STEP_WIDTH + T.ANSWER_WIDTH  # <bos> samples decode to nothing
    chains = [T._padded(c, t) for c, t in zip(a, terms, strict=True)]
    answers = sampler.continue_from(terms, chains, 2, r=4, seed=0)
    assert answers.shape == (3, 4) and answers.dtype.kind == "i"
    np.testing.assert_array_equal(answers, sampler.continue_from(terms, chains, 2, r=4, seed=0))


def test_batched_confidence_equals_a_one_chain_forward(sampler):
    terms = T.sample_terms(3, 5, seed=4)
    chains = [T._padded(c, t) for c, t in zip(sampler.sample(terms, seed=1), terms, strict=True)]
    mean, low = sampler.step_confidence(terms, chains)
    assert mean.shape == low.shape == (3, 4) and (low <= mean + 1e-12).all()
    tok = T.tokenizer()
    ids = tok.encode(T.problem_text(terms[1]), bos=True)
    probs = []
    with torch.no_grad():
        for step in chains[1].steps:
            for ch in step:
                p = torch.softmax(sampler.model(torch.tensor([ids])).logits[0, -1], -1)
                probs.append(float(p[tok.encode(ch)[0]]))
                ids = ids + tok.encode(ch)
    probs = np.array(probs).reshape(4, T.STEP_WIDTH)
    np.testing.assert_allclose(mean[1], np.exp(np.log(probs).mean(1)), rtol=1e-4)
    np.testing.assert_allclose(low[1], probs.min(1), rtol=1e-4)


def test_lm_cell_and_its_utilities(sampler):
    cell = T.lm_cell(sampler, T.sample_terms(4, 4, seed=0), r=4, seed=0)
    assert cell.hits.shape == (4, 4, 4) and cell.confidence.shape == (4, 3)
    u = cell.utilities()
    assert u.sel.shape == (4, 3) and np.isnan(u.exact).all()
    np.testing.assert_allclose(u.sel, cell.hits[:, :3, :2].mean(-1) - cell.y0[:, None])


def test_chat_backend_continues_the_kept_steps(sampler):
    terms = T.sample_terms(1, 5, seed=9)[0]
    chat = ChatSampler(T.chat_backend(sampler, seed=0), min_tokens=1)
    problem = T.problem_text(terms).strip()
    chain = chat.sample(problem)
    assert 0 < len(chain.text) <= 4 * T.STEP_WIDTH + T.ANSWER_WIDTH
    kept = T._padded(chain, terms)
    answers = chat.continue_from(problem, kept, 3, r=2)
    assert len(answers) == 2
    replies = []
    backend = T.chat_backend(sampler, seed=0)
    ChatSampler(_Spy(backend, replies), min_tokens=1).continue_from(problem, kept, 3, r=1)
    assert 0 < len(replies[0]) <= 1 * T.STEP_WIDTH + T.ANSWER_WIDTH  # one step regenerated


class _Spy:
    def __init__(self, backend, replies):
        self.backend, self.replies = backend, replies

    def complete(self, messages, **kwargs):
        out = self.backend.complete(messages, **kwargs)
        self.replies.append(out.text)
        return out


def test_bad_input_is_named(sampler):
    with pytest.raises(TypeError, match="terms"):
        sampler.sample([[12, 13, 14]], seed=0)
    with pytest.raises(ValueError, match="terms"):
        sampler.sample(np.array([[12, 13]]), seed=0)
    with pytest.raises(ValueError, match="temperature"):
        T.TinyLMSampler(sampler.model, temperature=0.0)
    with pytest.raises(TypeError, match="model"):
        T.TinyLMSampler(object())
    with pytest.raises(ValueError, match="r"):
        T.lm_cell(sampler, T.sample_terms(2, 4, seed=0), r=1, seed=0)
    with pytest.raises(ValueError, match="m"):
        T.sample_terms(2, 9, seed=0)
