"""The cost model, slot usage and the claim criteria."""

import pytest
import torch

from neurips26.criteria import decide
from neurips26.sdm import experiments as X
from neurips26.sdm import verdicts as V
from neurips26.sdm.models import MixerSpec, RecallModel


def test_cost_model_decouples_sdm_from_its_state():
    costs = X.cost_model()
    sdm = {n: c["sdm"] for n, c in costs.items()}
    gdn = {n: c["gdn"] for n, c in costs.items()}
    assert {c.traffic for c in sdm.values()} == {2 * (2 * 8 + 8) * 32}
    assert all(sdm[n].state == gdn[n].state == 2 * n * 32 for n in costs)
    assert 6 < X.growth(sdm, "macs") < 7 and 200 < X.growth(gdn, "macs") < 260
    # the score projections are the part that grows: 2 · D · H · 2n, twice (write and read)
    assert sdm[65_536].macs - sdm[256].macs == 2 * 64 * 2 * 2 * (256 - 16) + 2 * 2 * 2 * (256 - 16) + 0


def test_slot_usage_counts_every_write():
    model = RecallModel(MixerSpec("sdm", slots=64), seed=0).eval()
    usage = X.slot_usage(model, n_pairs=4, size=8)
    assert usage["counts"].shape == (2, 64)
    assert usage["counts"].sum() == pytest.approx(2 * 8 * 27)  # κ sums to 1 per token and head
    assert 0 < usage["used"] <= 1 and 1 <= usage["perplexity"] <= 64
    with pytest.raises(TypeError, match="SDM"):
        X.slot_usage(RecallModel(MixerSpec("gdn")), size=2)


def test_criteria_decide_as_declared():
    good = decide(V.c1_criteria({8: 0.9, 16: 0.9}, {8: 0.6, 16: 0.4}))
    assert good.verdict == "reproduced"
    assert decide(V.c1_criteria({8: 0.9, 16: 0.45}, {8: 0.6, 16: 0.4})).verdict == "not reproduced"
    assert decide(V.c4_criteria({64: 0.5, 256: 0.49, 1024: 0.6})).verdict == "reproduced"
    assert decide(V.c4_criteria({64: 0.5, 256: 0.45, 1024: 0.6})).verdict == "partly"
    assert decide(V.c8_criteria(0.1, 0.4, 0.9)).verdict == "reproduced"
    assert decide(
        V.c7_criteria({p: 1.0 for p in (4, 8, 12, 16)}, {p: 1.0 for p in (4, 8, 12, 16)})
    ).verdict == ("reproduced")
    assert decide(V.c3_criteria((1536, 1536), 6.4, 234.0)).verdict == "reproduced"
    assert decide(V.c5_criteria(0.0, 0.0, 0.0)).verdict == "not reproduced"


def test_solver_and_decode_timings_run():
    t = X.solver_timing(16, batch=2, rounds=1)
    assert set(t.names) == {"loop", "parallel"}
    d = X.decode_timing((16, 64), rounds=1, inner=2)
    assert d.rounds == 1
    torch.manual_seed(0)
