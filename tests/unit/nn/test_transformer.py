"""The causal decoder: cache equivalences, tree verification, hook points, configuration errors."""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from neurips26.nn.attention import tree_mask
from neurips26.nn.hooks import hooked
from neurips26.nn.transformer import Decoder, DecoderConfig, DecoderOutput

POSITION_KINDS = ["rope", "learned", "sinusoidal"]
VOCAB, CONTEXT = 37, 24
TOL = 1e-5


def make_model(positions="rope", *, depth=2, seed=0, **overrides):
    """A tiny decoder whose weights are scaled up from the GPT-2 init so attention is far from uniform
    and logits are O(1): with the tiny init almost any mistake would hide below the tolerance."""
    config = DecoderConfig(
        vocab_size=VOCAB, width=32, depth=depth, heads=4, context=CONTEXT, positions=positions, **overrides
    )
    model = Decoder(config, seed=seed).eval()
    generator = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.normal_(0.0, 1.5 / parameter.shape[-1] ** 0.5, generator=generator)
    return model


def random_tokens(batch, length, seed=0):
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


# ------------------------------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("vocab_size", 0, ValueError),
        ("width", 1.5, TypeError),
        ("depth", 0, ValueError),
        ("heads", 0, ValueError),
        ("heads", 5, ValueError),  # does not divide width 32
        ("context", -1, ValueError),
        ("mlp_ratio", 0, ValueError),
        ("dropout", 1.5, ValueError),
        ("positions", "alibi", ValueError),
        ("tie_embeddings", 1, TypeError),
    ],
)
def test_bad_config_values_name_the_field(field, value, error):
    good = dict(vocab_size=VOCAB, width=32, depth=2, heads=4, context=CONTEXT)
    with pytest.raises(error, match=field):
        DecoderConfig(**{**good, field: value})


def test_rope_needs_an_even_head_size_and_config_is_frozen():
    with pytest.raises(ValueError, match="even head size"):
        DecoderConfig(vocab_size=5, width=12, depth=1, heads=4, context=8)  # head_dim 3
    DecoderConfig(vocab_size=5, width=12, depth=1, heads=4, context=8, positions="learned")  # fine
    config = DecoderConfig(vocab_size=5, width=16, depth=1, heads=4, context=8, mlp_ratio=2.5)
    assert (config.head_dim, config.mlp_width) == (4, 40)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.width = 8


def test_same_seed_same_weights_and_tied_embeddings():
    config = DecoderConfig(vocab_size=VOCAB, width=32, depth=2, heads=4, context=CONTEXT)
    a, b, c = Decoder(config, seed=3), Decoder(config, seed=3), Decoder(config, seed=4)
    states = a.state_dict().items(), b.state_dict().values(), c.state_dict().values()
    for (name, pa), pb, pc in zip(*states, strict=True):
        assert torch.equal(pa, pb), name
        if name.endswith("weight") and "norm" not in name:
            assert not torch.equal(pa, pc), name
    assert a.lm_head.weight is a.token_embedding.weight
    untied = Decoder(dataclasses.replace(config, tie_embeddings=False))
    assert untied.lm_head.weight is not untied.token_embedding.weight
    assert untied.num_parameters() == a.num_parameters() + VOCAB * 32
    # RoPE tables are rebuilt, not stored: a checkpoint holds learned numbers only
    assert not any("rotary" in name for name in a.state_dict())


def test_state_dict_round_trip_gives_the_same_logits():
    model, tokens = make_model("learned"), random_tokens(2, 10)
    clone = Decoder(model.config, seed=99).eval()
    clone.load_state_dict(model.state_dict())
    torch.testing.assert_close(clone(tokens).logits, model(tokens).logits, rtol=0, atol=0)


# ---------------------------------------------------------------------------------- cache equivalences


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_token_by_token_decoding_reproduces_the_full_forward(positions):
    model, tokens = make_model(positions), random_tokens(3, CONTEXT)
    full = model(tokens)
    assert isinstance(full, DecoderOutput) and full.logits.shape == (3, CONTEXT, VOCAB)
    cache = model.make_cache()
    steps = [model(tokens[:, t : t + 1], cache=cache).logits for t in range(CONTEXT)]
    assert cache.length == CONTEXT
    torch.testing.assert_close(torch.cat(steps, dim=1), full.logits, rtol=0, atol=TOL)


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_block_decoding_reproduces_the_full_forward(positions):
    model, tokens = make_model(positions), random_tokens(2, 20, seed=1)
    full = model(tokens).logits
    cache, pieces, start = model.make_cache(), [], 0
    for size in (5, 1, 4, 7, 3):  # uneven blocks, as a speculative decoder produces
        pieces.append(model(tokens[:, start : start + size], cache=cache).logits)
        start += size
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, rtol=0, atol=TOL)


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_truncating_to_an_accepted_prefix_then_continuing_equals_a_fresh_forward(positions):
    model = make_model(positions)
    prompt, draft, correction = random_tokens(1, 6), random_tokens(1, 5, seed=2), random_tokens(1, 3, seed=3)
    cache = model.make_cache()
    model(prompt, cache=cache)
    model(draft, cache=cache)  # verify a draft of five tokens ...
    accepted = 2
    cache.truncate(prompt.shape[1] + accepted)  # ... accept two, drop the rest
    assert cache.length == 8
    continued = model(correction, cache=cache).logits
    sequence = torch.cat([prompt, draft[:, :accepted], correction], dim=1)
    fresh = model(sequence).logits[:, -correction.shape[1] :]
    torch.testing.assert_close(continued, fresh, rtol=0, atol=TOL)


def test_a_copied_cache_is_an_independent_branch():
    model, tokens = make_model(), random_tokens(1, 12, seed=4)
    cache = model.make_cache()
    model(tokens[:, :6], cache=cache)
    branch = cache.copy()
    model(tokens[:, 6:9], cache=branch)  # extend the branch only
    assert (cache.length, branch.length) == (6, 9)
    rest = model(tokens[:, 6:], cache=cache).logits  # the original continues unaffected
    torch.testing.assert_close(rest, model(tokens).logits[:, 6:], rtol=0, atol=TOL)


# parents of an 8-node tree after the prompt: two roots, branches of depth up to 3
PARENTS = [-1, 0, 0, 1, 2, 2, -1, 6]
PATHS = [[0, 1, 3], [0, 2, 4], [0, 2, 5], [6, 7]]  # every root-to-leaf path


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_tree_mask_gives_each_path_the_logits_of_decoding_it_alone(positions):
    model = make_model(positions)
    prompt, nodes = random_tokens(2, 5, seed=5), random_tokens(2, len(PARENTS), seed=6)
    prefix = prompt.shape[1]
    mask, tree_positions = tree_mask(PARENTS, prefix_length=prefix)

    # all branches verified in one pass on top of the cached prompt
    cache = model.make_cache()
    model(prompt, cache=cache)
    tree_logits = model(nodes, positions=tree_positions, mask=mask, cache=cache).logits

    # the same without a cache: prompt (causal) and tree in one forward
    full_mask = torch.zeros(prefix + len(PARENTS), prefix + len(PARENTS), dtype=torch.bool)
    full_mask[:prefix, :prefix] = torch.tril(torch.ones(prefix, prefix, dtype=torch.bool))
    full_mask[prefix:] = mask
    one_pass = model(
        torch.cat([prompt, nodes], dim=1),
        positions=torch.cat([torch.arange(prefix), tree_positions]),
        mask=full_mask,
    ).logits[:, prefix:]

    for path in PATHS:
        alone = model(torch.cat([prompt, nodes[:, path]], dim=1)).logits[:, prefix:]
        torch.testing.assert_close(tree_logits[:, path], alone, rtol=0, atol=TOL)
        torch.testing.assert_close(one_pass[:, path], alone, rtol=0, atol=TOL)


def test_gathering_the_accepted_tree_path_then_continuing_equals_a_fresh_forward():
    model = make_model()
    prompt, nodes, after = (
        random_tokens(1, 5, seed=7),
        random_tokens(1, len(PARENTS), seed=8),
        random_tokens(1, 2),
    )
    mask, tree_positions = tree_mask(PARENTS, prefix_length=5)
    cache = model.make_cache()
    model(prompt, cache=cache)
    model(nodes, positions=tree_positions, mask=mask, cache=cache)
    accepted = PATHS[2]  # nodes 0, 2, 5
    cache.gather(list(range(5)) + [5 + i for i in accepted])
    continued = model(after, cache=cache).logits
    fresh = model(torch.cat([prompt, nodes[:, accepted], after], dim=1)).logits[:, -2:]
    torch.testing.assert_close(continued, fresh, rtol=0, atol=TOL)


def test_per_sequence_positions_and_additive_masks_match_their_shared_and_boolean_forms():
    model, tokens = make_model(), random_tokens(2, 8)
    mask = torch.tril(torch.ones(8, 8, dtype=torch.bool))
    additive = torch.zeros(8, 8).masked_fill(~mask, float("-inf"))
    reference = model(tokens).logits
    per_sequence = model(tokens, positions=torch.arange(8).expand(2, 8), mask=additive).logits
    torch.testing.assert_close(per_sequence, reference, rtol=0, atol=TOL)


def test_attention_weights_are_causal_distributions():
    model, tokens = make_model(), random_tokens(2, 9)
    out = model(tokens, return_attention=True)
    assert len(out.attention) == 2 and out.attention[0].shape == (2, 4, 9, 9)
    for weights in out.attention:
        torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 9))
        assert torch.all(weights.triu(diagonal=1) == 0)
    # with a cache the weights span past + new keys
    cache = model.make_cache()
    model(tokens[:, :5], cache=cache)
    step = model(tokens[:, 5:7], cache=cache, return_attention=True)
    assert step.attention[1].shape == (2, 4, 2, 7)
    torch.testing.assert_close(step.attention[1], out.attention[1][:, :, 5:7, :7], rtol=0, atol=TOL)
    assert model(tokens).attention is None and model(tokens).hidden_states is None


# ---------------------------------------------------------------------------------------- hook points


def test_hook_point_names_cover_every_layer():
    model = make_model(depth=3)
    names = set(model.hook_points())
    for i in range(3):
        for point in ("resid_pre", "resid_mid", "resid_post", "attn.head_out", "mlp.neurons"):
            assert f"blocks.{i}.{point}" in names
    assert len(names) == 15


def test_hidden_states_match_what_forward_hooks_observe():
    model, tokens = make_model(depth=3), random_tokens(2, 7)
    seen = {}

    def record(name):
        def hook(module, inputs, output):
            seen[name] = output.detach().clone()

        return hook

    names = ["blocks.0.resid_pre"] + [f"blocks.{i}.resid_post" for i in range(3)]
    with hooked(model, {name: record(name) for name in names}):
        out = model(tokens, return_hidden=True)
    assert len(out.hidden_states) == 4
    for name, hidden in zip(names, out.hidden_states, strict=True):
        torch.testing.assert_close(hidden, seen[name], rtol=0, atol=0)
    # the last hidden state, normed and projected, is the logits
    torch.testing.assert_close(model.lm_head(model.final_norm(out.hidden_states[-1])), out.logits)
    # resid_pre of block i+1 is resid_post of block i
    with hooked(model, {"blocks.1.resid_pre": record("pre1")}):
        model(tokens)
    torch.testing.assert_close(seen["pre1"], out.hidden_states[1], rtol=0, atol=0)


def test_hook_shapes_and_identity_intervention_leaves_logits_unchanged():
    model, tokens = make_model(), random_tokens(2, 6)
    reference = model(tokens).logits
    shapes = {}

    def identity(name):
        def hook(module, inputs, output):
            shapes[name] = tuple(output.shape)
            return output.clone()  # an explicit replacement by the same values

        return hook

    with hooked(model, {name: identity(name) for name in model.hook_points()}):
        patched = model(tokens).logits
    torch.testing.assert_close(patched, reference, rtol=0, atol=0)
    assert shapes["blocks.0.attn.head_out"] == (2, 6, 4, 8)
    assert shapes["blocks.1.mlp.neurons"] == (2, 6, 128)
    assert shapes["blocks.1.resid_mid"] == (2, 6, 32)
    assert not model.hook_points()["blocks.0.resid_pre"]._forward_hooks  # removed on exit


@pytest.mark.parametrize(
    ("point", "later_positions_move"),
    [
        ("blocks.0.resid_mid", True),  # block 1's attention carries the change forward
        ("blocks.0.attn.head_out", True),
        ("blocks.0.mlp.neurons", True),
        ("blocks.1.attn.head_out", False),  # no attention after it: only position p moves
        ("blocks.1.mlp.neurons", False),
    ],
)
def test_replacing_an_activation_at_position_p_changes_only_positions_from_p_on(point, later_positions_move):
    model, tokens, p = make_model(), random_tokens(2, 10), 4
    reference = model(tokens).logits

    def patch(module, inputs, output):
        output = output.clone()
        output[:, p] = torch.randn(output[:, p].shape, generator=torch.Generator().manual_seed(0))
        return output

    with hooked(model, {point: patch}):
        patched = model(tokens).logits
    torch.testing.assert_close(patched[:, :p], reference[:, :p], rtol=0, atol=0)  # the past is untouched
    changed = (patched - reference).abs().amax(dim=(0, 2))  # per position
    assert changed[p] > 1e-3
    if later_positions_move:
        assert torch.all(changed[p + 1 :] > 1e-3), changed
    else:
        assert torch.all(changed[p + 1 :] == 0), changed


def test_zeroing_a_head_output_equals_removing_the_head_from_the_output_projection():
    model, tokens, head, size = make_model(), random_tokens(1, 8), 2, 8

    def ablate(module, inputs, output):
        output = output.clone()
        output[:, :, head] = 0
        return output

    with hooked(model, {"blocks.1.attn.head_out": ablate}):
        ablated = model(tokens).logits
    with torch.no_grad():
        model.blocks[1].attn.out.weight[:, head * size : (head + 1) * size] = 0  # W_O columns of that head
    torch.testing.assert_close(model(tokens).logits, ablated, rtol=0, atol=TOL)


def test_hooks_also_act_during_cached_decoding():
    model, tokens = make_model(), random_tokens(1, 6)
    calls = []
    with hooked(model, {"blocks.1.resid_post": lambda m, i, o: calls.append(o.shape[1])}):
        cache = model.make_cache()
        for t in range(6):
            model(tokens[:, t : t + 1], cache=cache)
    assert calls == [1] * 6
    with pytest.raises(ValueError, match="hook points"):
        with hooked(model, {"blocks.9.resid_post": lambda m, i, o: None}):
            pass


# ------------------------------------------------------------------------------------- training works


def test_a_few_adamw_steps_overfit_one_batch():
    torch.manual_seed(0)
    config = DecoderConfig(vocab_size=VOCAB, width=32, depth=2, heads=4, context=CONTEXT, dropout=0.1)
    model = Decoder(config, seed=0).train()
    tokens = random_tokens(4, CONTEXT)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(40):
        logits = model(tokens[:, :-1]).logits
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(torch.log(torch.tensor(float(VOCAB))).item(), abs=0.3)
    assert losses[-1] < 0.5 * losses[0]


# ------------------------------------------------------------------------------------------ bad input


def test_bad_input_raises_clear_errors():
    model, tokens = make_model(), random_tokens(2, 6)
    with pytest.raises(ValueError, match="context overflow"):
        model(random_tokens(1, CONTEXT + 1))
    cache = model.make_cache()
    model(random_tokens(2, CONTEXT - 2), cache=cache)
    with pytest.raises(ValueError, match="context overflow"):
        model(tokens[:, :3], cache=cache)
    with pytest.raises(ValueError, match="batch size"):
        model(tokens[:1, :1], cache=cache)
    with pytest.raises(ValueError, match="mask"):
        model(tokens, mask=torch.ones(6, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask"):
        model(tokens, mask=torch.ones(2, 3, 6, 6, dtype=torch.bool))  # 3 heads, model has 4
    with pytest.raises(TypeError, match="mask"):
        model(tokens, mask=torch.ones(6, 6, dtype=torch.long))
    with pytest.raises(ValueError, match="positions"):
        model(tokens, positions=torch.arange(5))
    with pytest.raises(ValueError, match="positions"):
        model(tokens, positions=torch.arange(6) + CONTEXT)
    with pytest.raises(TypeError, match="positions"):
        model(tokens, positions=torch.arange(6.0))
    with pytest.raises(ValueError, match="tokens"):
        model(tokens + VOCAB)
    with pytest.raises(ValueError, match="tokens"):
        model(tokens[0])
    with pytest.raises(ValueError, match="cache"):
        model(tokens, cache=Decoder(dataclasses.replace(model.config, depth=3)).make_cache())
    with pytest.raises(TypeError, match="config"):
        Decoder({"width": 32})
