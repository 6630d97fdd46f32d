"""Lossless speculative decoding: every proposer gives vanilla greedy output, EOS and cuts included."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.nn.transformer import Decoder, DecoderConfig
from neurips26.specblock.decode import speculative_generate, vanilla_generate
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposal, target_outputs

VOCAB = 20


def tiny_target(seed: int = 0) -> Decoder:
    config = DecoderConfig(vocab_size=VOCAB, width=32, depth=4, heads=2, context=64)
    return Decoder(config, seed=seed).double().eval()


class EmptyProposer:
    name = "empty"

    def start(self) -> None:
        self.calls = 0

    def propose(self, context: DecodeContext) -> Proposal:
        self.calls += 1
        return Proposal(DraftTree((), (), ()), forwards=0)


class RandomTreeProposer:
    """Random trees; also checks the DecodeContext the loop hands over against a plain target forward."""

    name = "random"

    def __init__(self, target: Decoder, size: int, seed: int) -> None:
        self.target, self.size, self.seed = target, size, seed

    def start(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.seen = 0  # hidden rows seen by the previous call

    def propose(self, context: DecodeContext) -> Proposal:
        tokens = context.tokens
        assert context.hidden.shape[0] == tokens.numel() - 1
        assert context.new_from == self.seen
        self.seen = context.hidden.shape[0]
        _, hidden = target_outputs(self.target, tokens[None, :-1])
        torch.testing.assert_close(context.hidden, hidden[0], atol=1e-10, rtol=0)
        parents, scores = [], []
        for u in range(self.size):
            p = int(self.rng.integers(-1, u)) if u else -1
            parents.append(p)
            scores.append((scores[p] if p >= 0 else 0.0) - float(self.rng.uniform(0.1, 1.0)))
        draft = tuple(int(t) for t in self.rng.integers(0, VOCAB, self.size))
        return Proposal(DraftTree(draft, tuple(parents), tuple(scores)), forwards=2)


class OracleProposer:
    """Proposes the target's true greedy continuation as a chain of ``depth`` nodes."""

    name = "oracle"

    def __init__(self, target: Decoder, depth: int) -> None:
        self.target, self.depth = target, depth

    def start(self) -> None:
        pass

    def propose(self, context: DecodeContext) -> Proposal:
        out = context.tokens.tolist()
        for _ in range(self.depth):
            out.append(int(target_outputs(self.target, torch.tensor([out]))[0][0, -1].argmax()))
        chain = tuple(out[-self.depth :])
        parents = tuple(range(-1, self.depth - 1))
        return Proposal(DraftTree(chain, parents, tuple(-float(k) for k in range(self.depth))), forwards=1)


PROMPTS = [[1, 2, 3, 4], [7], [5, 5, 9, 0, 11, 3, 2]]


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("seed", [0, 1])
def test_random_tree_proposer_is_lossless(prompt, seed):
    target = tiny_target(seed)
    vanilla = vanilla_generate(target, prompt, 20)
    for budget in (1, 5, 30):
        spec = speculative_generate(
            target, RandomTreeProposer(target, 12, seed), prompt, 20, total_tokens=budget
        )
        assert spec.tokens == vanilla.tokens
        assert len(spec.tokens) == sum(spec.accepted) + spec.iterations
        assert all(n <= budget for n in spec.tree_sizes)
        assert all(a <= d for a, d in zip(spec.accepted, spec.accepted_depth, strict=True))


@pytest.mark.parametrize("max_new", [1, 2, 7, 13, 20])
@pytest.mark.parametrize("depth", [1, 4])
def test_oracle_proposer_accepts_its_whole_chain(max_new, depth):
    target = tiny_target(2)
    prompt = PROMPTS[0]
    vanilla = vanilla_generate(target, prompt, max_new)
    spec = speculative_generate(target, OracleProposer(target, depth), prompt, max_new, total_tokens=10)
    assert spec.tokens == vanilla.tokens and len(spec.tokens) == max_new
    assert all(a == depth for a in spec.accepted[:-1])  # τ = depth + 1 except the cut last iteration
    assert all(d == depth for d in spec.accepted_depth)
    assert spec.iterations == -(-max_new // (depth + 1))
    if max_new % (depth + 1) == 0:
        assert spec.tau == depth + 1
    assert spec.drafter_forwards == (1,) * spec.iterations


def test_empty_tree_proposer_is_vanilla():
    target = tiny_target(3)
    proposer = EmptyProposer()
    spec = speculative_generate(target, proposer, PROMPTS[2], 15, total_tokens=8)
    assert spec.tokens == vanilla_generate(target, PROMPTS[2], 15).tokens
    assert spec.tau == 1.0 and spec.iterations == 15 and proposer.calls == 15


@pytest.mark.parametrize("make", ["random", "oracle", "empty"])
def test_eos_stops_both_decoders_at_the_same_token(make):
    target = tiny_target(4)
    prompt = PROMPTS[0]
    free = vanilla_generate(target, prompt, 20).tokens
    eos = free[6]
    cut = free[: free.index(eos) + 1]
    vanilla = vanilla_generate(target, prompt, 20, eos_id=eos)
    assert vanilla.tokens == cut
    proposer = {
        "random": RandomTreeProposer(target, 10, 0),
        "oracle": OracleProposer(target, 3),
        "empty": EmptyProposer(),
    }[make]
    spec = speculative_generate(target, proposer, prompt, 20, total_tokens=10, eos_id=eos)
    assert spec.tokens == cut


def test_float32_target_is_lossless_with_an_oracle():
    target = Decoder(DecoderConfig(vocab_size=VOCAB, width=32, depth=4, heads=2, context=64), seed=5).eval()
    vanilla = vanilla_generate(target, PROMPTS[0], 16)
    spec = speculative_generate(target, OracleProposer(target, 3), PROMPTS[0], 16, total_tokens=5)
    assert spec.tokens == vanilla.tokens and spec.tau == 4.0


def test_bad_inputs_name_the_argument():
    target = tiny_target()
    proposer = EmptyProposer()
    for fn in (
        lambda **kw: vanilla_generate(target, **kw),
        lambda **kw: speculative_generate(target, proposer, total_tokens=4, **kw),
    ):
        with pytest.raises(ValueError, match="prompt_ids"):
            fn(prompt_ids=[], max_new_tokens=3)
        with pytest.raises(ValueError, match="prompt_ids"):
            fn(prompt_ids=[1, VOCAB], max_new_tokens=3)
        with pytest.raises(ValueError, match="max_new_tokens"):
            fn(prompt_ids=[1], max_new_tokens=0)
        with pytest.raises(ValueError, match="max_new_tokens"):
            fn(prompt_ids=[1] * 60, max_new_tokens=10)
        with pytest.raises(TypeError, match="prompt_ids"):
            fn(prompt_ids="abc", max_new_tokens=3)
        with pytest.raises(TypeError, match="max_new_tokens"):
            fn(prompt_ids=[1], max_new_tokens=2.0)
        with pytest.raises(ValueError, match="temperature"):  # greedy only
            fn(prompt_ids=[1], max_new_tokens=3, temperature=0.7)
        with pytest.raises(TypeError, match="temperature"):
            fn(prompt_ids=[1], max_new_tokens=3, temperature="0")
    with pytest.raises(ValueError, match="total_tokens"):
        speculative_generate(target, proposer, [1, 2], 3, total_tokens=0)
    with pytest.raises(TypeError, match="proposer"):
        speculative_generate(target, object(), [1, 2], 3, total_tokens=4)
    with pytest.raises(TypeError, match="target"):
        vanilla_generate("target", [1, 2], 3)

    class OutOfVocab(EmptyProposer):
        def propose(self, context):
            return Proposal(DraftTree((VOCAB,), (-1,), (0.0,)), forwards=1)

    with pytest.raises(ValueError, match="vocabulary"):
        speculative_generate(target, OutOfVocab(), [1, 2], 3, total_tokens=4)
