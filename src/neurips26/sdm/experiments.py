"""The chapter's measurements: accuracy tables, the cost model of decoding, the capacity sweep, the ``M₀``
ablation and slot usage. Each takes checkpoints from :func:`~neurips26.sdm.prepare.pretrained`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from neurips26.cache import cached
from neurips26.sdm.data import RecallBatch, recall_batch
from neurips26.sdm.gdn import GatedDeltaNet
from neurips26.sdm.models import WIDTH, linear_macs
from neurips26.sdm.prepare import NAMES, pretrained
from neurips26.sdm.sdm import SparseDeltaMemory, sdm_parallel, sdm_step_
from neurips26.sdm.training import EVAL_SEED, eval_pairs, eval_size, evaluate
from neurips26.seeding import sub_seed
from neurips26.timing import Timing, time_interleaved
from neurips26.validation import check_int

SEEDED = {"gdn": ("gdn-s0", "gdn-s1", "gdn-s2"), "sdm": ("sdm-s0", "sdm-s1", "sdm-s2")}
"""The rows trained on three seeds."""
COST_SLOTS = (256, 1024, 4096, 16_384, 65_536)
"""Table sizes of the decoding cost model (claim C3): from the chapter's ``N`` to the paper's."""


def accuracy_table(
    scale: str = "default", names: tuple[str, ...] = NAMES, *, zero_state: bool = False
) -> dict:
    """``{name: {P: {"context", "facts", "loss"}}}`` on the evaluation sequences (512 per ``P`` at default,
    the same for every model), cached by the checkpoints' weights. ``zero_state`` evaluates with a zero
    initial table/state."""
    table = {}
    for name in names:
        model, meta = pretrained(name, scale, verbose=False)
        config = {"name": name, "weights": meta.weights_hash, "scale": scale, "zero": zero_state}
        table[name] = cached(
            "sdm-accuracy",
            config,
            lambda m=model: evaluate(
                m, eval_pairs(scale), size=eval_size(scale), seed=EVAL_SEED, zero_state=zero_state
            ),
            package="neurips26.sdm",
            verbose=False,
        )
    return table


def seed_stats(table: dict, kind: str, P: int, key: str = "context") -> tuple[float, float]:
    """Mean and standard deviation over the three seeds of ``kind`` (``"gdn"``/``"sdm"``) at ``P``."""
    values = [table[name][P][key] for name in SEEDED[kind]]
    return float(np.mean(values)), float(np.std(values))


def mean_facts(table: dict, names: tuple[str, ...]) -> float:
    """Fact accuracy averaged over ``P`` and over ``names``."""
    return float(np.mean([np.mean([r["facts"] for r in table[n].values()]) for n in names]))


def mean_context(table: dict, names: tuple[str, ...]) -> float:
    """In-context accuracy averaged over ``P`` and over ``names``."""
    return float(np.mean([np.mean([r["context"] for r in table[n].values()]) for n in names]))


# ------------------------------------------------------------------------------ decoding cost (C3)


@dataclass(frozen=True)
class DecodeCost:
    """Per-token decoding cost of one mixer: multiply-adds (``macs``: projections, recurrence, addressing),
    floats of state read or written (``traffic``) and floats of state held (``state``)."""

    macs: int
    traffic: int
    state: int


def sdm_decode_cost(slots: int, *, heads: int = 2, writes: int = 8, reads: int = 8) -> DecodeCost:
    """SDM with ``slots`` per head at width 64: projections grow with ``√N``, the recurrence does not."""
    with torch.device("meta"):
        layer = SparseDeltaMemory(WIDTH, heads, slots, writes, reads, memory="zero")
    d = layer.head_dim
    return DecodeCost(
        macs=linear_macs(layer) + layer.recurrence_macs() + layer.addressing_ops(),
        traffic=heads * (2 * writes + reads) * d,  # gather + scatter of W rows, gather of R rows
        state=layer.state_floats(),
    )


def gdn_decode_cost(key_dim: int, *, heads: int = 2, value_dim: int = 32) -> DecodeCost:
    """GDN with key width ``key_dim``: every token reads and rewrites its whole ``d_v × d_k`` state."""
    with torch.device("meta"):
        layer = GatedDeltaNet(WIDTH, heads, key_dim, value_dim)
    return DecodeCost(
        macs=linear_macs(layer) + layer.recurrence_macs(),
        traffic=2 * layer.state_floats(),
        state=layer.state_floats(),
    )


def cost_model(slots: tuple[int, ...] = COST_SLOTS) -> dict[int, dict[str, DecodeCost]]:
    """For each table size ``N``: SDM's cost and that of the GDN holding the same state (``d_k = N``)."""
    return {n: {"sdm": sdm_decode_cost(n), "gdn": gdn_decode_cost(n)} for n in slots}


def decode_timing(
    slots: tuple[int, ...] = (256, 65_536), *, rounds: int = 7, inner: int = 200, seed: int = 0
) -> Timing:
    """Wall clock of one in-place SDM decoding step (recurrence only, batch 1, two heads) at each ``N``,
    interleaved; the addresses are random. Beside the cost model, never deciding."""
    gen = torch.Generator().manual_seed(seed)
    calls = {}
    for n in slots:
        M = torch.randn(2, n, 32, generator=gen)
        v = torch.randn(2, 32, generator=gen)
        wi = torch.stack([torch.randperm(n, generator=gen)[:8] for _ in range(2)])
        ri = torch.stack([torch.randperm(n, generator=gen)[:8] for _ in range(2)])
        w = torch.full((2, 8), 1 / 8)
        g, b = torch.full((2,), -0.1), torch.full((2,), 0.5)
        calls[f"SDM N={n}"] = lambda M=M, v=v, wi=wi, ri=ri, w=w, g=g, b=b: sdm_step_(
            M, v, wi, w, ri, w, g, b
        )
    return time_interleaved(calls, rounds=rounds, inner=inner, reference=f"SDM N={slots[0]}")


def gdn_decode_timing(
    key_dims: tuple[int, ...] = (8, 65_536), *, rounds: int = 7, inner: int = 20, seed: int = 0
) -> Timing:
    """Wall clock of one GDN decoding step (decay, read, write, query; two heads, ``d_v = 32``) at each key
    width — the equal-state comparison of :func:`decode_timing`."""
    gen = torch.Generator().manual_seed(seed)
    calls = {}
    for dk in key_dims:
        S = torch.randn(2, 32, dk, generator=gen)
        k = torch.nn.functional.normalize(torch.randn(2, dk, generator=gen), dim=-1)
        v = torch.randn(2, 32, generator=gen)

        def step(S=S, k=k, v=v) -> None:
            S.mul_(0.9)
            delta = 0.5 * (v - torch.einsum("hvk,hk->hv", S, k))
            S.add_(delta[:, :, None] * k[:, None, :])
            torch.einsum("hvk,hk->hv", S, k)

        calls[f"GDN d_k={dk}"] = step
    return time_interleaved(calls, rounds=rounds, inner=inner, reference=f"GDN d_k={key_dims[0]}")


# ------------------------------------------------------------------------------ slot usage


def _sdm_mixer(model: nn.Module) -> SparseDeltaMemory:
    mixer = getattr(getattr(model, "global_block", None), "mixer", None)
    if not isinstance(mixer, SparseDeltaMemory):
        raise TypeError("model must have an SDM global mixer")
    return mixer


@torch.no_grad()
def mixer_input(model: nn.Module, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What the global mixer of ``model`` receives on ``tokens`` ``(B, T)``, caught with a forward
    pre-hook: its input ``(B, T, D)``, and the model's logits. ``mixer.features``/``addresses`` of that
    input are the addresses, values and gates the model used."""
    mixer, caught = model.global_block.mixer, {}
    hook = mixer.register_forward_pre_hook(lambda module, args: caught.setdefault("x", args[0]))
    try:
        logits = model(tokens)
    finally:
        hook.remove()
    return caught["x"], logits


@torch.no_grad()
def reads_by_query(model: nn.Module, batch: RecallBatch) -> dict[str, np.ndarray | float]:
    """Where an SDM reads for fact queries and for in-context queries of ``batch``.

    ``facts``, ``context``: read mass per slot ``(H, N)`` (the ρ of those query positions, normalised per
    head); ``share-facts``, ``share-context``: the mean share of a reading that comes from ``M₀``, i.e.
    ``‖o − o₀‖ / (‖o − o₀‖ + ‖o₀‖)`` with ``o₀`` the reading of the same sequence from a zero table (the
    recurrence is linear in ``M₀``, so ``o − o₀`` is exactly ``M₀``'s part).
    """
    mixer = _sdm_mixer(model)
    f = mixer.features(mixer_input(model, batch.inputs)[0])
    args = [f[k] for k in ("v", "write_idx", "kappa", "read_idx", "rho", "g", "beta")]
    full, _ = sdm_parallel(*args, mixer.initial_table(batch.inputs.shape[0]), slots=mixer.slots)
    alone, _ = sdm_parallel(*args, None, slots=mixer.slots)
    from_table = (full - alone).norm(dim=-1)  # (B, H, T)
    share = from_table / (from_table + alone.norm(dim=-1))
    out: dict[str, np.ndarray | float] = {}
    for kind, mask in (("facts", batch.fact_mask), ("context", batch.context_mask)):
        rho = f["rho"] * mask[:, None, :, None]  # only these queries
        mass = torch.zeros(mixer.heads, mixer.slots, dtype=torch.float64)
        mass.scatter_add_(
            1,
            f["read_idx"].transpose(0, 1).reshape(mixer.heads, -1),
            rho.transpose(0, 1).reshape(mixer.heads, -1).double(),
        )
        out[kind] = (mass / mass.sum(1, keepdim=True)).numpy()
        out[f"share-{kind}"] = float(share.transpose(0, 1)[:, mask].mean())
    return out


@torch.no_grad()
def slot_usage(
    model: nn.Module, *, n_pairs: int = 16, size: int = 256, seed: int = EVAL_SEED
) -> dict[str, np.ndarray | float]:
    """How an SDM model spreads its writes: ``counts`` ``(H, N)`` written per slot (summed κ) over ``size``
    evaluation sequences, the fraction of slots ever ``used`` and the ``perplexity`` of the write
    distribution over ``N`` (``exp`` of its entropy; ``N`` when uniform, small under collapse)."""
    mixer = _sdm_mixer(model)
    size = check_int("size", size, minimum=1)
    batch = recall_batch(size, n_pairs, sub_seed(seed, n_pairs))
    address = mixer.addresses(mixer_input(model, batch.inputs)[0])
    H, N = mixer.heads, mixer.slots
    counts = torch.zeros(H, N, dtype=torch.float64)
    idx = address["write_idx"].transpose(0, 1).reshape(H, -1)
    weights = address["kappa"].transpose(0, 1).reshape(H, -1).double()
    counts.scatter_add_(1, idx, weights)
    p = counts / counts.sum(1, keepdim=True)
    entropy = -(p * p.clamp(min=1e-300).log()).sum(1)
    return {
        "counts": counts.numpy(),
        "used": float((counts > 0).double().mean()),
        "perplexity": float(entropy.exp().mean()),
        "slots": N,
    }


def solver_timing(slots: int = 256, *, batch: int = 16, rounds: int = 5, seed: int = 0) -> Timing:
    """Forward and backward of an SDM mixer on one batch of ``P = 16`` (``T = 59``): the token loop
    (:func:`~neurips26.sdm.sdm.sdm_reference`) against the whole-sequence solve
    (:func:`~neurips26.sdm.sdm.sdm_parallel`), interleaved."""
    torch.manual_seed(seed)
    layer = SparseDeltaMemory(WIDTH, 2, slots, 8, 8)
    x = torch.randn(batch, 59, WIDTH, generator=torch.Generator().manual_seed(seed))
    calls = {}
    for solver in ("loop", "parallel"):

        def run(solver=solver) -> None:
            layer.solver = solver
            layer.zero_grad(set_to_none=True)
            layer(x).square().mean().backward()

        calls[solver] = run
    return time_interleaved(calls, rounds=rounds, reference="loop")


def growth(values: dict[int, DecodeCost], field: str) -> float:
    """Ratio of ``field`` at the largest ``N`` to the smallest."""
    keys = sorted(values)
    return getattr(values[keys[-1]], field) / getattr(values[keys[0]], field)


def doubling_exponent(first: float, last: float, n_first: int, n_last: int) -> float:
    """The exponent ``a`` of ``cost ∝ N^a`` between two table sizes."""
    return math.log(last / first) / math.log(n_last / n_first)
