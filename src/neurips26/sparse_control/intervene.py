"""Driving nodes during a forward pass: ``h_s ← h_s + Σ_j a_j v_j`` for the chosen nodes of each site.

Amplitudes are a tensor: ``(k,)`` shared by every prompt or ``(N, k)`` one row per prompt. Because they
enter the forward pass as a tensor, a gradient with respect to them is the Jacobian of any readout with
respect to the nodes (:mod:`~neurips26.sparse_control.jacobian`). Two other modes, for exploration:
``"clamp"`` sets the component of the activation along each node's direction to ``a_j · scale`` (0:
ablation), applied node after node.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch

from neurips26.nn import Decoder, hooked
from neurips26.sparse_control.nodes import NodeSet, check_node_indices
from neurips26.validation import check_choice

MODES = ("add", "clamp")


def _check_amplitudes(amplitudes: object, k: int) -> torch.Tensor:
    if not isinstance(amplitudes, torch.Tensor):
        raise TypeError(f"amplitudes must be a torch.Tensor; got {type(amplitudes).__name__}")
    if amplitudes.shape[-1:] != (k,) or amplitudes.dim() not in (1, 2):
        raise ValueError(f"amplitudes must have shape ({k},) or (N, {k}); got {tuple(amplitudes.shape)}")
    return amplitudes


def _site_hook(site, vectors: torch.Tensor, amps: torch.Tensor, mode: str):
    """The hook of one site: ``vectors`` ``(k_s, w)``, ``amps`` ``(k_s,)`` or ``(N, k_s)``."""

    def hook(module, inputs, output):
        x = output[:, :, site.head] if site.component == "head" else output
        v, a = vectors.to(x.dtype), amps.to(x.dtype)
        part = x if site.position is None else x[:, site.position]  # (B, w) or (B, T, w)
        every_position = part.dim() == 3
        if mode == "add":
            delta = a @ v  # (w,) shared, or (N, w) one row per prompt
            part = part + (delta[:, None] if delta.dim() == 2 and every_position else delta)
        else:  # clamp each direction's component to a_j · ‖v_j‖, one node after another
            for j in range(v.shape[0]):
                norm = v[j].norm()
                u = v[j] / norm
                level = a[..., j] * norm  # a scalar, or one per prompt
                level = level[:, None] if level.dim() == 1 and every_position else level
                part = part + (level - part @ u)[..., None] * u
        if site.position is None:
            new = part
        else:
            new = x.clone()
            new[:, site.position] = part
        if site.component == "head":
            out = output.clone()
            out[:, :, site.head] = new
            return out
        return new

    return hook


@contextmanager
def intervened(
    model: Decoder, nodes: NodeSet, chosen: object, amplitudes: torch.Tensor, *, mode: str = "add"
) -> Iterator[None]:
    """Run ``model`` inside the block with the ``chosen`` nodes driven at ``amplitudes`` (module doc).
    The hooks are removed on exit, also after an error."""
    chosen = check_node_indices(nodes, chosen, "chosen")
    amplitudes = _check_amplitudes(amplitudes, len(chosen))
    check_choice("mode", mode, MODES)
    device = next(model.parameters()).device
    by_point: dict[str, list] = {}
    for col, j in enumerate(chosen):
        s = int(nodes.site_of[j])
        by_point.setdefault(nodes.sites[s].point, []).append((s, col, j))
    hooks = {}
    for point, entries in by_point.items():
        site_hooks = []
        for s in sorted({e[0] for e in entries}):
            cols = [c for (ss, c, _) in entries if ss == s]
            idx = [j for (ss, _, j) in entries if ss == s]
            vectors = torch.from_numpy(np.stack([nodes.vector(j) for j in idx])).to(device)
            site_hooks.append(_site_hook(nodes.sites[s], vectors, amplitudes[..., cols], mode))
        hooks[point] = _chain(site_hooks)
    with hooked(model, hooks):
        yield


def _chain(site_hooks):
    def hook(module, inputs, output):
        for h in site_hooks:
            output = h(module, inputs, output)
        return output

    return hook


def logits_with(
    model: Decoder,
    ids: torch.Tensor,
    nodes: NodeSet,
    chosen: object,
    amplitudes: torch.Tensor,
    *,
    mode: str = "add",
) -> torch.Tensor:
    """The final-position logits ``(N, V)`` of ``ids`` with the nodes driven."""
    with intervened(model, nodes, chosen, amplitudes, mode=mode):
        return model(ids).logits[:, -1]
