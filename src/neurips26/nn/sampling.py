"""Choosing the next token from logits: greedy, temperature and top-k sampling, and a cached generator.

With logits ``z`` over the vocabulary and temperature ``τ``:

- greedy:       ``argmax_v z_v`` (the distribution is the one-hot vector at the argmax);
- temperature:  ``p_v = exp(z_v/τ) / Σ_u exp(z_u/τ)``; ``τ → 0`` approaches greedy, ``τ = 1`` is the model;
- top-k:        the same softmax restricted to the ``k`` largest logits (the others get probability 0).

Randomness comes only from the ``torch.Generator`` passed in, so a seeded generator gives the same text
every time.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.nn.transformer import Decoder
from neurips26.validation import check_choice, check_float, check_int

STRATEGIES = ("greedy", "temperature", "top_k")


def _check_logits(logits: object) -> Tensor:
    if not isinstance(logits, Tensor) or logits.dim() < 1 or not logits.dtype.is_floating_point:
        got = getattr(logits, "shape", type(logits).__name__)
        raise TypeError(f"logits must be a real tensor of shape (..., vocab); got {got}")
    return logits


def _check_strategy(strategy: str, temperature: float, top_k: int | None, vocab_size: int) -> None:
    check_choice("strategy", strategy, STRATEGIES)
    check_float("temperature", temperature, minimum=0.0, strict_min=True)
    if strategy == "top_k":
        if top_k is None:
            raise ValueError("top_k is required when strategy='top_k'")
        check_int("top_k", top_k, minimum=1, maximum=vocab_size)
    elif top_k is not None:
        raise ValueError(f"top_k is only used with strategy='top_k'; got strategy={strategy!r}")


def next_token_distribution(
    logits: Tensor, *, strategy: str = "temperature", temperature: float = 1.0, top_k: int | None = None
) -> Tensor:
    """The distribution a strategy samples from: ``(..., vocab)`` logits → ``(..., vocab)`` probabilities.

    Speculative decoding needs these distributions (not only samples) to accept or reject drafts.
    """
    logits = _check_logits(logits)
    _check_strategy(strategy, temperature, top_k, logits.shape[-1])
    if strategy == "greedy":
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    if strategy == "top_k":
        # keep exactly the k largest logits; the rest get exp(-inf) = 0
        values, indices = logits.topk(top_k, dim=-1)
        logits = torch.full_like(logits, float("-inf")).scatter(-1, indices, values)
    return torch.softmax(logits / temperature, dim=-1)


def sample_next_token(
    logits: Tensor,
    *,
    strategy: str = "greedy",
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """One token per row: ``(B, vocab)`` logits → ``(B,)`` token ids.

    Greedy needs no generator; the sampling strategies require one, so every draw is reproducible.
    """
    logits = _check_logits(logits)
    if logits.dim() != 2:
        raise ValueError(f"logits must have shape (B, vocab); got {tuple(logits.shape)}")
    _check_strategy(strategy, temperature, top_k, logits.shape[-1])
    if strategy == "greedy":
        return logits.argmax(-1)
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator for strategy={strategy!r} "
            "(e.g. torch.Generator().manual_seed(0)); got " + type(generator).__name__
        )
    probs = next_token_distribution(logits, strategy=strategy, temperature=temperature, top_k=top_k)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


@torch.no_grad()
def generate(
    model: Decoder,
    prompt: Tensor,
    max_new_tokens: int,
    *,
    strategy: str = "greedy",
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Continue ``prompt`` (``(T,)`` or ``(B, T)`` token ids) by ``max_new_tokens`` tokens.

    The prompt is encoded once into a :class:`~neurips26.nn.attention.KVCache`; each further step feeds
    only the newest token. Runs in eval mode (no dropout) and restores the model's mode afterwards.
    Returns the prompt followed by the new tokens, with the prompt's rank.
    """
    if not isinstance(model, Decoder):
        raise TypeError(f"model must be a Decoder; got {type(model).__name__}")
    if not isinstance(prompt, Tensor) or prompt.dim() not in (1, 2) or prompt.shape[-1] == 0:
        got = getattr(prompt, "shape", type(prompt).__name__)
        raise ValueError(f"prompt must have shape (T,) or (B, T) with T >= 1; got {got}")
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, minimum=0)
    _check_strategy(strategy, temperature, top_k, model.config.vocab_size)
    if strategy != "greedy" and not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator for strategy={strategy!r}")
    tokens = prompt if prompt.dim() == 2 else prompt.unsqueeze(0)
    if tokens.shape[1] + max_new_tokens > model.config.context:
        raise ValueError(
            f"prompt length {tokens.shape[1]} + max_new_tokens {max_new_tokens} exceeds the model's "
            f"context {model.config.context}"
        )
    was_training = model.training
    model.eval()
    try:
        cache = model.make_cache()
        step_input, new = tokens, []
        for _ in range(max_new_tokens):
            logits = model(step_input, cache=cache).logits[:, -1]  # (B, vocab): the last position's
            step_input = sample_next_token(
                logits, strategy=strategy, temperature=temperature, top_k=top_k, generator=generator
            ).unsqueeze(1)
            new.append(step_input)
    finally:
        model.train(was_training)
    out = torch.cat([tokens, *new], dim=1)
    return out if prompt.dim() == 2 else out.squeeze(0)
