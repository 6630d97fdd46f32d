"""The declared cost of planning: multiply-adds of the predictor, counted from its sizes.

Wall clock on a busy two-core CPU is too noisy to decide a speed claim (one ratio read 2.2× and 4.2×
minutes apart), and the paper's claim is about accelerator time. The chapter therefore decides speed with
this count, stated as a deviation, and shows measured wall clock beside it.

One forward of the predictor on ``K`` tokens of one sample, width ``w``, MLP hidden ``m``, token width ``D``,
action width ``A``, ``L`` blocks:

- input: ``K (D + A) w`` for the concat predictor, ``K D w + A w`` otherwise (the action's embedding);
- per block: ``4 K w²`` (query, key, value and output projections), ``2 K'² w`` (scores and weighted
  values, ``K' = K + 1`` for the in-context block's extra token, else ``K``), ``2 K' w m`` (the MLP; the
  in-context block's is widened to match AdaLN's parameter count); AdaLN adds ``6 w²`` (the modulation,
  once per sample), the in-context block ``w²`` (its action token);
- output: ``K w D`` (the head); AdaLN's final modulation adds ``2 w²``.

A backward pass counts as two forwards. A planning step is the selection probe (one full-grid forward and
backward: three forwards of ``P`` tokens, batch 1 per episode; none for Full and Random) plus
``iterations × H`` forwards of ``K`` tokens for ``N`` candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.costgrad.predictor import PredictorSpec
from neurips26.nn import ConditionedTransformerConfig
from neurips26.nn.adaln import concat_mlp_hidden
from neurips26.validation import check_int

BACKWARD = 2  # a backward pass costs two forwards


def forward_macs(spec: PredictorSpec, tokens: int, batch: int = 1) -> int:
    """Multiply-adds of one forward on ``tokens`` tokens for ``batch`` samples (module doc)."""
    k = check_int("tokens", tokens, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    w, m, d, a, depth = spec.width, spec.mlp_hidden, spec.token_dim, spec.action_dim, spec.depth
    if spec.cond == "incontext":
        m = concat_mlp_hidden(
            ConditionedTransformerConfig(
                width=w,
                heads=spec.heads,
                cond_dim=w,
                depth=depth,
                mlp_ratio=spec.mlp_ratio,
                conditioning="concat",
            )
        )
    if spec.cond == "concat":
        total = k * (d + a) * w
    else:
        total = k * d * w + a * w
    kk = k + 1 if spec.cond == "incontext" else k
    per_block = 4 * kk * w * w + 2 * kk * kk * w + 2 * kk * w * m
    if spec.cond == "adaln":
        per_block += 6 * w * w
    elif spec.cond == "incontext":
        per_block += w * w
    total += depth * per_block + k * w * d
    if spec.cond == "adaln":
        total += 2 * w * w
    return batch * total


@dataclass(frozen=True)
class StepCost:
    """The multiply-adds of one planning step: the selection probe and the search."""

    probe: int
    search: int

    @property
    def total(self) -> int:
        return self.probe + self.search

    @property
    def probe_share(self) -> float:
        return self.probe / self.total if self.total else 0.0


def step_cost(
    spec: PredictorSpec,
    *,
    tokens: int,
    kept: int,
    samples: int,
    horizon: int,
    iterations: int,
    probe: bool,
) -> StepCost:
    """One planning step for one episode (module doc): ``probe`` says whether the selector runs the
    full-grid forward and backward."""
    kept = check_int("kept", kept, minimum=1, maximum=tokens)
    probe_macs = (1 + BACKWARD) * forward_macs(spec, tokens) if probe else 0
    search = check_int("iterations", iterations, minimum=1) * check_int("horizon", horizon, minimum=1)
    return StepCost(probe_macs, search * forward_macs(spec, kept, check_int("samples", samples, minimum=1)))
