"""Tests of the side-by-side runs (smoke scale) and of the criteria that decide claims J1–J7."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.jag import experiments as E
from neurips26.jag import verdicts as V
from neurips26.jag.cost_model import keys_per_query


@pytest.fixture(scope="module")
def smoke(jag_smoke_cache):
    folder, _ = jag_smoke_cache
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        yield (
            E.rollout_table("smoke", verbose=False),
            E.cost_run("smoke", verbose=False),
            E.eval_data("smoke"),
        )


def test_every_row_is_scored_on_the_same_loops(smoke):
    table, _, data = smoke
    n, frames = data.clips.rgb.shape[:2]
    assert tuple(table.scores) == E.ROW_KEYS and table.seeds == (0,)
    for key in E.ROW_KEYS:
        s = table[key][0]
        assert s.psnr.shape == (n, frames - 1) and s.cov_psnr.shape == (n, frames - 1)
        if key != "copy":
            assert np.isfinite(s.psnr).all()
    # counted network calls per generated frame: 4 steps + 1 cache write, or 32 + 1
    assert table["jag-sgf"][0].nfe == 5 and table["sf-rgb"][0].nfe == 5
    assert table["df"][0].nfe == 33 and table["tf"][0].nfe == 33 and table["copy"][0].nfe == 0
    assert all(len(p) for p in data.pairs)  # every evaluation loop has revisit pairs
    assert math.isnan(table["sf-rgb"][0].mean("cov_absrel"))  # no depth branch
    assert math.isnan(table["sf-rgb"][0].mean("reprojection"))
    assert math.isfinite(table["jag-sgf"][0].mean("reprojection"))
    copy = table["copy"][0]  # repeating frame 0: revisit pairs are identical images
    assert np.isinf(copy.revisit).all() and np.isnan(copy.specificity).all()
    assert (
        table["jag-sgf"][0].specificity.shape == (n,) and np.isfinite(table["jag-sgf"][0].specificity).all()
    )
    assert np.isfinite(table["jag-sgf"][0].detail).all() and (table["jag-sgf"][0].detail > 0).all()
    back = (data.clips.poses[:, 1:] == data.clips.poses[:, :1]).flatten(2).all(-1).numpy()
    assert back.any() and np.array_equal(np.isinf(copy.psnr), back)  # the loop's return to frame 0's pose
    assert np.isfinite(copy.mean("psnr"))  # means leave the infinite frames out
    rows = table.table_rows()
    assert len(rows) == len(E.ROW_KEYS) and all(len(r) == len(E.TABLE_HEADER) for r in rows)


def test_a_rollout_depends_only_on_its_seed(smoke, jag_smoke_cache):
    _, _, data = smoke
    folder, _ = jag_smoke_cache
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        model, _ = E.load_row_model("jag-sgf", "smoke")
        runs = [
            E.generate(model, "student", data.clips, data.plucker, seed, E.self_memory(data.clips))
            for seed in (3, 3, 4)
        ]
    assert torch.equal(runs[0][0], runs[1][0]) and torch.equal(runs[0][1], runs[1][1])
    assert not torch.equal(runs[0][0], runs[2][0])
    assert torch.equal(runs[0][0][:, 0], data.clips.rgb[:, 0])  # frame 0 is the given one


def test_the_full_history_row_shares_the_sgf_weights_without_a_window(smoke, jag_smoke_cache):
    folder, _ = jag_smoke_cache
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        windowed, h1 = E.load_row_model("jag-sgf", "smoke")
        full, h2 = E.load_row_model("jag-sgf-full", "smoke")
    assert h1 == h2 and windowed.config.window == 4 and full.config.window is None
    for a, b in zip(windowed.state_dict().values(), full.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    with pytest.raises(ValueError, match="key"):
        E.load_row_model("copy", "smoke")
    with pytest.raises(ValueError, match="key"):
        E.row("jag")


def test_the_cost_run_reads_the_cache_and_the_memory(smoke):
    _, run, _ = smoke
    frames = np.arange(1, run.frames)
    tokens = 32  # 16 patches × 2 branches
    assert np.array_equal(run.keys["window"], tokens * np.minimum(frames + 1, run.window))
    assert np.array_equal(run.keys["full"], tokens * (frames + 1))
    assert np.array_equal(run.model_keys("full"), [keys_per_query(k + 1, None) for k in frames])
    assert np.unique(run.memory_bytes["window"]).size == 1
    assert run.seconds["window"].shape == (run.frames - 1,) and (run.seconds["full"] > 0).all()
    assert run.kv_bytes["window"].max() < run.kv_bytes["full"][-1]  # read off the rollout's own cache
    assert V.decide_claim("j1-constant-cost", None, run).verdict == "reproduced"  # type: ignore[arg-type]


def _scores(
    revisit: float,
    reprojection: float,
    psnr: float,
    slope: float = 0.0,
    nfe: float = 5.0,
    detail: float = 0.9,
):
    frames = 8
    curve = psnr + slope * np.arange(frames)
    per_frame = np.tile(curve, (2, 1))
    return E.Scores(
        psnr=per_frame,
        cov_psnr=per_frame,
        cov_absrel=np.tile(0.3 - 0.01 * slope * np.arange(frames), (2, 1)),
        revisit=np.full(2, revisit),
        revisit_truth=np.full(2, psnr),
        reprojection=np.full(2, reprojection),
        nfe=nfe,
        seconds=1.0,
        specificity=np.full(2, revisit - 17.0),
        detail=np.full(2, detail),
    )


def _table(sgf_revisit: float) -> E.RolloutTable:
    scores = {
        "jag-sgf": _scores(sgf_revisit, 0.10, 19.0, slope=-0.01),
        "sf-rgb": _scores(18.0, math.nan, 17.0, slope=-0.05),
        "tf": _scores(17.0, 0.25, 16.5, nfe=33.0),
        "df": _scores(17.0, 0.20, 16.7, nfe=33.0),
        "jag-nosgf": _scores(18.5, 0.19, 17.3, slope=-0.02),
        "jag-tfmem": _scores(18.9, 0.21, 17.6, slope=-0.03),
        "jag-sgf-noreward": _scores(18.7, 0.18, 17.4, slope=-0.01),
    }
    return E.RolloutTable(
        {k: {0: v, 1: v} for k, v in scores.items()}, {k: k for k in scores}, "smoke", (0, 1)
    )


def test_the_criteria_apply_their_declared_margins():
    good = _table(sgf_revisit=19.0)  # 1 dB above SF RGB-only: J2 passes
    assert V.decide_claim("j2-revisit", good).verdict == "reproduced"
    near = _table(sgf_revisit=18.3)  # 0.3 dB: below the 0.5 dB margin against SF, above TF's 17 + 0.5
    assert V.decide_claim("j2-revisit", near).verdict == "partly"
    assert V.decide_claim("j4-reprojection", good).verdict == "reproduced"
    assert V.decide_claim("j6-reward", good).verdict == "reproduced"
    flat = _table(sgf_revisit=19.0)  # the same, but SGF's frames keep a third of the detail
    flat.scores["jag-sgf"] = {s: _scores(19.0, 0.10, 19.0, slope=-0.01, detail=0.3) for s in (0, 1)}
    assert V.decide_claim("j6-reward", flat).verdict == "partly"
    assert V.decide_claim("j7-few-step", good).verdict == "reproduced"
    j3 = V.decide_claim("j3-drift", good)
    assert j3.verdict == "reproduced" and len(j3.seeds) == 2
    j5 = V.decide_claim("j5-self-forced-memory", good)  # self-forced: smaller decay, yet lower late PSNR
    assert j5.verdict == "partly"
    with pytest.raises(ValueError, match="claim"):
        V.decide_claim("j8", good)
    with pytest.raises(ValueError, match="run"):
        V.decide_claim("j1-constant-cost", good)


def test_scores_skip_missing_values():
    s = _scores(20.0, 0.1, 18.0, slope=-0.1)
    assert s.slope("cov_psnr") == pytest.approx(-0.1)
    assert s.late() == pytest.approx(np.mean(18.0 - 0.1 * np.arange(4, 8)))
    blank = E.Scores(
        *(np.full((2, 3), math.nan) for _ in range(3)),
        np.full(2, math.nan),
        np.full(2, 1.0),
        np.full(2, math.nan),
        5.0,
        1.0,
    )
    assert math.isnan(blank.mean("psnr")) and np.isnan(blank.curve("cov_absrel")).all()
