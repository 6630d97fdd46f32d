"""Training the SpecBlock drafter on the target's distillation data (the paper's training objective).

Each step draws ``batch`` sequences and, in each, a window of ``window`` rows (positions whose next token is a
response token are favoured), unrolls ``ttt_blocks`` blocks (:meth:`SpecBlockDrafter.forward_ttt`, one
``M ~ U{1 … K}`` per block transition and step) and minimises

    Σ_b Σ_k γ^k L^(b)_k + λ_rank Σ_b L^(b)_rank                   (γ = 0.8, λ_rank = 1)

with Adam (the recipe: :class:`DrafterTraining`). The data: ``tokens`` ``(B, T)``; ``logits``
``(B, T, V)`` and ``hidden`` ``(B, T, depth+1, H)``
from :func:`~neurips26.specblock.protocol.target_outputs`; ``loss_mask`` ``(B, T)`` True where position
``j``'s next token ``x_{j+1}`` is a response token. Slot ``k`` of a block at row ``i`` with offset ``O`` is
trained where ``loss_mask[i+1+O+k]`` (its teacher, the target's logits at ``i+1+O+k``, predicts a response
token).

Ablations (the chapter's flags): of the architecture, ``SpecBlockConfig(shift=False)`` (no layer-wise
shift) and ``rank_head=False`` (no rank head; the proposer then uses a fixed top-k); of the training,
``DrafterTraining(ttt_blocks=1)`` (single-block training), ``valid_prefix=False`` (every slot trained on
every masked position), ``strict_chain=True`` (a later block is trained only where
the earlier block's first ``M`` slots were all top-1 correct; the released code does not filter).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from neurips26.nn.transformer import Decoder
from neurips26.progress import progress
from neurips26.specblock.drafter import SpecBlockConfig, SpecBlockDrafter
from neurips26.specblock.losses import chain_mask, draft_loss, rank_chain_mask, rank_labels, rank_loss
from neurips26.specblock.protocol import fused_features
from neurips26.train.fit import History
from neurips26.validation import check_float, check_int, check_seed

_FIELDS = ("tokens", "logits", "hidden", "loss_mask")


def unpack_data(data: Any) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tokens, logits, hidden, loss_mask)`` from an object with those attributes, a dict or a 4-tuple."""
    if isinstance(data, tuple | list):
        if len(data) != 4:
            raise ValueError(
                f"data as a sequence must hold (tokens, logits, hidden, loss_mask); got {len(data)} items"
            )
        values = tuple(data)
    elif isinstance(data, dict):
        values = tuple(data[name] for name in _FIELDS)
    else:
        if not all(hasattr(data, name) for name in _FIELDS):
            raise TypeError(f"data must have attributes {_FIELDS}; got {type(data).__name__}")
        values = tuple(getattr(data, name) for name in _FIELDS)
    tokens, logits, hidden, mask = values
    for name, value in zip(_FIELDS, values, strict=True):
        if not isinstance(value, Tensor):
            raise TypeError(f"data.{name} must be a torch.Tensor; got {type(value).__name__}")
    if tokens.dim() != 2:
        raise ValueError(f"data.tokens must be (B, T); got {tuple(tokens.shape)}")
    b, t = tokens.shape
    if logits.shape[:2] != (b, t) or hidden.shape[:2] != (b, t) or mask.shape != (b, t):
        raise ValueError("data.logits, data.hidden and data.loss_mask must share tokens' (B, T)")
    if t < 3:
        raise ValueError(f"sequences must hold at least 3 tokens; got T={t}")
    return tokens.long(), logits, hidden, mask.bool()


def training_windows(
    first_row: Tensor, t: int, window: int, pad: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """Start rows of one window per sequence and the index grid ``(B, window + pad)`` (clamped) + validity."""
    last_start = max(t - 1 - window, 0)
    lo = (first_row - window // 2).clamp(0, last_start)
    span = (last_start - lo + 1).to(torch.float64)
    draws = torch.rand(lo.shape, generator=generator, dtype=torch.float64).to(lo.device)  # CPU stream, moved
    start = lo + (draws * span).long()
    index = start[:, None] + torch.arange(window + pad, device=lo.device)
    return index.clamp(max=t - 1), index < t


def ttt_losses(
    drafter: SpecBlockDrafter,
    features: Tensor,
    tokens: Tensor,
    logits: Tensor,
    mask: Tensor,
    steps: list[int],
    *,
    gamma: float = 0.8,
    valid_prefix: bool = True,
    strict_chain: bool = False,
    own_rows: bool = True,
) -> tuple[Tensor, Tensor, list[Tensor]]:
    """Draft and rank losses of one multi-block unroll (summed over blocks) and each block's slot accuracy.

    ``features`` ``(B, S, F)``; ``tokens``, ``logits``, ``mask`` cover columns ``0 … S + pad - 1`` where
    column ``t`` is position ``t`` (row ``i`` reads token ``t = i+1``), ``mask[t]`` = position ``t``'s next
    token is learnable (False beyond the data). ``steps``: the ``M`` of each block transition.
    """
    s = features.shape[1]
    kk = drafter.config.block_size
    outputs = drafter.forward_ttt(features, tokens[:, 1:], steps, own_rows=own_rows)
    total_draft = features.new_zeros(())
    total_rank = features.new_zeros(())
    accuracy = []
    carry = None  # strict chain: rows whose earlier blocks were right up to the launching slot
    offset = 0
    for b, out in enumerate(outputs):
        if b:
            offset += steps[b - 1]
        ar = torch.arange(max(s, kk), device=logits.device)
        cols = ar[:s, None] + 1 + offset + ar[:kk]  # teacher position i+1+O+k
        cols = cols.clamp(max=tokens.shape[1] - 1)
        teacher = logits[:, cols]  # (B, S, K, V)
        valid = mask[:, cols]  # (B, S, K)
        if carry is not None:
            valid = valid & carry[..., None]
        chain = chain_mask(out.logits, teacher, valid, valid_prefix=valid_prefix)
        loss, _ = draft_loss(out.logits, teacher, chain, gamma=gamma)
        total_draft = total_draft + loss
        right = out.logits.detach().argmax(-1) == teacher.argmax(-1)
        accuracy.append((right & valid).sum((0, 1)).float() / valid.sum((0, 1)).clamp_min(1).float())
        if out.rank_logits is not None:
            labels = rank_labels(out.logits, teacher)
            total_rank = total_rank + rank_loss(
                out.rank_logits, labels, rank_chain_mask(out.rank_logits, labels, valid)
            )
        if strict_chain and b + 1 < len(outputs):
            m = steps[b]
            ok = (right | ~valid)[..., :m].all(-1) & valid[..., 0]
            carry = ok if carry is None else carry & ok
    return total_draft, total_rank, accuracy


@dataclass(frozen=True)
class DrafterTraining:
    """How a SpecBlock drafter is trained: the recipe of :func:`train_specblock` (the architecture is a
    :class:`~neurips26.specblock.drafter.SpecBlockConfig`).

    ``steps`` Adam steps at learning rate ``lr``, each on ``batch`` sequences with one window of ``window``
    rows; ``ttt_blocks`` blocks unrolled per step (1: single-block training); ``valid_prefix``: the chain
    mask (False: every slot trained on every masked position); ``strict_chain``: a later block trains only
    where the earlier block's first ``M`` slots were all right; ``ttt_own_rows=False`` trains blocks ≥ 2
    with exactly the attention they get at inference (:meth:`SpecBlockDrafter.forward_ttt`); ``gamma``:
    the slot weight γ^k and ``rank_weight`` λ_rank of the objective above; ``seed`` fixes the weights,
    batches, windows and the ``M`` draws.
    """

    steps: int = 300
    batch: int = 16
    lr: float = 3e-3
    seed: int = 0
    ttt_blocks: int = 3
    valid_prefix: bool = True
    strict_chain: bool = False
    ttt_own_rows: bool = True
    window: int = 48
    gamma: float = 0.8
    rank_weight: float = 1.0

    def __post_init__(self) -> None:
        checked = {
            "steps": check_int("steps", self.steps, minimum=0),
            "batch": check_int("batch", self.batch, minimum=1),
            "lr": check_float("lr", self.lr, minimum=0.0, strict_min=True),
            "seed": check_seed("seed", self.seed),
            "ttt_blocks": check_int("ttt_blocks", self.ttt_blocks, minimum=1),
            "window": check_int("window", self.window, minimum=1),
            "gamma": check_float("gamma", self.gamma, minimum=0.0, maximum=1.0),
            "rank_weight": check_float("rank_weight", self.rank_weight, minimum=0.0),
        }
        for name in ("valid_prefix", "strict_chain", "ttt_own_rows"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {type(getattr(self, name)).__name__}")
        for name, value in checked.items():  # normalised (e.g. an int lr becomes a float)
            object.__setattr__(self, name, value)


def train_specblock(
    target: Decoder,
    data: Any,
    training: DrafterTraining | None = None,
    *,
    architecture: SpecBlockConfig | None = None,
    show_progress: bool = True,
) -> tuple[SpecBlockDrafter, History]:
    """Train a SpecBlock drafter for ``target`` on distillation ``data``; returns ``(drafter, history)``.

    ``training`` (default :class:`DrafterTraining`) is the recipe; ``architecture`` defaults to
    :meth:`SpecBlockConfig.for_target` (its ``shift`` and ``rank_head`` are the architecture ablations).
    Deterministic: ``training.seed`` fixes the weights, batches, windows and the ``M`` draws.
    ``history.loss`` is the total loss per step; ``history.eval`` holds ``draft_loss``, ``rank_loss`` and
    ``slot{k}_accuracy`` (block 1, top-1 agreement with the target on valid slots) per step.
    """
    if not isinstance(target, Decoder):
        raise TypeError(f"target must be a neurips26.nn.transformer.Decoder; got {type(target).__name__}")
    training = DrafterTraining() if training is None else training
    if not isinstance(training, DrafterTraining):
        raise TypeError(f"training must be a DrafterTraining or None; got {type(training).__name__}")
    if not isinstance(show_progress, bool):
        raise TypeError(f"show_progress must be a bool; got {type(show_progress).__name__}")
    config = SpecBlockConfig.for_target(target) if architecture is None else architecture
    if not isinstance(config, SpecBlockConfig):
        raise TypeError(f"architecture must be a SpecBlockConfig or None; got {type(config).__name__}")
    steps, batch, lr, seed = training.steps, training.batch, training.lr, training.seed
    ttt_blocks, window = training.ttt_blocks, training.window
    tokens, logits, hidden, mask = unpack_data(data)
    if logits.shape[-1] != config.vocab_size:
        raise ValueError(
            f"data.logits has {logits.shape[-1]} classes; the config's vocab_size is {config.vocab_size}"
        )

    drafter = SpecBlockDrafter.from_target(target, config, seed=seed)  # on the target's device
    device = drafter.embedding.device
    tokens, logits, hidden, mask = (t.to(device) for t in (tokens, logits, hidden, mask))
    features = fused_features(hidden).to(drafter.embedding.dtype)  # f_i = [h⁽¹⁾; h⁽²⁾; h⁽³⁾]
    if features.shape[-1] != config.feature_dim:
        raise ValueError(
            f"fused features have size {features.shape[-1]}; the config's feature_dim is {config.feature_dim}"
        )
    n, t = tokens.shape
    window = min(window, t - 2)
    kk = config.block_size
    pad = 2 + (ttt_blocks - 1) * kk + kk
    has = mask.any(1)
    first_row = torch.where(
        has, mask.float().argmax(1), torch.zeros(n, dtype=torch.long, device=device)
    )  # first learnable row
    pool = torch.nonzero(has).flatten()
    if pool.numel() == 0:
        raise ValueError("data.loss_mask selects no position: nothing to learn")

    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam([p for p in drafter.parameters() if p.requires_grad], lr=lr)
    history = History(seen_unit="sequences")
    history.eval = {"draft_loss": [], "rank_loss": []} | {f"slot{k}_accuracy": [] for k in range(kk)}
    drafter.train()
    started = time.perf_counter()
    for step in progress(range(steps), total=steps, desc="SpecBlock drafter", show=show_progress):
        rows = pool[torch.randint(pool.numel(), (batch,), generator=generator)]
        index, inside = training_windows(first_row[rows], t, window, pad, generator)
        ms = torch.randint(1, kk + 1, (ttt_blocks - 1,), generator=generator).tolist()
        take = rows[:, None]
        f = features[take, index[:, :window]]
        draft, ranked, accuracy = ttt_losses(
            drafter,
            f,
            tokens[take, index],
            logits[take, index].to(f.dtype),
            mask[take, index] & inside,
            ms,
            gamma=training.gamma,
            valid_prefix=training.valid_prefix,
            strict_chain=training.strict_chain,
            own_rows=training.ttt_own_rows,
        )
        loss = draft + training.rank_weight * ranked
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(drafter.parameters(), 1.0)
        optimizer.step()
        history.step.append(step)
        history.loss.append(float(loss.detach()))
        history.lr.append(lr)
        history.grad_norm.append(float(grad_norm))
        history.seen.append((step + 1) * batch)
        history.wall_time.append(time.perf_counter() - started)
        history.eval_step.append(step + 1)
        history.eval["draft_loss"].append(float(draft.detach()))
        history.eval["rank_loss"].append(float(ranked.detach()))
        for k in range(kk):
            history.eval[f"slot{k}_accuracy"].append(float(accuracy[0][k]))
    drafter.eval()
    return drafter, history
