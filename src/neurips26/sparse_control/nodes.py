"""Candidate control nodes: (site, direction) pairs inside the frozen model, with amplitudes in units of
the site's typical size.

A **site** is a hook point of :class:`~neurips26.nn.Decoder` and a position: the residual stream entering
each block and leaving the last one (``blocks.{l}.resid_pre``, ``blocks.{L-1}.resid_post``; width 64), one
attention head's output (``blocks.{l}.attn.head_out``, head ``h``; width 16) or the MLP's hidden neurons
(``blocks.{l}.mlp.neurons``; width 256), at the final position (default), every position, or a named one.
Adding a vector to a block's MLP output is adding it to the residual stream that leaves the block, so the
residual sites cover the MLP outputs too.

A **node** is a site and a unit direction ``u`` in it. Candidates per site:

- residual: the basis (64), the top-8 principal directions of the task prompts' activations, their
  class-mean difference (the mean over contrast prompts, whose answer is the control's target, minus the
  mean over the prompts), and the unembedding direction ``mean_i (W_U[t_i] − W_U[a_i])``;
- head: its top-2 principal directions and its class-mean difference;
- neurons: one basis direction per neuron.

A node's vector is ``v = scale_s · u`` with ``scale_s`` the median norm of the site's activation over the
task prompts, so amplitude 1 moves a site by its typical size and one energy bound fits every site.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.nn import Decoder, hooked
from neurips26.validation import check_choice, check_int

COMPONENTS = ("resid", "head", "neurons")
FINAL = -1
RESID_PCA = 8
HEAD_PCA = 2


@dataclass(frozen=True)
class Site:
    """A hook point, the head it reads (``head`` ≥ 0 for ``component="head"``, else −1), and the
    ``position`` (``FINAL`` = −1 the last token, ``None`` every token, ``p`` ≥ 0 a token index)."""

    point: str
    component: str
    head: int = -1
    position: int | None = FINAL

    def __post_init__(self) -> None:
        if not isinstance(self.point, str):
            raise TypeError(f"point must be a hook-point name; got {type(self.point).__name__}")
        check_choice("component", self.component, COMPONENTS)
        if (self.component == "head") != (self.head >= 0):
            raise ValueError(f"head must be >= 0 exactly for component='head'; got head={self.head}")
        if self.position is not None:
            check_int("position", self.position, minimum=FINAL)

    @property
    def label(self) -> str:
        where = (
            "all" if self.position is None else ("final" if self.position == FINAL else f"pos{self.position}")
        )
        part = (
            self.point.replace("blocks.", "L").replace(".attn.head_out", "").replace(".mlp.neurons", " mlp")
        )
        return f"{part}{f' h{self.head}' if self.head >= 0 else ''} @{where}"


@dataclass(frozen=True)
class NodeSet:
    """``K`` candidate nodes: each one's ``site_of`` index into ``sites``, its direction ``kind`` and its
    vector ``vectors[j]`` (``scale · u`` in its site's width, zero-padded to the widest site); per site
    the ``scale`` (median activation norm) and ``widths``."""

    sites: tuple[Site, ...]
    site_of: np.ndarray
    kind: tuple[str, ...]
    vectors: np.ndarray
    scale: np.ndarray
    widths: np.ndarray

    def __len__(self) -> int:
        return len(self.site_of)

    def vector(self, j: int) -> np.ndarray:
        """Node ``j``'s vector in its site's width."""
        return self.vectors[j, : self.widths[self.site_of[j]]]

    def label(self, j: int) -> str:
        """A short name: site and direction kind."""
        return f"{self.sites[self.site_of[j]].label} {self.kind[j]}"

    def subset(self, nodes: list[int] | np.ndarray) -> NodeSet:
        """The nodes ``nodes`` (sites kept whole)."""
        nodes = np.asarray(nodes, dtype=int)
        return NodeSet(
            self.sites,
            self.site_of[nodes],
            tuple(self.kind[j] for j in nodes),
            self.vectors[nodes],
            self.scale,
            self.widths,
        )


def sites(model: Decoder, *, position: int | None = FINAL) -> tuple[Site, ...]:
    """Every residual, head and neuron site of ``model`` at ``position``."""
    depth, heads = model.config.depth, model.config.heads
    out = [Site(f"blocks.{l}.resid_pre", "resid", position=position) for l in range(depth)]
    out.append(Site(f"blocks.{depth - 1}.resid_post", "resid", position=position))
    out += [
        Site(f"blocks.{l}.attn.head_out", "head", h, position) for l in range(depth) for h in range(heads)
    ]
    out += [Site(f"blocks.{l}.mlp.neurons", "neurons", position=position) for l in range(depth)]
    return tuple(out)


def site_slice(site: Site, activation: torch.Tensor) -> torch.Tensor:
    """The part of a hook point's activation that ``site`` reads: ``(B, d)`` at one position, or
    ``(B, T, d)`` at every position."""
    x = activation[:, :, site.head] if site.component == "head" else activation
    return x if site.position is None else x[:, site.position]


@torch.no_grad()
def site_activations(model: Decoder, ids: torch.Tensor, site_list: tuple[Site, ...]) -> list[torch.Tensor]:
    """Each site's activation on ``ids`` at its position (``(N, d)``; every position flattened to
    ``(N·T, d)``)."""
    seen: dict[str, torch.Tensor] = {}

    def keep(name):
        def hook(module, inputs, output):
            seen[name] = output.detach()

        return hook

    with hooked(model, {s.point: keep(s.point) for s in site_list}):
        model(ids)
    out = []
    for s in site_list:
        x = site_slice(s, seen[s.point])
        out.append(x.reshape(-1, x.shape[-1]))
    return out


def _top_pcs(x: np.ndarray, k: int) -> np.ndarray:
    centred = x - x.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return vt[:k]


def _unit(v: np.ndarray) -> np.ndarray | None:
    norm = np.linalg.norm(v)
    return v / norm if norm > 1e-9 else None


def build_nodes(
    model: Decoder,
    ids: torch.Tensor,
    contrast_ids: torch.Tensor,
    answer: np.ndarray,
    target: np.ndarray,
    *,
    position: int | None = FINAL,
) -> NodeSet:
    """The candidate nodes of module doc for one task's prompts ``ids``, their ``contrast_ids`` (same
    prompts with the target as the answer) and each prompt's ``answer`` and ``target`` token ids."""
    site_list = sites(model, position=position)
    acts = site_activations(model, ids, site_list)
    contrast = site_activations(model, contrast_ids, site_list)
    unembed = model.lm_head.weight.detach().double().cpu().numpy()
    logit_dir = (unembed[np.asarray(target)] - unembed[np.asarray(answer)]).mean(0)
    widest = max(a.shape[1] for a in acts)
    site_of, kinds, vectors, scales = [], [], [], []
    for s, (site, x, xc) in enumerate(zip(site_list, acts, contrast, strict=True)):
        x, xc = x.double().cpu().numpy(), xc.double().cpu().numpy()
        scale = float(np.median(np.linalg.norm(x, axis=1)))
        scales.append(scale)
        dirs: list[tuple[str, np.ndarray]] = []
        if site.component == "resid":
            dirs += [(f"basis{i}", np.eye(x.shape[1])[i]) for i in range(x.shape[1])]
            dirs += [(f"pc{i}", v) for i, v in enumerate(_top_pcs(x, RESID_PCA))]
            dirs += [("meandiff", _unit(xc.mean(0) - x.mean(0))), ("unembed", _unit(logit_dir))]
        elif site.component == "head":
            dirs += [(f"pc{i}", v) for i, v in enumerate(_top_pcs(x, HEAD_PCA))]
            dirs += [("meandiff", _unit(xc.mean(0) - x.mean(0)))]
        else:
            dirs += [(f"n{i}", np.eye(x.shape[1])[i]) for i in range(x.shape[1])]
        for kind, u in dirs:
            if u is None:
                continue
            padded = np.zeros(widest)
            padded[: len(u)] = scale * u
            site_of.append(s)
            kinds.append(kind)
            vectors.append(padded)
    widths = np.array([a.shape[1] for a in acts])
    return NodeSet(site_list, np.array(site_of), tuple(kinds), np.array(vectors), np.array(scales), widths)


def check_node_indices(nodes: NodeSet, chosen: object, name: str = "nodes") -> np.ndarray:
    """``chosen`` as an integer array of distinct indices into ``nodes`` (``ValueError`` naming ``name``)."""
    arr = np.asarray(chosen)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be a 1-d sequence of node indices")
    if len(arr) and (arr.min() < 0 or arr.max() >= len(nodes)):
        raise ValueError(f"{name} must index the {len(nodes)} nodes; got {arr.min()}..{arr.max()}")
    if len(set(arr.tolist())) != len(arr):
        raise ValueError(f"{name} must not repeat a node")
    return arr
