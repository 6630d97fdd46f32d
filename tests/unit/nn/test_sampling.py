"""Greedy, temperature and top-k sampling; generation with the cache."""

import pytest
import torch

from neurips26.nn.sampling import generate, next_token_distribution, sample_next_token
from neurips26.nn.transformer import Decoder, DecoderConfig

VOCAB = 29


def make_model(seed=0):
    config = DecoderConfig(vocab_size=VOCAB, width=32, depth=2, heads=4, context=32)
    model = Decoder(config, seed=seed).eval()
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():  # larger than GPT-2's init, so the next-token distributions are far from uniform
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.normal_(0.0, 1.5 / parameter.shape[-1] ** 0.5, generator=generator)
    return model


def seeded(seed):
    return torch.Generator().manual_seed(seed)


def random_logits(shape, seed=0):
    return 3.0 * torch.randn(shape, generator=seeded(seed))


def test_greedy_is_argmax():
    logits = random_logits((6, VOCAB))
    assert torch.equal(sample_next_token(logits), logits.argmax(-1))
    distribution = next_token_distribution(logits, strategy="greedy")
    assert torch.equal(distribution, torch.nn.functional.one_hot(logits.argmax(-1), VOCAB).float())


def test_temperature_and_top_k_distributions():
    logits = random_logits((4, VOCAB))
    torch.testing.assert_close(
        next_token_distribution(logits, temperature=0.7), torch.softmax(logits / 0.7, dim=-1)
    )
    cold = next_token_distribution(logits, temperature=1e-3)
    torch.testing.assert_close(cold, next_token_distribution(logits, strategy="greedy"))
    top = next_token_distribution(logits, strategy="top_k", top_k=5, temperature=2.0)
    torch.testing.assert_close(top.sum(-1), torch.ones(4))
    assert torch.all((top > 0).sum(-1) == 5)
    kept = logits.topk(5, dim=-1).indices
    assert torch.all(top.gather(-1, kept) > 0)
    # inside the top k the ratios are those of softmax(z / τ)
    row, (i, j) = 0, kept[0, :2].tolist()
    assert (top[row, i] / top[row, j]).item() == pytest.approx(
        torch.exp((logits[row, i] - logits[row, j]) / 2.0).item(), rel=1e-5
    )


def test_samples_follow_the_distribution():
    logits = torch.tensor([[1.0, 0.0, -1.0, 2.0, 0.5]])
    draws = sample_next_token(logits.expand(20_000, 5), strategy="temperature", generator=seeded(0))
    frequencies = torch.bincount(draws, minlength=5) / 20_000
    # binomial standard error <= 0.0036; 5 of them keeps the test far from flaky and still sharp
    torch.testing.assert_close(frequencies, torch.softmax(logits[0], -1), rtol=0, atol=0.018)
    top2 = sample_next_token(logits.expand(2_000, 5), strategy="top_k", top_k=2, generator=seeded(1))
    assert set(top2.tolist()) == {0, 3}
    top1 = sample_next_token(logits, strategy="top_k", top_k=1, generator=seeded(2))
    assert top1.tolist() == [3]


def test_generate_greedy_equals_the_uncached_argmax_loop():
    model = make_model()
    prompt = torch.randint(0, VOCAB, (2, 5), generator=seeded(3))
    out = generate(model, prompt, 12)
    tokens = prompt
    for _ in range(12):  # the reference: a full forward per new token, no cache
        tokens = torch.cat([tokens, model(tokens).logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, tokens)
    assert out.shape == (2, 17) and torch.equal(out[:, :5], prompt)


def test_generate_is_reproducible_under_a_seeded_generator():
    model = make_model()
    prompt = torch.tensor([1, 2, 3])
    for strategy, top_k in [("temperature", None), ("top_k", 4)]:
        kwargs = dict(strategy=strategy, top_k=top_k, temperature=1.5)
        a = generate(model, prompt, 20, generator=seeded(7), **kwargs)
        b = generate(model, prompt, 20, generator=seeded(7), **kwargs)
        c = generate(model, prompt, 20, generator=seeded(8), **kwargs)
        assert a.shape == (23,) and torch.equal(a, b) and not torch.equal(a, c)


def test_generate_restores_the_training_mode():
    model = make_model().train()
    generate(model, torch.tensor([[0]]), 3)
    assert model.training
    assert generate(model, torch.tensor([[0]]), 0).shape == (1, 1)


def test_sampling_rejects_bad_input():
    logits, model = random_logits((2, VOCAB)), make_model()
    with pytest.raises(ValueError, match="strategy"):
        sample_next_token(logits, strategy="nucleus")
    with pytest.raises(TypeError, match="generator"):
        sample_next_token(logits, strategy="temperature")
    with pytest.raises(ValueError, match="temperature"):
        sample_next_token(logits, strategy="temperature", temperature=0.0, generator=seeded(0))
    with pytest.raises(ValueError, match="top_k"):
        next_token_distribution(logits, strategy="top_k")
    with pytest.raises(ValueError, match="top_k"):
        next_token_distribution(logits, strategy="top_k", top_k=VOCAB + 1)
    with pytest.raises(ValueError, match="top_k"):
        next_token_distribution(logits, top_k=3)
    with pytest.raises(ValueError, match="logits"):
        sample_next_token(logits[0])
    with pytest.raises(ValueError, match="context"):
        generate(model, torch.zeros(1, 30, dtype=torch.long), 3)
    with pytest.raises(TypeError, match="generator"):
        generate(model, torch.tensor([1]), 3, strategy="top_k", top_k=2)
    with pytest.raises(ValueError, match="prompt"):
        generate(model, torch.zeros(1, 1, 1, dtype=torch.long), 3)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(model, torch.tensor([1]), -1)
