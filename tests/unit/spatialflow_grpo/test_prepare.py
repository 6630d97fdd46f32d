"""Tests of the chapter's model table and checkpoints at smoke scale: every arm trains, loads back fresh and
reproduces its metric; an arm stores only its adapters and is bound to the base's weights."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neurips26.checkpoint_files import StaleCheckpointError
from neurips26.spatialflow_grpo import prepare as P
from neurips26.spatialflow_grpo.editor import Editor
from neurips26.spatialflow_grpo.reward_model import RegionRewardNet
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_dir(sfg_smoke_cache):
    folder, written = sfg_smoke_cache
    assert [m.name for m in written] == list(P.ARM_NAMES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        yield P.checkpoint_dir("smoke")


def test_the_table():
    assert P.ARM_NAMES[:2] == ("base", "sfreward-tiny") and len(P.ARM_NAMES) == 14
    config = P.PrepareConfig.for_scale("default")
    flow, spatial = config.arm_config(P.arm_spec("flow-s1")), config.arm_config(P.arm_spec("spatial-s1"))
    assert (flow.method, spatial.method, flow.seed, spatial.seed) == ("flow-grpo", "spatial", 1, 1)
    assert flow.replace(method="spatial") == spatial  # the same RL settings apart from the method
    assert config.arm_config(P.arm_spec("spatial-shuffled")).shuffled
    assert config.arm_config(P.arm_spec("spatial-b")).reading == "b"
    with pytest.raises(ValueError, match="name"):
        P.arm_spec("grpo")
    with pytest.raises(ValueError, match="not an RL arm"):
        config.arm_config(P.arm_spec("base"))


def test_smoke_checkpoints_load_fresh_and_arms_are_bound_to_the_base(smoke_dir, tmp_path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_dir.parent.parent))
        base, base_meta = P.load_checkpoint("base", "smoke")
        reward_meta = P.load_checkpoint("sfreward-tiny", "smoke")[1]
        for name in P.ARM_NAMES:
            model, meta = P.load_checkpoint(name, "smoke")
            kind = P.arm_spec(name).kind
            assert isinstance(model, RegionRewardNet if kind == "reward-model" else Editor)
            assert not model.training
            assert meta.base == ("" if name == "base" else base_meta.weights_hash)
            assert meta.reward == (reward_meta.weights_hash if name.endswith("-sfr") else "")
            assert P.validation_metrics(name, model, "smoke") == pytest.approx(meta.metrics, rel=1e-6)
        spatial, _ = P.load_checkpoint("spatial-s0", "smoke")
        stored = torch.load(smoke_dir / "spatial-s0.pt", weights_only=True)
        assert stored and all("lora" in k for k in stored)  # adapters only
        shared = {k: v for k, v in spatial.state_dict().items() if "lora" not in k}
        base_state = base.state_dict()
        assert all(
            torch.equal(v, base_state[k.replace(".base.", ".")])
            for k, v in shared.items()
            if k.replace(".base.", ".") in base_state
        )
        for suffix in (".pt", ".json"):
            (tmp_path / f"flow-s0{suffix}").write_bytes((smoke_dir / f"flow-s0{suffix}").read_bytes())
        sidecar = tmp_path / "flow-s0.json"
        data = json.loads(sidecar.read_text())
        data["config_hash"] = P.expected_hash("flow-s0", "smoke", {"base": "another-base"})
        sidecar.write_text(json.dumps(data))
        with pytest.raises(StaleCheckpointError, match="configuration"):
            P.load_checkpoint("flow-s0", "smoke", directory=tmp_path)


# ------------------------------------------------------------------------------- the committed ones

COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("spatialflow_grpo")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.ARM_NAMES, P.MAX_TOTAL_BYTES)


@pytest.mark.committed
@pytest.mark.parametrize("name", COMMITTED or ["(none committed)"])
def test_committed_checkpoint_is_fresh_and_reaches_its_recorded_metric(name):
    """The registry's load re-measures the recorded metric (the base's flow-matching loss at a fixed draw,
    an arm's mean oracle reward of fixed-noise edits of 32 MultiEdit cases) and checks an arm's base."""
    if not COMMITTED:
        pytest.skip(_NONE)
    editor, meta = P.load_checkpoint(name, "default")
    assert not editor.training and meta.name == name


def test_the_evaluation_table_scores_every_arm_on_every_suite(smoke_dir):
    from neurips26.spatialflow_grpo import experiments as X

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_dir.parent.parent))
        table = X.evaluation_table("smoke", verbose=False)
        assert set(table.arms) == set(P.ARM_NAMES) - {"sfreward-tiny"}
        for arm in table.arms.values():
            for name, s in arm.suites.items():
                assert s.success.shape == (X.EvalConfig.for_scale("smoke").cases,)
                assert 0.0 <= s.success_rate() <= 1.0 and np.isfinite(s.mean_psnr()), name
        assert table.row("flow", "success_rate").shape == (3,)
        again = X.evaluation_table("smoke", verbose=False)  # from the cache, same numbers
        assert np.array_equal(again.row("spatial", "mean_psnr"), table.row("spatial", "mean_psnr"))
        it, mean = X.probe_mean("spatial", "smoke")
        assert it[0] == 0 and mean.shape == it.shape
