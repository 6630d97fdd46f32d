"""Baselines that need the model itself: the dense steering vector and activation-patching top-k.

- **Dense steering (CAA)**: the class-mean difference of a residual layer's final-position activations
  (contrast prompts minus prompts) added at *every* position of that layer, one vector and one amplitude;
  the layer is the one whose vector moves the target readout most per unit of amplitude on the selection
  prompts.
- **Patching top-k**: for every node, patch the prompts' activation along the node's direction with the
  contrast prompt's (``h ← h + ((h_c − h)·u) u`` at the node's site, prompt by prompt) and measure the mean
  change of the target readout on the first ``patch_prompts`` prompts; take the ``k`` nodes that move it
  most toward the target, with least-squares shared amplitudes on the linearisation.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from neurips26.nn import Decoder
from neurips26.sparse_control.baselines import least_squares_control
from neurips26.sparse_control.controllability import check_system, project_energy
from neurips26.sparse_control.driver_omp import Control
from neurips26.sparse_control.intervene import logits_with
from neurips26.sparse_control.nodes import NodeSet, site_activations
from neurips26.sparse_control.readouts import target_readout
from neurips26.sparse_control.tasks import PromptSet
from neurips26.validation import check_int

PATCH_PROMPTS = 32


def dense_nodes(nodes: NodeSet) -> NodeSet:
    """The residual sites' class-mean-difference vectors, each added at every position (one node per
    residual site)."""
    rows = [
        j
        for j in range(len(nodes))
        if nodes.kind[j] == "meandiff" and nodes.sites[nodes.site_of[j]].component == "resid"
    ]
    sub = nodes.subset(rows)
    sites = tuple(replace(s, position=None) if s.component == "resid" else s for s in nodes.sites)
    return NodeSet(sites, sub.site_of, sub.kind, sub.vectors, sub.scale, sub.widths)


@torch.no_grad()
def dense_steering(
    model: Decoder, nodes: NodeSet, prompts: PromptSet, *, energy: float | None = None
) -> tuple[NodeSet, Control]:
    """The dense steering vector: its node set (:func:`dense_nodes`) and the control on the best layer, at
    the amplitude that brings the mean target readout to +1 on the linearisation of a unit step."""
    dense = dense_nodes(nodes)
    ids = torch.from_numpy(prompts.ids)
    dtype = next(model.parameters()).dtype
    y0 = target_readout(model(ids).logits[:, -1], prompts).cpu().numpy()
    gains = []
    for j in range(len(dense)):
        y1 = target_readout(logits_with(model, ids, dense, [j], torch.tensor([1.0], dtype=dtype)), prompts)
        gains.append(float((y1.cpu().numpy() - y0).mean()))
    best = int(np.argmax(gains))
    amplitude = (1.0 - y0.mean()) / gains[best] if gains[best] > 0 else 0.0
    a = np.array([amplitude])
    if energy is not None:
        a = project_energy(a, energy)
    return dense, Control(np.array([best]), a, float("nan"), "dense steering")


@torch.no_grad()
def patch_effects(
    model: Decoder,
    nodes: NodeSet,
    prompts: PromptSet,
    contrast: PromptSet,
    *,
    patch_prompts: int = PATCH_PROMPTS,
) -> np.ndarray:
    """Mean change of the target readout when each node's direction is patched from the contrast prompts
    ``(K,)`` (positive: toward the target)."""
    patch_prompts = check_int("patch_prompts", patch_prompts, minimum=1)
    rows = np.arange(min(patch_prompts, len(prompts)))
    p, c = prompts.subset(rows), contrast.subset(rows)
    ids, cids = torch.from_numpy(p.ids), torch.from_numpy(c.ids)
    h = site_activations(model, ids, nodes.sites)
    hc = site_activations(model, cids, nodes.sites)
    dtype = next(model.parameters()).dtype
    y0 = target_readout(model(ids).logits[:, -1], p).cpu().numpy()
    out = np.zeros(len(nodes))
    for j in range(len(nodes)):
        s = int(nodes.site_of[j])
        v = nodes.vector(j)
        u = v / np.linalg.norm(v)
        diff = (hc[s] - h[s]).double().cpu().numpy()  # (n, d) at the site's position
        amps = (diff @ u) / np.linalg.norm(v)  # per prompt, in the node's units
        y = target_readout(logits_with(model, ids, nodes, [j], torch.tensor(amps[:, None], dtype=dtype)), p)
        out[j] = float((y.cpu().numpy() - y0).mean())
    return out


def patching_top_k(
    G_T: np.ndarray, delta: np.ndarray, effects: np.ndarray, *, k: int, energy: float | None = None
) -> Control:
    """The ``k`` nodes whose patch moves the target most, least-squares amplitudes on ``G_T``."""
    k = check_int("k", k, minimum=1, maximum=len(effects))
    G_T, delta = check_system(G_T, delta)
    nodes = np.argsort(-np.asarray(effects), kind="stable")[:k]
    return least_squares_control(G_T, delta, nodes, energy, "patching")
