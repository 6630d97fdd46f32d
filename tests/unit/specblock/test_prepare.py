"""Target and drafter checkpoints of chapter 10: the table, the smoke run of the prepare module, staleness,
and the committed checkpoints (fresh by behaviour: they load into today's code and reproduce the metrics
recorded beside them; a comment leaves them fresh, a changed forward or width does not)."""

import dataclasses

import pytest
import torch

from neurips26 import checkpoint_files
from neurips26.checkpoint_files import (
    MAX_CHECKPOINT_BYTES,
    CheckpointError,
    StaleCheckpointError,
    check_budget,
    check_metrics,
    checkpoint_sizes,
)
from neurips26.nn.transformer import MLP, DecoderBlock, DecoderConfig
from neurips26.specblock import prepare as prep
from neurips26.specblock.prepare import (
    ALL_NAMES,
    MODEL_NAMES,
    PACKAGE_DIR,
    ModelSpec,
    PrepareConfig,
    expected_hash,
    load_checkpoint,
    main,
    model_spec,
    pretrained,
    validation_metrics,
)
from neurips26.specblock.swiglu import SwiGLU
from neurips26.specblock.target import validation_loss
from neurips26.specblock.target_checkpoint import TARGET_NAME, load_target, target_identity
from tests.unit.specblock.tiny import isolated_cache


def test_table_rows_differ_only_in_what_they_ablate():
    assert MODEL_NAMES == (
        "specblock",
        "specblock-noshift",
        "specblock-1block",
        "specblock-noprefix",
        "eagle3",
        "medusa",
    )
    base = dataclasses.asdict(model_spec("specblock"))
    for name, field in (("specblock-noshift", "shift"), ("specblock-1block", "ttt_blocks")):
        other = dataclasses.asdict(model_spec(name))
        assert {k for k in base if base[k] != other[k]} == {"name", field}
    config = PrepareConfig.for_scale("default")
    assert (config.prompts, config.new_tokens, config.steps, config.domains) == (
        600,
        96,
        300,
        ("code", "dialogue"),
    )
    assert len({expected_hash(s, config) for s in prep.MODELS}) == len(MODEL_NAMES)
    assert expected_hash(model_spec("eagle3"), config) != expected_hash(
        model_spec("eagle3"), PrepareConfig.for_scale("smoke")
    )


def test_a_specblock_row_trains_with_the_recipe_of_its_row_and_sizes():
    """The training recipe comes from the hashed row and sizes alone (what ``config_hash`` covers), and the
    committed default recipe is the chapter's: 300 steps, batch 16, window 48, Adam 3e-3, seed 0."""
    config = PrepareConfig.for_scale("default")
    for spec in prep.MODELS:
        if spec.kind != "specblock":
            continue
        recipe = prep._drafter_training(spec, config)
        assert (recipe.ttt_blocks, recipe.valid_prefix) == (spec.ttt_blocks, spec.valid_prefix)
        assert (recipe.steps, recipe.batch, recipe.lr, recipe.window, recipe.seed) == (300, 16, 3e-3, 48, 0)
        assert (recipe.strict_chain, recipe.ttt_own_rows, recipe.gamma, recipe.rank_weight) == (
            False,
            True,
            0.8,
            1.0,
        )
    assert prep._drafter_training(model_spec("specblock-1block"), config).ttt_blocks == 1
    assert prep._drafter_training(model_spec("specblock-noprefix"), config).valid_prefix is False
    smoke = prep._drafter_training(model_spec("specblock"), PrepareConfig.for_scale("smoke"))
    assert (smoke.steps, smoke.batch, smoke.window) == (4, 4, 12)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"prompts": 1}, ValueError, "prompts"),
        ({"domains": ("code", "poetry")}, ValueError, "domains"),
        ({"val_seed": 1}, ValueError, "val_seed"),
        ({"steps": 0}, ValueError, "steps"),
        ({"lr": 0.0}, ValueError, "lr"),
        ({"target": "big"}, TypeError, "target"),
    ],
)
def test_prepare_config_rejects_bad_values_naming_the_field(kwargs, error, name):
    with pytest.raises(error, match=name):
        PrepareConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"kind": "lstm"}, ValueError, "kind"),
        ({"ttt_blocks": 0}, ValueError, "ttt_blocks"),
        ({"shift": 1}, TypeError, "shift"),
        ({"kind": "medusa", "shift": False}, ValueError, "shift"),
        ({"name": "a/b"}, ValueError, "name"),
    ],
)
def test_model_spec_rejects_bad_values_naming_the_field(kwargs, error, name):
    with pytest.raises(error, match=name):
        ModelSpec(**{"name": "m", **kwargs})
    with pytest.raises(ValueError, match="name"):
        model_spec("specblock-huge")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """``python -m neurips26.specblock.prepare --scale smoke`` (in process) into a temporary directory."""
    cache = tmp_path_factory.mktemp("cache")
    out = tmp_path_factory.mktemp("checkpoints")
    with isolated_cache(cache):
        assert main(["--scale", "smoke", "--out", str(out)]) == 0
        yield out, cache


def test_smoke_prepare_writes_loadable_checkpoints_within_budget(smoke_run):
    out, _ = smoke_run
    config = PrepareConfig.for_scale("smoke")
    assert sorted(p.stem for p in out.glob("*.pt")) == sorted(ALL_NAMES)
    check_budget(checkpoint_sizes(out))
    val = prep.distillation(config, "val")
    target, target_meta = load_target(config.target, out)
    assert target_identity(target) == target_meta.weights_hash
    assert target_identity(target) == target_identity(prep.target_for(config))  # the same rounded target
    for name in MODEL_NAMES:
        assert sum((out / f"{name}{ext}").stat().st_size for ext in (".pt", ".json")) <= MAX_CHECKPOINT_BYTES
        model, meta = load_checkpoint(name, "smoke", directory=out)
        state = torch.load(out / f"{name}.pt", weights_only=True)
        assert not set(prep.DROPPED[meta.kind]) & set(state)  # the target's frozen copies are not stored
        assert all(v.dtype == torch.float16 for v in state.values() if v.is_floating_point())
        measured = validation_metrics(meta.kind, model, val)
        assert measured == pytest.approx(meta.metrics, rel=1e-5, abs=1e-6)
        assert 0.0 <= measured["acc0"] <= 1.0 and measured["val_loss"] > 0


def test_stale_config_or_target_is_detected_and_pretrained_retrains(smoke_run, capsys):
    out, _ = smoke_run
    _, meta = load_checkpoint("medusa", "smoke", directory=out)
    sidecar = out / "medusa.json"
    text = sidecar.read_text()
    sidecar.write_text(text.replace(meta.config_hash, "0" * 16))
    with pytest.raises(StaleCheckpointError, match="configuration"):
        load_checkpoint("medusa", "smoke", directory=out)
    sidecar.write_text(text)
    with pytest.raises(StaleCheckpointError, match="another target"):
        prep.check_target(
            dataclasses.replace(meta, target_hash="0" * 16), prep.target_for(PrepareConfig.for_scale("smoke"))
        )
    recorded = dataclasses.replace(
        meta, metrics={**meta.metrics, "val_loss": meta.metrics["val_loss"] * 1.01}
    )
    with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded val_loss"):
        check_metrics(recorded, {"val_loss": meta.metrics["val_loss"]})
    with pytest.raises(CheckpointError):
        load_checkpoint("eagle3", "smoke", directory=out / "nowhere")
    heads, fresh = pretrained("medusa", "smoke")  # smoke: trained through the cache, same weights
    assert fresh.weights_hash == meta.weights_hash and not heads.training
    pretrained("medusa", "smoke")
    assert "loaded" in capsys.readouterr().out


def test_pretrained_at_smoke_loads_what_prepare_wrote_to_the_smoke_directory(smoke_run, capsys):
    """The registry's one rule: a fresh checkpoint in the directory of its scale is used at every scale."""
    out, cache = smoke_run
    home = prep.checkpoint_dir("smoke")
    assert home == cache / "specblock-checkpoints" / "smoke"
    home.mkdir(parents=True, exist_ok=True)
    copied = [home / f"eagle3{suffix}" for suffix in (".pt", ".json")]
    for path in copied:
        path.write_bytes((out / path.name).read_bytes())
    try:
        capsys.readouterr()
        drafter, meta = pretrained("eagle3", "smoke")
        assert capsys.readouterr().out == ""  # loaded from its checkpoint: neither trained nor cached
        assert meta.weights_hash == load_checkpoint("eagle3", "smoke", directory=out)[1].weights_hash
        assert not drafter.training
    finally:
        for path in copied:
            path.unlink()


COMMITTED = sorted(p.stem for p in PACKAGE_DIR.glob("*.json")) if PACKAGE_DIR.is_dir() else []
DEFAULT = PrepareConfig.for_scale("default")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(
            "no checkpoint is committed yet (run python -m neurips26.specblock.prepare --scale default)"
        )
    assert COMMITTED == sorted(ALL_NAMES), "commit every checkpoint of the table, and only those"
    sizes = checkpoint_sizes(PACKAGE_DIR)
    check_budget(sizes)
    assert [name for name, size in sizes.items() if size > MAX_CHECKPOINT_BYTES] == [TARGET_NAME]


@pytest.fixture(scope="module")
def shipped_target():
    if TARGET_NAME not in COMMITTED:
        pytest.skip("no target checkpoint is committed yet")
    return load_target(DEFAULT.target, PACKAGE_DIR)


@pytest.mark.committed
def test_committed_target_is_fresh_and_the_chapter_trains_nothing_by_default(shipped_target, monkeypatch):
    target, meta = shipped_target
    assert validation_loss(target, DEFAULT.target) == pytest.approx(meta.metrics["val_loss"], rel=1e-3)
    assert len(meta.val_responses) == DEFAULT.val_prompts
    monkeypatch.setattr(prep, "trained_target", _no_training)
    prep.forget_targets()
    try:
        assert target_identity(prep.target_for(DEFAULT)) == meta.weights_hash
    finally:
        prep.forget_targets()


def _no_training(*args, **kwargs):
    raise AssertionError("the default target must come from its checkpoint, not from training")


@pytest.mark.committed
@pytest.mark.parametrize("name", [n for n in COMMITTED if n != TARGET_NAME] or ["(none committed)"])
def test_committed_drafter_is_fresh_and_reaches_its_recorded_metric(name, shipped_target):
    model, meta = load_checkpoint(name, target=shipped_target[0])  # raises when stale: rerun prepare
    assert meta.target_hash == shipped_target[1].weights_hash
    measured = validation_metrics(meta.kind, model, prep.distillation(DEFAULT, "val"))
    assert measured == pytest.approx(meta.metrics, rel=1e-3, abs=1e-6), name


@pytest.mark.committed
def test_a_comment_in_the_network_code_leaves_the_checkpoints_fresh(shipped_target, monkeypatch):
    """Any edit of a source file changes its fingerprint; freshness must not look at it."""
    monkeypatch.setattr(checkpoint_files, "source_fingerprint", lambda files: "c0ffee" * 2 + "0000")
    monkeypatch.setattr(prep, "source_fingerprint", lambda files: "c0ffee" * 2 + "0000")
    target, _ = load_target(DEFAULT.target, PACKAGE_DIR)
    load_checkpoint("specblock", target=target)
    load_checkpoint("eagle3", target=target)


@pytest.mark.committed
def test_a_changed_forward_or_width_makes_the_checkpoints_stale(shipped_target, monkeypatch):
    target, _ = shipped_target
    with monkeypatch.context() as patch:  # the MLP residual branch of every target block scaled by 0.9
        forward = MLP.forward
        patch.setattr(MLP, "forward", lambda self, u: 0.9 * forward(self, u))
        with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded val_loss.*source"):
            load_target(DEFAULT.target, PACKAGE_DIR)
    with monkeypatch.context() as patch:  # every block's whole update scaled: a near symmetry (pre-norm)
        block_forward = DecoderBlock.forward

        def scaled(self, x, **kwargs):
            out, weights = block_forward(self, x, **kwargs)
            return x + 0.9 * (out - x), weights

        patch.setattr(DecoderBlock, "forward", scaled)
        load_target(DEFAULT.target, PACKAGE_DIR)  # the final LayerNorm undoes most of it: still fresh
    with monkeypatch.context() as patch:  # a wider MLP in the target
        patch.setattr(DecoderConfig, "mlp_width", property(lambda self: 4 * self.width))
        with pytest.raises(StaleCheckpointError, match="does not fit today's network"):
            load_target(DEFAULT.target, PACKAGE_DIR)
    with monkeypatch.context() as patch:  # a drafter whose gated MLP output is scaled
        swiglu_forward = SwiGLU.forward
        patch.setattr(SwiGLU, "forward", lambda self, u: 0.9 * swiglu_forward(self, u))
        with pytest.raises(StaleCheckpointError, match="no longer reproduces"):
            load_checkpoint("specblock", target=target)
    with monkeypatch.context() as patch:  # a drafter with another MLP width
        init = SwiGLU.__init__
        patch.setattr(SwiGLU, "__init__", lambda self, width, hidden: init(self, width, hidden + 8))
        with pytest.raises(StaleCheckpointError, match="does not fit today's network"):
            load_checkpoint("specblock", target=target)
