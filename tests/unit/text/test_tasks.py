import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.text import copy_task, masked_accuracy, masked_cross_entropy, mqar
from neurips26.train import fit


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run fastest on one thread; two OpenMP threads crawl when another process holds a core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_mqar_targets_match_the_bound_values():
    task = mqar(64, n_pairs=6, n_queries=4, vocab_size=20, seed=3)
    assert task.inputs.shape == (64, 2 * (6 + 4) - 1) and task.inputs.dtype == torch.long
    for x, y, m in zip(task.inputs.tolist(), task.targets.tolist(), task.mask.tolist(), strict=True):
        keys, values = x[0:12:2], x[1:12:2]
        bound = dict(zip(keys, values, strict=True))
        assert len(bound) == 6  # keys are distinct within a sequence
        assert all(k < 10 for k in keys) and all(v >= 10 for v in values)
        scored = [t for t, flag in enumerate(m) if flag]
        assert scored == [12, 14, 16, 18]
        assert len({x[t] for t in scored}) == 4  # distinct queries
        for t in scored:
            assert y[t] == bound[x[t]]


def test_task_targets_are_the_next_tokens_and_deterministic():
    for make in (
        lambda seed: mqar(8, n_pairs=3, n_queries=3, vocab_size=8, seed=seed),
        lambda seed: copy_task(8, length=5, vocab_size=7, seed=seed),
    ):
        a, b, c = make(0), make(0), make(1)
        torch.testing.assert_close(a.inputs[:, 1:], a.targets[:, :-1], rtol=0, atol=0)
        assert torch.equal(a.inputs, b.inputs) and torch.equal(a.mask, b.mask)
        assert not torch.equal(a.inputs, c.inputs)
        assert int(a.inputs.max()) < a.vocab_size and int(a.targets.max()) < a.vocab_size


def test_copy_task_scores_the_second_copy():
    task = copy_task(16, length=5, vocab_size=7, seed=0)
    assert task.inputs.shape == (16, 10) and task.vocab_size == 8
    assert (task.inputs[:, 5] == 7).all()  # the separator
    assert task.mask.sum(1).eq(5).all() and task.mask[:, 5:].all()
    torch.testing.assert_close(task.targets[task.mask].view(16, 5), task.inputs[:, :5], rtol=0, atol=0)


def test_bad_task_arguments_are_rejected():
    with pytest.raises(ValueError, match="n_queries"):
        mqar(2, n_pairs=2, n_queries=3, vocab_size=10, seed=0)
    with pytest.raises(ValueError, match="n_pairs"):
        mqar(2, n_pairs=6, n_queries=1, vocab_size=10, seed=0)
    with pytest.raises(TypeError, match="length"):
        copy_task(2, length=2.0, vocab_size=5, seed=0)


def test_masked_loss_and_accuracy():
    torch.manual_seed(0)
    logits = torch.randn(3, 4, 6)
    targets = torch.randint(0, 6, (3, 4))
    mask = torch.tensor([[1, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0]], dtype=torch.bool)
    manual = np.mean([-torch.log_softmax(logits[b, t], -1)[targets[b, t]].item() for b, t in mask.nonzero()])
    assert masked_cross_entropy(logits, targets, mask).item() == pytest.approx(manual, rel=1e-6)
    perfect = F.one_hot(targets, 6).float()
    assert masked_accuracy(perfect, targets, mask) == 1.0
    with pytest.raises(ValueError, match="mask"):
        masked_accuracy(perfect, targets, torch.zeros_like(mask))


class _AttentionOnly(nn.Module):
    """A 2-layer, 4-head causal attention-only decoder (enough for an induction circuit)."""

    def __init__(self, vocab: int, context: int, width: int = 128, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(context, width)
        self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(2))
        self.qkv = nn.ModuleList(nn.Linear(width, 3 * width) for _ in range(2))
        self.out = nn.ModuleList(nn.Linear(width, width) for _ in range(2))
        self.final, self.head = nn.LayerNorm(width), nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        b, t = idx.shape
        x = self.tok(idx) + self.pos(torch.arange(t))
        for norm, qkv, out in zip(self.norms, self.qkv, self.out, strict=True):
            q, k, v = qkv(norm(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + out(a.transpose(1, 2).reshape(b, t, -1))
        return self.head(self.final(x))


def test_a_tiny_decoder_learns_mqar():
    """In-context recall is learnable by the loop and the task as built (300 updates, a few seconds).

    With this model and schedule, 8 of 8 initialisation seeds tried reached > 0.9 within 200 updates.
    """
    n_pairs, n_queries, vocab = 4, 4, 16
    torch.manual_seed(0)
    model = _AttentionOnly(vocab, context=2 * (n_pairs + n_queries) - 1)
    held_out = mqar(512, n_pairs=n_pairs, n_queries=n_queries, vocab_size=vocab, seed=10**6)

    def accuracy(m):
        return masked_accuracy(m(held_out.inputs), held_out.targets, held_out.mask)

    chance = accuracy(model)
    history = fit(
        model,
        lambda m, b: masked_cross_entropy(m(b.inputs), b.targets, b.mask),
        lambda step: mqar(64, n_pairs=n_pairs, n_queries=n_queries, vocab_size=vocab, seed=step),
        steps=300,
        seed=0,
        lr=3e-3,
        warmup=20,
        eval_fn=accuracy,
        eval_every=100,
        progress=False,
    )
    assert chance < 0.3
    assert history.eval["eval"][-1] > 0.9
