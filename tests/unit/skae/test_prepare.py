"""Tests of the SKAE model table, its training and checkpoints: the table the claims need, a smoke prepare
whose checkpoints load back fresh and reproduce their metrics, ``--only`` resuming, stale detection."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import pytest
import torch

from neurips26.checkpoint_files import StaleCheckpointError, half_state
from neurips26.skae import prepare as P
from neurips26.skae.model import KAE, DictionaryDecoder
from neurips26.skae.systems import CONTROLLED, FLOWS
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed

NAMES = ("lista-square-4-s0", "dense-mlp-square-4-s0")


# ------------------------------------------------------------------------------------------ the table


def test_the_table_is_what_the_claims_need():
    assert len(P.MODELS) == 109 and len(set(P.MODEL_NAMES)) == 109
    per_row = Counter(m.row for m in P.MODELS)
    # forecast rows: 5 controlled systems x 3 seeds; LISTA and Dense also 4 chaotic systems x 3 seeds
    assert per_row == {
        "lista": 15 + 12,
        "dense-mlp": 15 + 12,
        "lista-bd": 15,
        "lista-sb": 15,
        "sparse-mlp": 15,
        "topk": 5,
        "lista-nosp": 5,
    }
    for row in P.FORECAST_ROWS:
        cells = {(m.system, m.seed) for m in P.MODELS if m.row == row}
        assert cells >= {(s, seed) for s in CONTROLLED for seed in P.SEEDS}
    chaos = {(m.row, m.system, m.seed) for m in P.MODELS if m.system not in CONTROLLED}
    assert chaos == {(r, s, seed) for r in P.CHAOS_ROWS for s in (*FLOWS, "lorenz-96") for seed in P.SEEDS}
    assert P.claim_counts() == {"k1": 75, "k2": 75, "k3": 55, "k4": 15, "k5": 3, "k6": 24, "k7": 30}


def test_smoke_table_is_one_system_and_seed():
    smoke = P.model_table("smoke")
    assert {m.system for m in smoke} == {"square-4"} and {m.seed for m in smoke} == {0}
    assert len(smoke) == 7 and set(smoke) <= set(P.MODELS)
    assert P.model_table("paper") == P.MODELS


def test_specs_and_configs_name_the_bad_field():
    with pytest.raises(ValueError, match="row"):
        P.ModelSpec("lista-bd", "lorenz-63", 0)  # a block count needs a basin count
    with pytest.raises(ValueError, match="row"):
        P.ModelSpec("nope", "square-4", 0)
    with pytest.raises(ValueError, match="system"):
        P.ModelSpec("lista", "nowhere", 0)
    with pytest.raises(ValueError, match="seed"):
        P.ModelSpec("lista", "square-4", -1)
    with pytest.raises(ValueError, match="latent"):
        P.PrepareConfig(latent=15)
    for name in ("steps", "batch", "val_horizon", "val_period"):
        with pytest.raises(ValueError, match=name):
            P.PrepareConfig(**{name: 0})
    with pytest.raises(ValueError, match="lr"):
        P.PrepareConfig(lr=0.0)
    with pytest.raises(ValueError, match="name"):
        P.model_spec("lista-square-4-s7")
    with pytest.raises(ValueError, match="only"):
        P.prepare("smoke", only=["lista-square-4-s9"])


def test_model_arguments_follow_the_row_and_checkpoints_fit_the_budget():
    config = P.PrepareConfig.for_scale("default")
    args = P.model_arguments(P.model_spec("lista-bd-high-cross-3-s1"), config)
    assert args["blocks"] == 3 and args["latent"] == 64 and args["seed"] == 1
    assert P.model_arguments(P.model_spec("lista-lorenz-96-s0"), config)["state_dim"] == 40
    model = KAE(**P.model_arguments(P.model_spec("dense-mlp-square-4-s0"), config))
    assert P.loss_weights(P.model_spec("dense-mlp-square-4-s0"), model, config).sp == 0.0
    lista = KAE(**P.model_arguments(P.model_spec("lista-nosp-square-4-s0"), config))
    assert P.loss_weights(P.model_spec("lista-nosp-square-4-s0"), lista, config).sp == 0.0
    assert P.loss_weights(P.model_spec("lista-square-4-s0"), lista, config).sp == 3e-3
    assert P.loss_weights(P.model_spec("lista-sakarya-s0"), lista, config).sp == 6e-3
    # float16 weights of a default model: about 25 KB (a Lorenz-96 model, d_x = 40, a little more)
    sizes = [
        sum(v.numel() * v.element_size() for v in half_state(KAE(**P.model_arguments(m, config))).values())
        for m in P.MODELS
    ]
    assert max(sizes) < 40_000 and sum(sizes) < P.MAX_TOTAL_BYTES - 109 * 2_500


# ------------------------------------------------------------------------------------------ a smoke prepare


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("skae-smoke")
    with torch.random.fork_rng(devices=[]):
        torch.set_num_threads(1)
        written = P.prepare("smoke", only=list(NAMES), out=folder, progress=False)
    assert [m.name for m in written] == list(NAMES)
    return folder


def test_smoke_checkpoints_load_back_fresh_and_reproduce_their_metrics(smoke_dir):
    config = P.PrepareConfig.for_scale("smoke")
    for name in NAMES:
        model, meta = P.load_checkpoint(name, "smoke", directory=smoke_dir)
        assert isinstance(model, KAE) and not model.training
        assert meta.config_hash == P.expected_hash(P.model_spec(name), config)
        assert set(meta.metrics) == {"val_loss", "val_mse"}
        measured = P.validation_metrics(P.model_spec(name), model, config)
        for key, value in measured.items():
            assert value == pytest.approx(meta.metrics[key], rel=1e-6)
        state = torch.load(smoke_dir / f"{name}.pt", weights_only=True)
        assert all(v.dtype == torch.float16 for v in state.values() if v.is_floating_point())
        assert meta.spec["train"]["steps"] == 100 and meta.model["latent"] == 16


def test_a_changed_checkpoint_is_stale(smoke_dir, tmp_path):
    name = NAMES[0]
    for suffix in (".pt", ".json"):
        (tmp_path / f"{name}{suffix}").write_bytes((smoke_dir / f"{name}{suffix}").read_bytes())
    sidecar = tmp_path / f"{name}.json"
    data = json.loads(sidecar.read_text())
    data["metrics"]["val_mse"] *= 1.5
    sidecar.write_text(json.dumps(data))
    with pytest.raises(StaleCheckpointError, match="val_mse"):
        P.load_checkpoint(name, "smoke", directory=tmp_path)
    data["config_hash"] = "0" * 16
    sidecar.write_text(json.dumps(data))
    with pytest.raises(StaleCheckpointError, match="configuration"):
        P.load_checkpoint(name, "smoke", directory=tmp_path)
    # another scale's sizes are another configuration
    with pytest.raises(StaleCheckpointError, match="configuration"):
        P.load_checkpoint(name, "default", directory=smoke_dir)


def test_only_resumes_keeping_fresh_checkpoints_and_retraining_missing_ones(smoke_dir, tmp_path, capsys):
    for name in NAMES:
        for suffix in (".pt", ".json"):
            (tmp_path / f"{name}{suffix}").write_bytes((smoke_dir / f"{name}{suffix}").read_bytes())
    kept = (tmp_path / f"{NAMES[0]}.pt").stat().st_mtime_ns
    (tmp_path / f"{NAMES[1]}.pt").unlink()  # an interrupted run: one checkpoint missing
    assert (
        P.main(["--scale", "smoke", "--out", str(tmp_path), *[a for n in NAMES for a in ("--only", n)]]) == 0
    )
    out = capsys.readouterr().out
    assert f"{NAMES[0]}: fresh" in out and "1 checkpoint(s)" in out
    assert (tmp_path / f"{NAMES[0]}.pt").stat().st_mtime_ns == kept  # not retrained
    # the retrained model is bit-identical to the first training (seeded weights, windows and fit)
    again = json.loads((tmp_path / f"{NAMES[1]}.json").read_text())
    first = json.loads((smoke_dir / f"{NAMES[1]}.json").read_text())
    assert again["weights_hash"] == first["weights_hash"]
    P.load_checkpoint(NAMES[1], "smoke", directory=tmp_path)


def test_registry_pretrained_loads_the_checkpoint_of_its_scale(smoke_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
    folder = P.checkpoint_dir("smoke")
    assert folder == tmp_path / "skae-checkpoints" / "smoke"
    folder.mkdir(parents=True)
    for suffix in (".pt", ".json"):
        (folder / f"{NAMES[0]}{suffix}").write_bytes((smoke_dir / f"{NAMES[0]}{suffix}").read_bytes())
    model, meta = P.pretrained(NAMES[0], "smoke")
    assert meta.name == NAMES[0] and capsys.readouterr().out == ""  # loaded, nothing trained
    assert not list(tmp_path.glob("*.pkl"))  # the results cache was not touched
    with torch.no_grad():
        assert model.encode(torch.zeros(3, 2)).shape == (3, 16)


def test_list_prints_the_table(capsys):
    assert P.main(["--list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 109 and lines[0].startswith("lista-square-4-s0")
    assert dataclasses.is_dataclass(P.MODELS[0])


# ------------------------------------------------------------------------------- the committed ones

COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("skae")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.MODEL_NAMES, P.MAX_TOTAL_BYTES)


@pytest.mark.committed
@pytest.mark.parametrize("name", COMMITTED or ["(none committed)"])
def test_committed_checkpoint_is_fresh_and_reaches_its_recorded_metrics(name):
    """The registry's load re-measures ``val_loss`` and ``val_mse`` on the recorded validation data and
    raises when either moved beyond relative ``METRIC_RTOL`` (so on a foreign CPU too)."""
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.load_checkpoint(name, "default")
    assert isinstance(model, KAE) and not model.training
    assert meta.name == name and meta.config_hash == P.expected_hash(P.model_spec(name), P.PrepareConfig())
    assert meta.spec["train"]["steps"] == 1500 and meta.model["latent"] == 64


@pytest.mark.committed
def test_a_comment_leaves_the_committed_checkpoints_fresh_and_a_changed_forward_does_not(monkeypatch):
    if not COMMITTED:
        pytest.skip(_NONE)
    name = "lista-square-4-s0"
    with monkeypatch.context() as patch:  # any edit of the source changes its fingerprint: not looked at
        patch.setattr(P, "source_fingerprint", lambda files: "c0ffee" * 2 + "0000")
        P.load_checkpoint(name, "default")
    with monkeypatch.context() as patch:  # the decoder's output scaled: the same weights compute otherwise
        forward = DictionaryDecoder.forward
        patch.setattr(DictionaryDecoder, "forward", lambda self, z: 0.9 * forward(self, z))
        with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded"):
            P.load_checkpoint(name, "default")
