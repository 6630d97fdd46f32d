"""The local linear map from node amplitudes to readouts: one backward pass per readout slot gives the
columns of every candidate node at once.

All ``K`` candidate nodes are driven with per-prompt amplitudes ``A`` ``(N, K)`` (zero, or a base point
``a₀`` on some nodes); the gradient of ``Σ_i y_{i,m}`` with respect to ``A`` is, row by row, the Jacobian
``∂y_{i,m} / ∂a_j`` — prompts in a batch do not interact, so summing over them loses nothing. ``G_T`` stacks
the target readouts of the task's prompts ``(N, K)``; ``G_P`` stacks the preservation readouts of
:mod:`~neurips26.sparse_control.readouts` (neutral windows, the task's own non-option tokens, the other
tasks' margins). Run it on the float64 copy of the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.nn import Decoder
from neurips26.sparse_control.intervene import intervened
from neurips26.sparse_control.nodes import NodeSet
from neurips26.sparse_control.readouts import answer_readout, centred_logprobs, target_readout, top_tokens
from neurips26.sparse_control.tasks import PromptSet

Readout = Callable[[torch.Tensor], torch.Tensor]


def readout_jacobian(
    model: Decoder,
    nodes: NodeSet,
    ids: torch.Tensor,
    readout: Readout,
    *,
    base: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Readouts ``(N, m)`` at the base point and their Jacobian ``(N, m, K)`` with respect to every node's
    amplitude; ``readout`` maps final-position logits ``(N, V)`` to ``(N, m)``; ``base`` ``(K,)`` the
    shared amplitudes of the base point (default 0)."""
    param = next(model.parameters())
    n, k = ids.shape[0], len(nodes)
    start = np.zeros(k) if base is None else np.asarray(base, dtype=float)
    if start.shape != (k,):
        raise ValueError(f"base must have shape ({k},); got {start.shape}")
    amps = torch.tensor(np.broadcast_to(start, (n, k)).copy(), dtype=param.dtype, device=param.device)
    amps.requires_grad_(True)
    with intervened(model, nodes, np.arange(k), amps):
        values = readout(model(ids.to(param.device)).logits[:, -1])
    if values.dim() == 1:
        values = values[:, None]
    grads = []
    for m in range(values.shape[1]):
        (g,) = torch.autograd.grad(values[:, m].sum(), amps, retain_graph=m < values.shape[1] - 1)
        grads.append(g.detach().cpu().numpy())
    return values.detach().cpu().numpy(), np.stack(grads, axis=1)


@dataclass(frozen=True)
class Linearisation:
    """The task's target readouts ``y_T`` ``(N,)`` and ``G_T`` ``(N, K)``; the preservation readouts' ``G_P``
    ``(M, K)`` with the name of each block of rows in ``parts`` (name → row slice)."""

    y_T: np.ndarray
    G_T: np.ndarray
    G_P: np.ndarray
    parts: dict[str, slice]


def linearise(
    model: Decoder,
    nodes: NodeSet,
    prompts: PromptSet,
    neutral_ids: np.ndarray,
    others: Sequence[PromptSet] = (),
    *,
    base: np.ndarray | None = None,
) -> Linearisation:
    """``G_T`` of ``prompts`` and ``G_P`` of the neutral windows, the prompts' non-option top tokens and the
    ``others`` tasks' margins, at the shared amplitudes ``base`` (default 0)."""
    ids = torch.from_numpy(prompts.ids)
    y, g = readout_jacobian(model, nodes, ids, lambda z: target_readout(z, prompts), base=base)
    blocks, parts, row = [], {}, 0

    def add(name: str, jac: np.ndarray) -> None:
        nonlocal row
        flat = jac.reshape(-1, jac.shape[-1])
        blocks.append(flat)
        parts[name] = slice(row, row + len(flat))
        row += len(flat)

    neutral = torch.from_numpy(neutral_ids)
    with torch.no_grad():
        tokens = top_tokens(model(neutral.to(next(model.parameters()).device)).logits[:, -1])
    _, jn = readout_jacobian(model, nodes, neutral, lambda z: centred_logprobs(z, tokens), base=base)
    add("neutral", jn)
    with torch.no_grad():
        own = top_tokens(
            model(ids.to(next(model.parameters()).device)).logits[:, -1], exclude=prompts.options
        )
    _, jo = readout_jacobian(model, nodes, ids, lambda z: centred_logprobs(z, own), base=base)
    add("non-target", jo)
    for other in others:
        _, jt = readout_jacobian(
            model, nodes, torch.from_numpy(other.ids), lambda z, o=other: answer_readout(z, o), base=base
        )
        add(f"task:{other.task}", jt)
    return Linearisation(
        y[:, 0], g[:, 0], np.concatenate(blocks) if blocks else np.zeros((0, len(nodes))), parts
    )
