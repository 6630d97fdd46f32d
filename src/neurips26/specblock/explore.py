"""Library side of the chapter's playground (``chapters/10-specblock/04-explore.md``).

- the notebook's "K" slider uses :class:`~.slot_limited.SlotLimitedProposer` (a method variant, in its
  own module).
- :data:`BUDGET_PRESETS`: per-class branching budgets of the sliders (released, tuned, greedy-only);
  :data:`CHAIN`: the strict-linear ablation's cells.
- :func:`explore_grid`: τ, drafter forwards, tree nodes and drafter time per iteration of SpecBlock over a
  grid of ``max_blocks × beam_width × budgets × total_tokens`` (and ``slots`` at one setting) on a few
  held-out prompts, with each cell's drafting cost under the declared GPU-like :mod:`.cost_model` (its
  modelled speedup) and the measured CPU latencies ``t_T``, ``t_D`` (the CPU latency model of
  :mod:`.metrics`). Cached through :func:`neurips26.cache.cached`, so the static page is drawn from it.
- the domain-shift stream of the playground is :func:`.experiments.domain_shift_stream` (shared with
  the claims notebook, one cache entry).
- :func:`iteration_chunks`: the generated tokens split by iteration (accepted draft tokens, then the
  target's own token), for the live panel's highlighting.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from neurips26.cache import cached
from neurips26.scales import pick
from neurips26.specblock.cost_model import cost_model_speedup, drafter_cost, target_parameters
from neurips26.specblock.data import interleaved_prompts, tokenizer
from neurips26.specblock.decode import GenerationResult, speculative_generate, vanilla_generate
from neurips26.specblock.dynamic_tree import DEFAULT_BUDGETS, SpecBlockProposer
from neurips26.specblock.experiments import DECODE_THREADS, check_held_out, target_latency_ms
from neurips26.specblock.metrics import EPSILON, modelled_speedup, summarize
from neurips26.specblock.prepare import PrepareConfig, pretrained, target_for
from neurips26.specblock.slot_limited import SlotLimitedProposer
from neurips26.specblock.target import EOS_ID
from neurips26.train.device import torch_threads
from neurips26.validation import check_choice, check_float, check_int, check_int_tuple

#: Per-class branching budgets (rank classes 0–3) offered by the sliders.
BUDGET_PRESETS: dict[str, tuple[int, int, int, int]] = {
    "released": DEFAULT_BUDGETS,  # (2, 4, 10, 0): the released code's default
    "tuned": (2, 4, 6, 4),  # the released code's tuned variant: no give-up, fewer class-2 branches
    "greedy-only": (1, 1, 1, 0),  # slots k ≥ 1 keep only their spine token; class 3 still stops the walk
}
#: The grid's name for the strict-linear ablation (``SpecBlockProposer(linear=True)``): one chain of greedy
#: spines, no branching, no rank head. Its cells have ``beam_width = 1`` (one leaf per block).
CHAIN: str = "strict-linear"


@dataclass(frozen=True)
class GridConfig:
    """What :func:`explore_grid` decodes.

    ``scale``: target and drafter of that scale (``pretrained(drafter, scale)``); ``prompts`` held-out
    prompts of ``domains`` (seed ``seed``), ``new_tokens`` each. Main grid: every ``max_blocks ×
    beam_widths × presets × total_tokens`` with all ``K`` slots. Slot grid: ``slots × max_blocks`` at
    ``slot_beam``, ``slot_preset`` and ``slot_total``. ``chain``: also the strict-linear ablation
    (:data:`CHAIN`) at every ``max_blocks``, under the largest ``total_tokens`` (a chain of ``K ·
    max_blocks`` nodes needs no more). ``latency_repeats``: calls per measured latency.
    """

    scale: str = "default"
    drafter: str = "specblock"
    prompts: int = 4
    new_tokens: int = 24
    domains: tuple[str, ...] = ("code", "dialogue")
    seed: int = 3
    max_blocks: tuple[int, ...] = (1, 2, 3)
    beam_widths: tuple[int, ...] = (2, 5, 10)
    presets: tuple[str, ...] = ("released", "tuned", "greedy-only")
    total_tokens: tuple[int, ...] = (30, 60, 90)
    slots: tuple[int, ...] = (1, 2, 3, 4)
    slot_beam: int = 10
    slot_preset: str = "released"
    slot_total: int = 90
    chain: bool = True
    latency_repeats: int = 20

    def __post_init__(self) -> None:
        check_choice("scale", self.scale, ("smoke", "default", "paper"))
        check_choice("drafter", self.drafter, ("specblock", "specblock-noshift", "specblock-1block"))
        check_held_out(self.prompts, self.new_tokens, self.domains, self.seed)
        check_int_tuple("max_blocks", self.max_blocks, minimum=1, maximum=8, order="distinct")
        check_int_tuple("beam_widths", self.beam_widths, minimum=1, order="distinct")
        check_int_tuple("total_tokens", self.total_tokens, minimum=1, order="distinct")
        check_int_tuple("slots", self.slots, minimum=1, order="distinct")
        if not isinstance(self.presets, tuple) or not self.presets:
            raise TypeError(f"presets must be a non-empty tuple of preset names; got {self.presets!r}")
        for p in self.presets:
            check_choice("presets", p, tuple(BUDGET_PRESETS))
        check_int("slot_beam", self.slot_beam, minimum=1)
        check_choice("slot_preset", self.slot_preset, tuple(BUDGET_PRESETS))
        check_int("slot_total", self.slot_total, minimum=1)
        if not isinstance(self.chain, bool):
            raise TypeError(f"chain must be a bool; got {type(self.chain).__name__}")
        check_int("latency_repeats", self.latency_repeats, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> GridConfig:
        """smoke: 1 prompt × 12 tokens on a 2 × 2 × 2 × 2 grid; default: 4 prompts × 24 tokens, 3⁴ cells."""
        return pick(
            scale,
            smoke=cls(
                scale="smoke",
                prompts=1,
                new_tokens=12,
                max_blocks=(1, 2),
                beam_widths=(2, 10),
                presets=("released", "greedy-only"),
                total_tokens=(30, 90),
                slots=(2, 4),
                latency_repeats=2,
            ),
            default=cls(),
            paper=cls(scale="paper", prompts=16, new_tokens=48),
        )

    def prompt_texts(self) -> list[str]:
        """The held-out prompts, domains interleaved (as in :class:`~.experiments.SuiteConfig`)."""
        return interleaved_prompts(self.domains, self.prompts, self.seed)

    def settings(self) -> list[tuple[int, int, str, int, int]]:
        """Every ``(max_blocks, beam_width, preset, total_tokens, slots)``.

        First the main grid (``slots = 0``: all ``K``), then the slot grid, then the strict-linear chain
        (preset :data:`CHAIN`, beam 1); a setting that repeats a main-grid cell is decoded once."""
        full = [
            (b, w, p, n, 0)
            for b in self.max_blocks
            for w in self.beam_widths
            for p in self.presets
            for n in self.total_tokens
        ]
        beam, preset, total = self.slot_beam, self.slot_preset, self.slot_total
        slot_grid = [(b, beam, preset, total, k) for k in self.slots for b in self.max_blocks]
        chain = [(b, 1, CHAIN, max(self.total_tokens), 0) for b in self.max_blocks] if self.chain else []
        return full + slot_grid + chain


@dataclass(frozen=True)
class GridCell:
    """SpecBlock at one setting on every prompt: τ and per-iteration forwards, nodes, drafter ms.

    ``slots = 0`` means all ``K`` slots; ``lossless``: tokens equal vanilla greedy decoding's on every
    prompt; ``drafting_units``: drafting cost per iteration in target forwards (:mod:`.cost_model`).
    """

    max_blocks: int
    beam_width: int
    preset: str
    total_tokens: int
    slots: int
    tau: float
    drafter_forwards: float
    tree_nodes: float
    drafter_ms: float
    lossless: bool
    drafting_units: float


@dataclass(frozen=True)
class GridResult:
    """:func:`explore_grid`'s cells and the latencies of the modelled speedup.

    ``t_t_ms``: one target forward over one token on a cached prompt; ``t_d_ms``: median drafter ms per
    forward over the released setting (2 blocks, beam 10, released budgets, the largest budget);
    ``block_size``: the drafter's ``K``.
    """

    config: GridConfig
    cells: tuple[GridCell, ...]
    t_t_ms: float
    t_d_ms: float
    block_size: int
    wall_seconds: float = dataclasses.field(compare=False, default=0.0)

    def cell(
        self, max_blocks: int, beam_width: int, preset: str, total_tokens: int, slots: int | None = None
    ) -> GridCell:
        """The cell of that setting (``slots=None`` or ``K``: all slots)."""
        want = 0 if slots in (None, self.block_size) else slots
        for c in self.cells:
            key = (c.max_blocks, c.beam_width, c.preset, c.total_tokens, c.slots)
            if key == (max_blocks, beam_width, preset, total_tokens, want):
                return c
        raise KeyError(f"no grid cell for {(max_blocks, beam_width, preset, total_tokens, slots)}")

    def speedup(self, cell: GridCell) -> float:
        """Modelled speedup ``τ / c_iter`` of ``cell`` under the declared :mod:`.cost_model` (ε = 0.002)."""
        return cost_model_speedup(cell.tau, cell.tree_nodes, cell.drafting_units, epsilon=EPSILON)

    def cpu_speedup(self, cell: GridCell, epsilon: float = EPSILON) -> float:
        """CPU latency model ``τ t_T / (t_T(1 + ε N) + n_fwd t_D)`` of ``cell`` (N: mean verified nodes)."""
        epsilon = check_float("epsilon", epsilon, minimum=0.0)
        return modelled_speedup(
            cell.tau, self.t_t_ms, self.t_d_ms, cell.tree_nodes, cell.drafter_forwards, epsilon=epsilon
        )


@torch_threads(DECODE_THREADS)
def _grid(config: GridConfig) -> GridResult:
    start = time.perf_counter()
    target = target_for(PrepareConfig.for_scale(config.scale))
    target_params = target_parameters(target)
    drafter, _ = pretrained(config.drafter, config.scale, verbose=False)
    k_max = drafter.config.block_size
    tok = tokenizer()
    ids = [tok.encode(p, bos=True) for p in config.prompt_texts()]
    reference = [vanilla_generate(target, p, config.new_tokens, eos_id=EOS_ID).tokens for p in ids]
    cells = []
    per_forward: list[float] = []
    released = (2, 10, "released", max(config.total_tokens))
    done = set()
    for blocks, beam, preset, total, slots in config.settings():
        if slots > k_max:
            raise ValueError(f"slots must be <= the drafter's K = {k_max}; got {slots}")
        slots = 0 if slots == k_max else slots
        if (blocks, beam, preset, total, slots) in done:
            continue
        done.add((blocks, beam, preset, total, slots))
        proposer = SlotLimitedProposer(
            drafter,
            slots=slots or k_max,
            max_blocks=blocks,
            beam_width=beam,
            budgets=BUDGET_PRESETS.get(preset, BUDGET_PRESETS["released"]),
            linear=preset == CHAIN,
        )
        results = [
            speculative_generate(target, proposer, p, config.new_tokens, total_tokens=total, eos_id=EOS_ID)
            for p in ids
        ]
        s = summarize(results)
        if (blocks, beam, preset, total, slots) == (*released, 0):
            per_forward = [
                sec / fwd
                for r in results
                for sec, fwd in zip(r.drafter_seconds, r.drafter_forwards, strict=True)
                if fwd
            ]
        cells.append(
            GridCell(
                max_blocks=blocks,
                beam_width=beam,
                preset=preset,
                total_tokens=total,
                slots=slots,
                tau=s.tau,
                drafter_forwards=s.drafter_forwards,
                tree_nodes=s.tree_nodes,
                drafter_ms=1e3 * s.drafter_seconds,
                lossless=[r.tokens for r in results] == reference,
                drafting_units=drafter_cost(proposer).units(
                    s.drafter_forwards, target_params, epsilon=EPSILON
                ),
            )
        )
    if not per_forward:  # the released setting is not in the grid: time one generation of it
        proposer = SpecBlockProposer(drafter)
        r = speculative_generate(
            target, proposer, ids[0], config.new_tokens, total_tokens=max(config.total_tokens), eos_id=EOS_ID
        )
        pairs = zip(r.drafter_seconds, r.drafter_forwards, strict=True)
        per_forward = [sec / fwd for sec, fwd in pairs if fwd]
    t_t = target_latency_ms(target, ids[0], 0, config.latency_repeats)
    t_d = 1e3 * statistics.median(per_forward) if per_forward else 0.0
    return GridResult(config, tuple(cells), t_t, t_d, k_max, time.perf_counter() - start)


def explore_grid(config: GridConfig | None = None, *, verbose: bool = True) -> GridResult:
    """SpecBlock over ``config``'s grid on the same prompts (module docstring); cached."""
    config = GridConfig.for_scale("default") if config is None else config
    if not isinstance(config, GridConfig):
        raise TypeError(f"config must be a GridConfig; got {type(config).__name__}")
    weights = pretrained(config.drafter, config.scale, verbose=False)[1].weights_hash
    key = {"config": config, "drafter": weights}
    return cached(
        "specblock-explore-grid",
        key,
        lambda: _grid(config),
        package="neurips26.specblock",
        verbose=verbose,
    )


def iteration_chunks(result: GenerationResult) -> list[tuple[tuple[int, ...], int]]:
    """The generated tokens of ``result`` split by iteration: ``(tokens, accepted)`` per target forward.

    The first ``accepted`` tokens of a chunk are accepted draft tokens, the last one is the target's own
    token (the bonus token, or the only token of an iteration with nothing accepted).
    """
    if not isinstance(result, GenerationResult):
        raise TypeError(f"result must be a GenerationResult; got {type(result).__name__}")
    chunks, start = [], 0
    for accepted in result.accepted:
        end = start + accepted + 1
        chunks.append((tuple(result.tokens[start:end]), int(accepted)))
        start = end
    if start != len(result.tokens):
        raise ValueError("result.accepted does not add up to the generated tokens")
    return chunks


def trees_without_pruning(
    proposer: SpecBlockProposer,
    target: torch.nn.Module,
    prompts_ids: Sequence[Sequence[int]],
    new_tokens: int,
    *,
    eos_id: int | None = EOS_ID,
    limit: int = 100_000,
) -> tuple[float, float]:
    """``(mean nodes proposed per iteration, τ)`` when the verifier takes the whole tree (budget ``limit``).

    Shows what the branching budgets alone spend before pruning to ``total_tokens``.
    """
    if not isinstance(proposer, SpecBlockProposer):
        raise TypeError(f"proposer must be a SpecBlockProposer; got {type(proposer).__name__}")
    limit = check_int("limit", limit, minimum=1)
    results = [
        speculative_generate(target, proposer, list(p), new_tokens, total_tokens=limit, eos_id=eos_id)
        for p in prompts_ids
    ]
    s = summarize(results)
    return s.tree_nodes, s.tau


__all__ = [
    "BUDGET_PRESETS",
    "GridCell",
    "GridConfig",
    "GridResult",
    "explore_grid",
    "iteration_chunks",
    "trees_without_pruning",
]
