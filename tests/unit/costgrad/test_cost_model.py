"""The declared cost equals a count of the multiply-adds the predictor's linear layers actually do, plus
the attention products, for every conditioning and token count."""

import pytest
import torch

from neurips26.costgrad.cost_model import BACKWARD, forward_macs, step_cost
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor


def _counted(spec: PredictorSpec, tokens: int, batch: int) -> int:
    model = TokenPredictor(spec)
    macs = [0]

    def hook(module, inputs, output):
        macs[0] += inputs[0].numel() // module.in_features * module.in_features * module.out_features

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    z = torch.zeros(batch, tokens, spec.token_dim)
    model(z, torch.zeros(batch, spec.action_dim), torch.arange(tokens))
    for h in handles:
        h.remove()
    kk = tokens + (spec.cond == "incontext")
    return macs[0] + batch * spec.depth * 2 * kk * kk * spec.width  # scores and weighted values


@pytest.mark.parametrize("cond", ["adaln", "concat", "incontext"])
@pytest.mark.parametrize("tokens", [1, 7, 64])
def test_declared_cost_equals_the_counted_cost(cond, tokens):
    spec = PredictorSpec(cond=cond)
    assert forward_macs(spec, tokens, batch=3) == _counted(spec, tokens, 3)


def test_a_planning_step_adds_the_probe_and_the_search():
    spec = PredictorSpec()
    cost = step_cost(spec, tokens=64, kept=32, samples=16, horizon=4, iterations=3, probe=True)
    assert cost.probe == (1 + BACKWARD) * forward_macs(spec, 64)
    assert cost.search == 12 * forward_macs(spec, 32, 16)
    full = step_cost(spec, tokens=64, kept=64, samples=16, horizon=4, iterations=3, probe=False)
    assert full.probe == 0 and full.total > cost.total
    with pytest.raises(ValueError, match="kept"):
        step_cost(spec, tokens=64, kept=65, samples=16, horizon=4, iterations=3, probe=True)
