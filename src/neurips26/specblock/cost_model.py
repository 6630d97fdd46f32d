"""A declared, GPU-like cost model of one speculative iteration (the chapter's deviation for claims D1, D2).

The paper measures drafting cost and speedup in GPU wall-clock time at batch size 1. There a forward of a
transformer is memory-bound: its time is set by the weights it reads, and it barely grows with the number of
rows (tokens) it processes. Our CPU is compute-bound instead — a SpecBlock forward over ``K × beam`` rows
costs several EAGLE-3 forwards over ``top-k`` rows — and its timings move with the machine's load. So the
chapter decides D1's cost criterion and D2 with this model, declared before measuring, and shows the CPU
numbers beside it:

    cost(forward) = P / P_T · (1 + ε (rows − 1))        (units: one target forward over one token)

with ``P`` the parameters the forward reads (a token-embedding lookup reads rows, not the table, and is not
counted), ``P_T`` the target's, and the same ``ε`` that charges the target for verifying ``N`` extra tree
nodes (``t_T (1 + ε N)``, :func:`~.metrics.modelled_speedup`). One iteration costs::

    c_iter = (1 + ε N) + [P_setup + n_fwd · P_fwd · (1 + ε (rows − 1))] / P_T,     speedup = τ / c_iter

``P_setup``: parameters read once per iteration (the projection of the target's fused features: EAGLE-3's
``fc``, SpecBlock's ``W_c`` and its norm); ``P_fwd`` and ``rows``: per drafter forward (EAGLE-3: its layer,
norm and LM head over ``top-k`` rows; Medusa: every head over one row; SpecBlock: fusion, layers, shifts,
norms, LM head and — when used — the rank head over ``K × beam_width`` rows, the most a block forward runs;
``K`` rows for the strict-linear chain, which expands one leaf).

The adaptation stream (claim D8) prices a drafter update in the same units, so that the cost-aware bandit
weighs a gain against a cost that does not move with the machine's load. One gradient step of the training
losses runs ``blocks`` TTT block forwards over ``R = batch × window × K`` rows each; its backward pass is
charged the usual two forwards' worth for the parameters it trains (weight and input gradients)::

    c_step = [P_setup (1 + ε (batch·window − 1)) + blocks · (P_fwd + 2 P_train) (1 + ε (R − 1))] / P_T

(:func:`update_step_units`; ``P_train``: the parameters of the updated arm). The optimiser's own
arithmetic is not charged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from torch import nn

from neurips26.specblock.baselines.eagle3 import Eagle3Proposer
from neurips26.specblock.baselines.medusa import MedusaProposer
from neurips26.specblock.dynamic_tree import SpecBlockProposer
from neurips26.specblock.metrics import EPSILON
from neurips26.validation import check_float, check_int

#: Submodules read once per iteration, per drafter class name.
_SETUP = {"Eagle3Drafter": ("fc",), "SpecBlockDrafter": ("cond_proj", "cond_norm")}
#: Submodules never counted (lookups, position tables), per drafter class name.
_NOT_READ = {"Eagle3Drafter": ("embedding", "rotary"), "SpecBlockDrafter": ("rotary",)}


def parameters_read(module: nn.Module, skip: tuple[str, ...] = ()) -> int:
    """Parameters of ``module`` outside its direct submodules named in ``skip``."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module; got {type(module).__name__}")
    skipped = {id(p) for name in skip if hasattr(module, name) for p in getattr(module, name).parameters()}
    return sum(p.numel() for p in module.parameters() if id(p) not in skipped)


def target_parameters(target: nn.Module) -> int:
    """``P_T``: the target's parameters read by one forward (its token embedding is a lookup)."""
    return parameters_read(target, ("token_embedding",))


@dataclass(frozen=True)
class DrafterCost:
    """What one iteration of a drafter reads: ``setup`` parameters once, ``per_forward`` per forward over at
    most ``rows`` rows."""

    setup: int
    per_forward: int
    rows: int

    def units(self, forwards: float, target_params: int, epsilon: float = EPSILON) -> float:
        """Drafting cost of an iteration with ``forwards`` drafter forwards, in target forwards."""
        forwards = check_float("forwards", forwards, minimum=0.0)
        if isinstance(target_params, bool) or not isinstance(target_params, int) or target_params < 1:
            raise ValueError(f"target_params must be an int >= 1; got {target_params!r}")
        epsilon = check_float("epsilon", epsilon, minimum=0.0)
        if forwards == 0:
            return 0.0
        return (self.setup + forwards * self.per_forward * (1.0 + epsilon * (self.rows - 1))) / target_params


def drafter_cost(proposer: object) -> DrafterCost:
    """The :class:`DrafterCost` of an EAGLE-3, Medusa or SpecBlock proposer (module docstring)."""
    if isinstance(proposer, Eagle3Proposer):
        drafter = proposer.drafter
        name = type(drafter).__name__
        setup = parameters_read(drafter) - parameters_read(drafter, _SETUP[name])
        per_forward = parameters_read(drafter, _SETUP[name] + _NOT_READ[name])
        return DrafterCost(setup, per_forward, proposer.topk)
    if isinstance(proposer, MedusaProposer):
        return DrafterCost(0, parameters_read(proposer.heads), 1)
    if isinstance(proposer, SpecBlockProposer):
        drafter = proposer.drafter
        name = type(drafter).__name__
        setup = parameters_read(drafter) - parameters_read(drafter, _SETUP[name])
        unused = () if proposer.use_rank_head else ("rank_head",)
        per_forward = parameters_read(drafter, _SETUP[name] + _NOT_READ[name] + unused)
        leaves = 1 if proposer.linear else proposer.beam_width  # a chain expands one leaf per block
        return DrafterCost(setup, per_forward, drafter.config.block_size * leaves)
    raise TypeError(
        "proposer must be an Eagle3Proposer, MedusaProposer or SpecBlockProposer; "
        f"got {type(proposer).__name__}"
    )


def iteration_cost(tree_nodes: float, drafting_units: float, *, epsilon: float = EPSILON) -> float:
    """``c_iter = (1 + ε N) + drafting``, in target forwards over one token."""
    n = check_float("tree_nodes", tree_nodes, minimum=0.0)
    d = check_float("drafting_units", drafting_units, minimum=0.0)
    epsilon = check_float("epsilon", epsilon, minimum=0.0)
    return 1.0 + epsilon * n + d


def cost_model_speedup(
    tau: float, tree_nodes: float, drafting_units: float, *, epsilon: float = EPSILON
) -> float:
    """``τ / c_iter``: the speedup over vanilla decoding (one target forward per token) under the model."""
    tau = check_float("tau", tau, minimum=1.0)
    return tau / iteration_cost(tree_nodes, drafting_units, epsilon=epsilon)


def iteration_units(
    proposer: object,
    tree_nodes: float,
    drafter_forwards: float,
    target_params: int,
    *,
    epsilon: float = EPSILON,
) -> float:
    """``c_iter`` of one speculative iteration of ``proposer`` that verified ``tree_nodes`` nodes after
    ``drafter_forwards`` drafter forwards, in target forwards over one token."""
    drafting = drafter_cost(proposer).units(drafter_forwards, target_params, epsilon)
    return iteration_cost(tree_nodes, drafting, epsilon=epsilon)


def update_step_units(
    drafter: nn.Module,
    trainable: Sequence[str],
    *,
    batch: int,
    window: int,
    blocks: int,
    target_params: int,
    epsilon: float = EPSILON,
) -> float:
    """``c_step``: one gradient step of the training losses on ``drafter`` training the parameters named in
    ``trainable`` (``named_parameters`` names), ``batch`` sequences × ``window`` positions, ``blocks`` TTT
    blocks; in target forwards over one token (module docstring)."""
    if not isinstance(drafter, nn.Module):
        raise TypeError(f"drafter must be a torch.nn.Module; got {type(drafter).__name__}")
    name = type(drafter).__name__
    if name not in _SETUP:
        raise TypeError(f"drafter must be a SpecBlockDrafter or an Eagle3Drafter; got {name}")
    if isinstance(trainable, str) or not isinstance(trainable, Sequence):
        raise TypeError(f"trainable must be a sequence of parameter names; got {type(trainable).__name__}")
    params = dict(drafter.named_parameters())
    unknown = [n for n in trainable if n not in params]
    if unknown:
        raise ValueError(f"trainable names parameters the drafter does not have: {unknown[:3]}")
    batch = check_int("batch", batch, minimum=1)
    window = check_int("window", window, minimum=1)
    blocks = check_int("blocks", blocks, minimum=1)
    if isinstance(target_params, bool) or not isinstance(target_params, int) or target_params < 1:
        raise ValueError(f"target_params must be an int >= 1; got {target_params!r}")
    epsilon = check_float("epsilon", epsilon, minimum=0.0)
    setup = parameters_read(drafter) - parameters_read(drafter, _SETUP[name])
    per_forward = parameters_read(drafter, _SETUP[name] + _NOT_READ[name])
    train = sum(params[n].numel() for n in set(trainable))
    rows = batch * window * getattr(getattr(drafter, "config", None), "block_size", 1)
    positions = batch * window
    total = setup * (1.0 + epsilon * (positions - 1)) + blocks * (per_forward + 2 * train) * (
        1.0 + epsilon * (rows - 1)
    )
    return total / target_params
