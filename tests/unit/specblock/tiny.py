"""A tiny random target, distillation-shaped data and decode contexts for the drafter tests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from neurips26.nn.transformer import Decoder, DecoderConfig
from neurips26.specblock.drafter import SpecBlockConfig, SpecBlockDrafter
from neurips26.specblock.protocol import DecodeContext, target_outputs

VOCAB = 20


def tiny_target(dtype: torch.dtype = torch.float32) -> Decoder:
    """A random 4-layer target of width 32 over 20 ids."""
    config = DecoderConfig(vocab_size=VOCAB, width=32, depth=4, heads=2, context=64)
    return Decoder(config, seed=0).to(dtype).eval()


def tiny_data(target: Decoder, batch: int = 3, length: int = 12, seed: int = 0):
    """``(tokens, logits, hidden, loss_mask)`` of random sequences; positions 3 … T-2 are trained."""
    tokens = torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))
    logits, hidden = target_outputs(target, tokens)
    loss_mask = torch.zeros(batch, length, dtype=torch.bool)
    loss_mask[:, 3:-1] = True
    return tokens, logits, hidden, loss_mask


def context_for(target: Decoder, seq: torch.Tensor, new_from: int = 0, total: int = 60) -> DecodeContext:
    """Committed ``seq`` (root last) with the target's residual stream at positions 0 … L-2."""
    if seq.numel() > 1:
        hidden = target_outputs(target, seq[None, :-1])[1][0]
    else:
        hidden = torch.zeros(0, target.config.depth + 1, target.config.width)
    return DecodeContext(tokens=seq, hidden=hidden, new_from=new_from, total_tokens=total)


def tiny_drafter(target: Decoder) -> SpecBlockDrafter:
    """A random SpecBlock drafter (2 heads) for ``target``, in its dtype, in eval mode."""
    config = SpecBlockConfig.for_target(target, heads=2)
    dtype = next(target.parameters()).dtype
    return SpecBlockDrafter.from_target(target, config, seed=0).to(dtype).eval()


@contextlib.contextmanager
def isolated_cache(cache: Path) -> Iterator[None]:
    """Run with the result cache in ``cache``, progress bars off, and the prepare module's memoised target
    and distillation data cleared before and after (so nothing leaks between test modules)."""
    from neurips26.specblock import prepare

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEURIPS26_CACHE_DIR", str(cache))
        mp.setenv("NEURIPS26_PROGRESS", "0")
        mp.delenv("NEURIPS26_NO_CACHE", raising=False)
        prepare.forget_targets()
        try:
            yield
        finally:
            prepare.forget_targets()
