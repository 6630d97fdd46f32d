"""Checkpoints: the model table, the file format, staleness, the smoke run of the prepare module, and the
committed checkpoints (fresh by behaviour: they load into today's code and reproduce the metric recorded
beside them; a comment leaves them fresh, a changed forward or width does not)."""

import dataclasses
import json

import pytest
import torch

from neurips26 import checkpoint_files
from neurips26.checkpoint_files import MAX_CHAPTER_BYTES, MAX_CHECKPOINT_BYTES
from neurips26.nn import conv
from neurips26.ssd import checkpoints as ssd_checkpoints
from neurips26.ssd.checkpoints import (
    PACKAGE_DIR,
    CheckpointError,
    CheckpointMeta,
    MissingCheckpointError,
    StaleCheckpointError,
    build_denoiser,
    check_config,
    check_metric,
    config_hash,
    half_state,
    read_checkpoint,
    save_checkpoint,
    source_fingerprint,
    weights_hash,
)
from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser
from neurips26.ssd.prepare import (
    MODEL_NAMES,
    MODELS,
    ModelSpec,
    PrepareConfig,
    expected_hash,
    load_checkpoint,
    main,
    model_spec,
    pretrained,
    train_config,
    validation_images,
    validation_loss,
)

# --------------------------------------------------------------------------------------------
# the table and the configuration


def test_model_names_are_unique_and_runs_are_shared_only_by_early_stopping():
    assert len(set(MODEL_NAMES)) == len(MODELS) == 12
    runs = [spec.training() for spec in MODELS]
    shared = {n for n, r in zip(MODEL_NAMES, runs, strict=True) if runs.count(r) > 1}
    assert shared == {"digits64-eta0", "digits64-early"}
    assert model_spec("digits64-early").select == "best"


def test_rows_of_a_claim_differ_only_in_what_they_compare():
    base = dataclasses.asdict(model_spec("digits-eta0"))
    for name in ("digits-eta0.5", "digits-eta0.9", "digits-eta0.98"):
        other = dataclasses.asdict(model_spec(name))
        assert {k for k in base if base[k] != other[k]} == {"name", "eta"}
    config = PrepareConfig.for_scale("default")
    plain = dataclasses.asdict(train_config(model_spec("digits-eta0"), config))
    for spec in MODELS:  # one budget for every row: only η, weight decay and input masking may differ
        other = dataclasses.asdict(train_config(spec, config))
        assert {k for k in plain if plain[k] != other[k]} <= {"eta", "weight_decay", "input_masking"}
    assert config.steps == 2000 and config.batch == 64 and config.channels == (16, 32)


def test_expected_hash_is_stable_and_tells_rows_and_scales_apart():
    smoke, default = PrepareConfig.for_scale("smoke"), PrepareConfig.for_scale("default")
    hashes = {expected_hash(spec, default) for spec in MODELS}
    assert len(hashes) == len(MODELS)
    spec = model_spec("digits-eta0.98")
    assert expected_hash(spec, default) == expected_hash(spec, PrepareConfig.for_scale("default"))
    assert expected_hash(spec, smoke) != expected_hash(spec, default)
    assert expected_hash(spec, dataclasses.replace(default, lr=1e-3)) != expected_hash(spec, default)


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_prepare_config_exists_at_every_scale_and_is_frozen(scale):
    config = PrepareConfig.for_scale(scale)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.steps = 3


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"data": "faces"}, ValueError, "data"),
        ({"eta": 1.0}, ValueError, "eta"),
        ({"n_train": 1}, ValueError, "n_train"),
        ({"dropout": 1.5}, ValueError, "dropout"),
        ({"weight_decay": -1.0}, ValueError, "weight_decay"),
        ({"input_masking": 1}, TypeError, "input_masking"),
        ({"select": "median"}, ValueError, "select"),
        ({"name": "a/b"}, ValueError, "name"),
    ],
)
def test_model_spec_rejects_bad_values_naming_the_field(kwargs, error, name):
    fields = {"name": "m", "data": "digits", **kwargs}
    with pytest.raises(error, match=name):
        ModelSpec(**fields)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"image_size": 12}, ValueError, "image_size"),
        ({"channels": [16, 32]}, TypeError, "channels"),
        ({"steps": 0}, ValueError, "steps"),
        ({"val_images": 2000}, ValueError, "val_images"),
        ({"curve_samples": 1}, ValueError, "curve_samples"),
        ({"classifier": "cnn"}, TypeError, "classifier"),
    ],
)
def test_prepare_config_rejects_bad_values_naming_the_field(kwargs, error, name):
    with pytest.raises(error, match=name):
        PrepareConfig(**kwargs)


def test_unknown_model_names_and_scales_are_rejected():
    with pytest.raises(ValueError, match="name"):
        model_spec("digits-eta0.7")
    with pytest.raises(ValueError, match="scale"):
        PrepareConfig.for_scale("huge")


# --------------------------------------------------------------------------------------------
# the file format


def _tiny_checkpoint(name="digits-eta0"):
    config = DenoiserConfig(8, 1, channels=(16, 32), small=True)
    model = EDMDenoiser(config, seed=3)
    with torch.no_grad():  # move off the initialisation so that rounding matters
        for p in model.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    state = half_state(model)
    meta = CheckpointMeta(
        name=name,
        config_hash="h" * 16,
        source=source_fingerprint(),
        denoiser=dataclasses.asdict(config),
        metrics={"val_loss": 1.0},
        curves={"eval_step": [1.0, 2.0], "proxy_fid": [3.0, 2.5]},
        weights_hash=weights_hash(state),
    )
    return model, state, meta


def test_checkpoint_round_trip_reproduces_the_float16_model_exactly(tmp_path):
    model, state, meta = _tiny_checkpoint()
    path = save_checkpoint(tmp_path, state, meta)
    assert path.stat().st_size < 200_000 and path.with_suffix(".json").is_file()
    loaded_state, loaded_meta = read_checkpoint(tmp_path, "digits-eta0")
    assert loaded_meta == meta
    assert all(v.dtype == torch.float16 for v in loaded_state.values() if v.is_floating_point())
    loaded = build_denoiser(loaded_meta, loaded_state)
    rounded = EDMDenoiser(model.config, seed=0)
    rounded.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
    x = torch.randn(5, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    sigma = torch.tensor([0.01, 0.1, 1.0, 3.0, 20.0])
    model.eval(), rounded.eval()
    with torch.no_grad():
        assert torch.equal(loaded(x, sigma), rounded(x, sigma))  # identical to the float16 weights
        torch.testing.assert_close(loaded(x, sigma), model(x, sigma), rtol=1e-2, atol=1e-2)


def test_save_refuses_float32_weights_and_a_wrong_hash(tmp_path):
    model, state, meta = _tiny_checkpoint()
    with pytest.raises(ValueError, match="float16"):
        save_checkpoint(tmp_path, model.state_dict(), meta)
    with pytest.raises(ValueError, match="weights_hash"):
        save_checkpoint(tmp_path, state, dataclasses.replace(meta, weights_hash="0" * 16))


def test_missing_edited_or_stale_checkpoints_are_detected(tmp_path):
    _, state, meta = _tiny_checkpoint()
    with pytest.raises(MissingCheckpointError):
        read_checkpoint(tmp_path, "digits-eta0")
    path = save_checkpoint(tmp_path, state, meta)
    check_config(meta, meta.config_hash)  # fresh: no error
    check_config(dataclasses.replace(meta, source="0" * 16), meta.config_hash)  # source bytes do not count
    with pytest.raises(StaleCheckpointError, match="configuration"):
        check_config(meta, "x" * 16)
    check_metric(meta, 1.0 + 5e-4)  # within the relative 1e-3 of the recorded val_loss 1.0
    with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded val_loss.*source"):
        check_metric(meta, 1.01)
    wider = dataclasses.replace(meta, denoiser={**meta.denoiser, "channels": [16, 48]})
    with pytest.raises(StaleCheckpointError, match="does not fit today's network"):
        build_denoiser(wider, state)
    sidecar = path.with_suffix(".json")
    data = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**data, "weights_hash": "0" * 16}))
    with pytest.raises(CheckpointError, match="does not match"):
        read_checkpoint(tmp_path, "digits-eta0")
    sidecar.write_text(json.dumps({**data, "surprise": 1}))
    with pytest.raises(CheckpointError, match="unknown"):
        read_checkpoint(tmp_path, "digits-eta0")
    path.write_bytes(path.read_bytes()[:100])  # truncated weights
    sidecar.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="cannot read"):
        read_checkpoint(tmp_path, "digits-eta0")


def test_config_hash_follows_the_values():
    a = config_hash({"x": PrepareConfig(), "y": [1, 2.0]})
    assert a == config_hash({"y": [1, 2.0], "x": PrepareConfig()})
    assert a != config_hash({"x": PrepareConfig(lr=1e-3), "y": [1, 2.0]})
    with pytest.raises(TypeError, match="config"):
        config_hash({"x": object()})


# --------------------------------------------------------------------------------------------
# the prepare module at smoke scale (what CI runs)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """``python -m neurips26.ssd.prepare --scale smoke`` (in process) into a temporary directory."""
    cache = tmp_path_factory.mktemp("cache")
    out = tmp_path_factory.mktemp("checkpoints")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEURIPS26_CACHE_DIR", str(cache))
        mp.setenv("NEURIPS26_PROGRESS", "0")
        mp.delenv("NEURIPS26_NO_CACHE", raising=False)
        assert main(["--scale", "smoke", "--out", str(out)]) == 0
        yield out, cache, mp


@pytest.mark.slow
def test_smoke_prepare_writes_every_checkpoint_within_budget_and_they_load(smoke_run):
    out, _, _ = smoke_run
    assert sorted(p.stem for p in out.glob("*.pt")) == sorted(MODEL_NAMES)
    total = 0
    config = PrepareConfig.for_scale("smoke")
    for name in MODEL_NAMES:
        size = (out / f"{name}.pt").stat().st_size + (out / f"{name}.json").stat().st_size
        assert size <= MAX_CHECKPOINT_BYTES
        total += size
        model, meta = load_checkpoint(name, "smoke", directory=out)
        assert meta.config_hash == expected_hash(model_spec(name), config)
        assert len(meta.curves["eval_step"]) == config.steps // config.eval_every
        recomputed = validation_loss(model, validation_images(model_spec(name).data, config), config.seed + 3)
        assert recomputed == pytest.approx(meta.metrics["val_loss"], rel=1e-4)
    assert total <= MAX_CHAPTER_BYTES


@pytest.mark.slow
def test_early_stopping_keeps_the_best_logged_weights_of_the_shared_run(smoke_run):
    out, _, _ = smoke_run
    last = load_checkpoint("digits64-eta0", "smoke", directory=out)[1]
    best = load_checkpoint("digits64-early", "smoke", directory=out)[1]
    assert best.curves == last.curves  # one run, two checkpoints
    curve = best.curves["proxy_fid"]
    assert best.metrics["proxy_fid"] == min(curve) and last.metrics["proxy_fid"] == curve[-1]
    assert best.metrics["selected_step"] == best.curves["eval_step"][curve.index(min(curve))]


@pytest.mark.slow
def test_pretrained_loads_fresh_checkpoints_and_retrains_stale_ones(smoke_run, capsys):
    out, cache, _ = smoke_run
    home = cache / "ssd-checkpoints" / "smoke"  # where pretrained() looks at smoke scale
    home.mkdir(parents=True, exist_ok=True)
    for suffix in (".pt", ".json"):
        (home / f"twins-eta0{suffix}").write_bytes((out / f"twins-eta0{suffix}").read_bytes())
    model, meta = pretrained("twins-eta0", "smoke")
    assert "training" not in capsys.readouterr().out
    sidecar = home / "twins-eta0.json"
    sidecar.write_text(sidecar.read_text().replace(meta.config_hash, "0" * 16))
    with pytest.raises(StaleCheckpointError):
        load_checkpoint("twins-eta0", "smoke")
    retrained, fresh = pretrained("twins-eta0", "smoke")
    assert "training 'twins-eta0'" in capsys.readouterr().out
    assert fresh.config_hash == meta.config_hash
    assert fresh.weights_hash == meta.weights_hash  # same seed, same table: the same weights
    assert isinstance(retrained, EDMDenoiser) and not retrained.training


# --------------------------------------------------------------------------------------------
# the committed checkpoints


COMMITTED = sorted(p.stem for p in PACKAGE_DIR.glob("*.json")) if PACKAGE_DIR.is_dir() else []


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip("no checkpoint is committed yet (run python -m neurips26.ssd.prepare --scale default)")
    assert COMMITTED == sorted(MODEL_NAMES), "commit every checkpoint of the table, and only those"
    sizes = {p.name: p.stat().st_size for p in PACKAGE_DIR.iterdir() if p.suffix in (".pt", ".json")}
    for name in COMMITTED:
        assert sizes[f"{name}.pt"] + sizes[f"{name}.json"] <= MAX_CHECKPOINT_BYTES
    assert sum(sizes.values()) <= MAX_CHAPTER_BYTES


@pytest.mark.committed
@pytest.mark.parametrize("name", COMMITTED or ["(none committed)"])
def test_committed_checkpoint_is_fresh_and_reaches_its_recorded_metric(name):
    if not COMMITTED:
        pytest.skip("no checkpoint is committed yet (run python -m neurips26.ssd.prepare --scale default)")
    model, meta = load_checkpoint(name)  # raises when stale: rerun the prepare module
    config = PrepareConfig.for_scale("default")
    measured = validation_loss(model, validation_images(model_spec(name).data, config), config.seed + 3)
    assert measured == pytest.approx(meta.metrics["val_loss"], rel=1e-3)


@pytest.mark.committed
def test_a_comment_in_the_network_code_leaves_the_checkpoints_fresh(monkeypatch):
    """Any edit of ``neurips26/nn/conv.py`` changes its fingerprint; freshness must not look at it."""
    if not COMMITTED:
        pytest.skip("no checkpoint is committed yet")
    monkeypatch.setattr(checkpoint_files, "source_fingerprint", lambda files: "c0ffee" * 2 + "0000")
    monkeypatch.setattr(ssd_checkpoints, "source_fingerprint", lambda: "c0ffee" * 2 + "0000")
    load_checkpoint("digits-eta0")
    load_checkpoint("twins-eta0.98")


@pytest.mark.committed
def test_a_changed_forward_or_width_makes_the_checkpoints_stale(monkeypatch):
    if not COMMITTED:
        pytest.skip("no checkpoint is committed yet")
    with monkeypatch.context() as patch:  # every U-Net residual block's output scaled
        forward = conv._ResBlock.forward
        patch.setattr(conv._ResBlock, "forward", lambda self, h, e: 0.9 * forward(self, h, e))
        with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded val_loss"):
            load_checkpoint("digits-eta0")
    with monkeypatch.context() as patch:  # wider U-Net levels for the same recorded configuration
        config = CheckpointMeta.denoiser_config
        patch.setattr(
            CheckpointMeta,
            "denoiser_config",
            lambda self: dataclasses.replace(config(self), channels=(16, 48)),
        )
        with pytest.raises(StaleCheckpointError, match="does not fit today's network"):
            load_checkpoint("digits-eta0")
