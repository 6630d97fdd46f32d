"""The shared checkpoint files: hashing, float16 states, sidecars, atomic save, checked read, freshness."""

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
import torch

from neurips26.checkpoint_files import (
    FORMAT,
    CheckpointError,
    MissingCheckpointError,
    Registry,
    Sidecar,
    StaleCheckpointError,
    check_budget,
    check_config,
    check_directory_budget,
    check_layout,
    check_metrics,
    committed_form,
    config_hash,
    half_state,
    load_half_state,
    read_checkpoint,
    save_checkpoint,
    source_fingerprint,
    weights_hash,
    write_within_budget,
)

FILES = (("neurips26", "checkpoint_files.py"), ("neurips26", "validation.py"))


@dataclass(frozen=True)
class Meta(Sidecar):
    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics",)

    name: str
    config_hash: str
    source: str
    metrics: dict = field(default_factory=dict)
    weights_hash: str = ""
    format: int = FORMAT


@dataclass(frozen=True)
class Cfg:
    lr: float = 1e-3
    sizes: tuple = (1, 2)


def _model():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    return model


def _checkpoint(name="m"):
    state = half_state(_model())
    meta = Meta(name, "h" * 16, source_fingerprint(FILES), {"val": (1.0, 2.0)}, weights_hash(state))
    return state, meta


def test_config_hash_is_canonical_exact_and_typed():
    assert config_hash({"a": Cfg(), "b": [1, 2.0]}) == config_hash({"b": (1, 2.0), "a": Cfg()})
    assert config_hash(Cfg()) != config_hash(Cfg(lr=1e-3 + 1e-12))
    assert config_hash(Cfg()) != config_hash(dataclasses.asdict(Cfg()))  # the class name counts
    assert len(config_hash(Cfg())) == 16
    with pytest.raises(TypeError, match="config"):
        config_hash({"x": object()})


def test_config_hash_is_the_one_chapter_05_committed():
    # a fixed value: changing the canonical form would make every committed checkpoint stale
    assert config_hash({"x": 1, "y": [1.5, "a", None, True]}) == config_hash(
        {"y": [1.5, "a", None, True], "x": 1}
    )
    from neurips26.ssd.checkpoints import PACKAGE_DIR, CheckpointMeta
    from neurips26.ssd.checkpoints import read_checkpoint as ssd_read
    from neurips26.ssd.prepare import PrepareConfig, expected_hash, model_spec

    name = "twins-eta0"
    if not (PACKAGE_DIR / f"{name}.json").is_file():
        pytest.skip("chapter 05's checkpoints are not committed")
    meta = CheckpointMeta.from_json((PACKAGE_DIR / f"{name}.json").read_text())
    assert meta.config_hash == expected_hash(model_spec(name), PrepareConfig.for_scale("default"))
    ssd_read(PACKAGE_DIR, name)


def test_half_state_is_float16_drops_keys_and_hash_follows_bytes():
    model = _model()
    state = half_state(model, drop=("1.bias",))
    assert "1.bias" not in state and all(v.dtype == torch.float16 for v in state.values())
    with pytest.raises(KeyError, match="drop"):
        half_state(model, drop=("nope",))
    h = weights_hash(state)
    assert h == weights_hash(dict(reversed(list(state.items()))))
    state["0.weight"][0, 0] += 1
    assert weights_hash(state) != h


def test_source_fingerprint_depends_on_the_files_and_their_order():
    assert source_fingerprint(FILES) == source_fingerprint(list(FILES))
    assert source_fingerprint(FILES) != source_fingerprint(FILES[::-1])
    with pytest.raises(TypeError, match="files"):
        source_fingerprint("neurips26")
    with pytest.raises(FileNotFoundError):
        source_fingerprint((("neurips26", "no_such_file.py"),))


def test_round_trip_and_damage_detection(tmp_path):
    state, meta = _checkpoint()
    with pytest.raises(MissingCheckpointError):
        read_checkpoint(tmp_path, "m", Meta)
    path = save_checkpoint(tmp_path, state, meta)
    loaded, back = read_checkpoint(tmp_path, "m", Meta)
    assert back == meta and weights_hash(loaded) == meta.weights_hash
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ValueError, match="float16"):
        save_checkpoint(tmp_path, _model().state_dict(), meta)
    with pytest.raises(ValueError, match="weights_hash"):
        save_checkpoint(tmp_path, state, dataclasses.replace(meta, weights_hash="0" * 16))
    with pytest.raises(ValueError, match="name"):
        save_checkpoint(tmp_path, state, dataclasses.replace(meta, name="a/b"))
    sidecar = path.with_suffix(".json")
    data = json.loads(sidecar.read_text())
    sidecar.write_text(json.dumps({**data, "extra": 1}))
    with pytest.raises(CheckpointError, match="unknown"):
        read_checkpoint(tmp_path, "m", Meta)
    sidecar.write_text(json.dumps({k: v for k, v in data.items() if k != "source"}))
    with pytest.raises(CheckpointError, match="lacks"):
        read_checkpoint(tmp_path, "m", Meta)
    sidecar.write_text(json.dumps({**data, "name": "other"}))
    with pytest.raises(CheckpointError, match="names"):
        read_checkpoint(tmp_path, "m", Meta)
    sidecar.write_text(json.dumps(data))
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(CheckpointError, match="cannot read"):
        read_checkpoint(tmp_path, "m", Meta)


def test_check_config_names_what_changed_and_ignores_source_bytes():
    _, meta = _checkpoint()
    check_config(meta, meta.config_hash)
    check_config(dataclasses.replace(meta, source="0" * 16), meta.config_hash)  # information only
    with pytest.raises(StaleCheckpointError, match="configuration"):
        check_config(meta, "x" * 16)
    with pytest.raises(StaleCheckpointError, match="format"):
        check_config(dataclasses.replace(meta, format=FORMAT + 1), meta.config_hash)


def test_check_layout_wants_exactly_the_networks_keys_shapes_and_float16():
    state, meta = _checkpoint()
    reference = _model().state_dict()
    check_layout("m", state, reference)
    check_layout("m", {k: v for k, v in state.items() if k != "1.bias"}, reference, dropped=["1.bias"])
    with pytest.raises(StaleCheckpointError, match=r"only in the network \['1.bias'\]"):
        check_layout("m", {k: v for k, v in state.items() if k != "1.bias"}, reference)
    wider = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Linear(5, 2)).state_dict()
    with pytest.raises(StaleCheckpointError, match=r"0.bias has shape \(3,\), the network \(5,\)"):
        check_layout("m", state, wider)
    with pytest.raises(StaleCheckpointError, match="float16"):
        check_layout("m", {**state, "0.bias": state["0.bias"].float()}, reference)


def test_check_metrics_compares_within_a_relative_tolerance_and_shows_the_source():
    _, meta = _checkpoint()
    meta = dataclasses.replace(meta, metrics={"val": 2.0, "acc": 0.5})
    check_metrics(meta, {"val": 2.0 * (1 + 9e-4)}, files=FILES)
    check_metrics(meta, {"val": 2.0, "acc": 0.5})
    with pytest.raises(StaleCheckpointError, match=r"recorded val: 2.01 now, 2 recorded.*unchanged"):
        check_metrics(meta, {"val": 2.01}, files=FILES)
    with pytest.raises(StaleCheckpointError, match="changed since"):
        check_metrics(meta, {"val": 2.01}, files=FILES[:1])
    check_metrics(meta, {"val": 2.01}, rtol=1e-2)
    with pytest.raises(StaleCheckpointError, match="records no metric 'loss'"):
        check_metrics(meta, {"loss": 1.0})
    with pytest.raises(ValueError, match="measured"):
        check_metrics(meta, {})


def test_check_budget_allows_one_large_checkpoint_and_a_chapter_total():
    check_budget({"a": 900_000, "b": 1_900_000, "c": 1_000})
    with pytest.raises(RuntimeError, match="only one"):
        check_budget({"a": 1_100_000, "b": 1_100_000})
    with pytest.raises(RuntimeError, match="over 2000000"):
        check_budget({"a": 2_100_000})
    with pytest.raises(RuntimeError, match="over 6000000"):
        check_budget({f"m{i}": 990_000 for i in range(7)})


# --------------------------------------------------------------------------------------------
# the registry: one load-or-train rule for every chapter


def _registry(package_dir, trained, **changes):
    """A registry of two tiny models whose recorded metric is the sum of the outputs on fixed inputs."""
    x = torch.linspace(-1, 1, 8).reshape(2, 4)

    def build(name, scale, meta, state, *, scale_by=1.0):
        model = _model()
        check_layout(name, state, model.state_dict())
        model.load_state_dict({k: v.float() * scale_by for k, v in state.items()})
        return model.eval()

    def measure(name, scale, model):
        with torch.no_grad():
            return {"out": float(model(x).sum())}

    def train(name, scale, verbose):
        trained.append((name, scale))
        state = half_state(_model())
        metrics = measure(name, scale, build(name, scale, None, state))
        meta = Meta(name, config_hash([name, scale]), "s" * 16, metrics, weights_hash(state))
        return state, meta

    fields = {
        "chapter": "toy",
        "package_dir": package_dir,
        "names": ("a", "b"),
        "meta_class": Meta,
        "expected_hash": lambda name, scale: config_hash([name, scale]),
        "build": build,
        "measure": measure,
        "train": train,
        "source_files": lambda name: FILES,
    }
    return Registry(**{**fields, **changes})


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("NEURIPS26_NO_CACHE", raising=False)
    trained = []
    return _registry(tmp_path / "package", trained), trained


def test_registry_loads_a_fresh_checkpoint_of_any_scale_and_trains_nothing(toy, tmp_path, capsys):
    registry, trained = toy
    assert registry.checkpoint_dir("default") == tmp_path / "package"
    assert registry.checkpoint_dir("smoke") == tmp_path / "cache" / "toy-checkpoints" / "smoke"
    for scale in ("default", "smoke"):
        state, meta = registry.train("a", scale, False)
        save_checkpoint(registry.checkpoint_dir(scale), state, meta)
    trained.clear()
    for scale in ("default", "smoke"):
        model, meta = registry.pretrained("a", scale)
        assert meta.config_hash == config_hash(["a", scale]) and not model.training
    assert trained == [] and capsys.readouterr().out == ""


def test_registry_trains_what_is_missing_saying_so_only_at_the_shipped_scale(toy, capsys):
    registry, trained = toy
    registry.pretrained("b", "smoke")  # the normal case below the shipped scale: silent
    assert capsys.readouterr().out == ""
    model, meta = registry.pretrained("b", "default")  # a shipped checkpoint is missing: say so
    out = capsys.readouterr().out
    assert out.startswith("[toy] checkpoint 'b'") and "does not exist: training 'b' instead" in out
    assert trained == [("b", "smoke"), ("b", "default")] and not model.training
    assert registry.measure("b", "default", model) == pytest.approx(meta.metrics)


def test_registry_retrains_a_stale_checkpoint_saying_why(toy, capsys):
    registry, trained = toy
    state, meta = registry.train("a", "smoke", False)
    save_checkpoint(registry.checkpoint_dir("smoke"), state, dataclasses.replace(meta, config_hash="0" * 16))
    with pytest.raises(StaleCheckpointError, match="another configuration"):
        registry.load("a", "smoke")
    registry.pretrained("a", "smoke")
    assert "another configuration" in capsys.readouterr().out and len(trained) == 2


def test_registry_load_checks_the_recorded_metrics_and_passes_context_to_build(toy):
    registry, _ = toy
    state, meta = registry.train("a", "default", False)
    save_checkpoint(registry.checkpoint_dir("default"), state, meta)
    registry.load("a", scale_by=1.0)
    with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded out"):
        registry.load("a", scale_by=0.9)
    with pytest.raises(MissingCheckpointError):
        registry.load("b")


def test_registry_rejects_bad_declarations_and_names(tmp_path):
    with pytest.raises(ValueError, match="names"):
        _registry(tmp_path, [], names=("a", "a"))
    with pytest.raises(ValueError, match="name"):
        _registry(tmp_path, [], names=("a/b",))
    with pytest.raises(ValueError, match="chapter"):
        _registry(tmp_path, [], chapter="my chapter")
    with pytest.raises(TypeError, match="meta_class"):
        _registry(tmp_path, [], meta_class=dict)
    with pytest.raises(TypeError, match="train"):
        _registry(tmp_path, [], train=None)
    registry = _registry(tmp_path, [])
    with pytest.raises(ValueError, match="name"):
        registry.pretrained("c")
    with pytest.raises(ValueError, match="scale"):
        registry.load("a", "huge")


def test_registry_write_keeps_fresh_checkpoints_trains_the_rest_and_checks_the_cap(toy, tmp_path, capsys):
    registry, trained = toy
    out = tmp_path / "out"
    written = registry.write(("a", "b"), "smoke", out, lambda name: registry.train(name, "smoke", False))
    assert [m.name for m in written] == ["a", "b"] and trained == [("a", "smoke"), ("b", "smoke")]
    again = registry.write(
        registry.chosen(None), "smoke", out, lambda name: registry.train(name, "smoke", False)
    )
    assert again == [] and len(trained) == 2  # both fresh: nothing retrained
    assert "a: fresh in" in capsys.readouterr().out
    (out / "b.pt").unlink()  # an interrupted run: b is missing
    assert [
        m.name for m in registry.write(("a", "b"), "smoke", out, lambda n: registry.train(n, "smoke", False))
    ] == ["b"]
    with pytest.raises(RuntimeError, match="over 10"):  # the shipped scale's checkpoints are package data
        registry.write(
            ("a",),
            "default",
            tmp_path / "shipped",
            lambda n: registry.train(n, "default", False),
            max_total=10,
        )
    # Another scale writes to the user cache, uncapped (a paper model may be as large as the paper's).
    assert registry.write(
        ("a",), "smoke", tmp_path / "big", lambda n: registry.train(n, "smoke", False), max_total=10
    )
    assert registry.chosen(["b"]) == ("b",)
    with pytest.raises(ValueError, match="only"):
        registry.chosen(["c"])
    with pytest.raises(TypeError, match="only"):
        registry.chosen("a")


def test_load_half_state_checks_the_layout_and_loads_in_the_models_dtypes():
    torch.manual_seed(0)
    trained = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    state = half_state(trained)
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    assert load_half_state("net", fresh, state) is fresh
    for key, value in fresh.state_dict().items():
        assert value.dtype == trained.state_dict()[key].dtype  # float32 weights, int64 counter
        assert torch.equal(value, state[key].to(value.dtype))
    with pytest.raises(StaleCheckpointError, match="net"):
        load_half_state("net", torch.nn.Linear(3, 5), half_state(torch.nn.Linear(3, 4)))


def test_model_row_lists_name_and_role(capsys):
    from neurips26.checkpoint_files import ModelRow, prepare_main

    rows = (ModelRow("a", "first model"), ModelRow("b", "second"))
    assert str(rows[0]) == "a  (first model)"
    assert prepare_main(["--list"], prog="p", description="d", models=rows, prepare=None) == 0
    assert capsys.readouterr().out.splitlines() == ["a  (first model)", "b  (second)"]


def test_only_rank_0_of_a_torchrun_group_writes_checkpoints(toy, tmp_path, monkeypatch):
    registry, trained = toy
    state, meta = _checkpoint()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    out = tmp_path / "rank1"
    assert save_checkpoint(out, state, meta) == out / "m.pt"  # where rank 0 writes it
    assert write_within_budget(out, state, meta) == 0 and check_directory_budget(out, 1) == 0
    registry.write(("a",), "smoke", out, lambda name: registry.train(name, "smoke", False))
    assert not out.exists() and trained == [("a", "smoke")]  # rank 1 trained alongside, wrote nothing
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    registry.write(("a",), "smoke", out, lambda name: registry.train(name, "smoke", False))
    assert sorted(p.name for p in out.iterdir()) == ["a.json", "a.pt"]


def test_caps_hold_for_package_data_only(tmp_path):
    state = half_state(torch.nn.Linear(800, 800))  # 1.28 MB in float16: over MAX_CHECKPOINT_BYTES
    meta = Meta("big", "h" * 16, source_fingerprint(FILES), {}, weights_hash(state))
    with pytest.raises(RuntimeError, match="over"):
        write_within_budget(tmp_path / "a", state, meta)
    assert write_within_budget(tmp_path / "b", state, meta, capped=False) > 1_000_000
    for k in range(5):  # 6.4 MB in all
        write_within_budget(tmp_path / "b", state, dataclasses.replace(meta, name=f"big{k}"), capped=False)
    with pytest.raises(RuntimeError, match="over"):
        check_directory_budget(tmp_path / "b", 6)
    assert check_directory_budget(tmp_path / "b", 6, capped=False) > 6_000_000


def test_prepare_main_trial_flag_sets_the_trial_environment(monkeypatch):
    from neurips26.checkpoint_files import ModelRow, prepare_main
    from neurips26.scales import TRIAL_ENV, trial_run

    monkeypatch.setenv(TRIAL_ENV, "0")  # recorded, so teardown undoes what prepare_main sets
    seen = []

    def prepare(scale, only=None, out=None):
        seen.append((scale, trial_run()))

    rows = [ModelRow("a", "a toy")]
    prepare_main(["--scale", "paper"], prog="p", description="d", models=rows, prepare=prepare)
    prepare_main(["--scale", "paper", "--trial"], prog="p", description="d", models=rows, prepare=prepare)
    assert seen == [("paper", False), ("paper", True)]
    monkeypatch.setenv(TRIAL_ENV, "yes")
    with pytest.raises(ValueError, match=TRIAL_ENV):
        trial_run()


def _plan_class(grown: bool):
    """The same configuration class before (``grown=False``) and after a field was added to it."""
    if grown:

        @dataclass(frozen=True)
        class Plan:
            lr: float = 1e-3
            windows: int = 48

    else:

        @dataclass(frozen=True)
        class Plan:
            lr: float = 1e-3

    return Plan


def test_committed_form_leaves_out_added_fields_at_their_committed_values():
    before, after = _plan_class(False)(), _plan_class(True)()
    assert config_hash(after) != config_hash(before)  # the added field alone would change every hash
    assert config_hash(committed_form(after, {"windows": 48})) == config_hash(before)
    moved = _plan_class(True)(windows=8)
    assert config_hash(committed_form(moved, {"windows": 48})) == config_hash(moved)


def test_no_test_leaks_what_code_under_test_writes_to_the_environment(tmp_path):
    """tests/conftest.py restores the environment after each test: run it on two tests in order, the first
    setting the trial flag the way ``prepare_main --trial`` does, the second reading it."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    shutil.copy(Path(__file__).parents[2] / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_order.py").write_text(
        "import os\n"
        "def test_a_sets():\n    os.environ['NEURIPS26_TRIAL'] = '1'\n"
        "def test_b_reads():\n    assert 'NEURIPS26_TRIAL' not in os.environ\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NEURIPS26_TRIAL"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
