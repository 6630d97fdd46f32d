"""The ``paper`` scale of chapter 07: its plan, the trial caps, losses that call the module, the training
memory built in chunks, and the results cache on the non-shipped scales."""

import dataclasses

import pytest
import torch
from torch import nn

from neurips26 import distributed
from neurips26.jag import experiments, scenes
from neurips26.jag import prepare as P
from neurips26.jag.diffusion_forcing import Clips, df_loss, truth_memory
from neurips26.jag.model import JAGConfig, JAGModel
from neurips26.jag.self_forcing import STUDENT_LEVELS, TEACHER_STEPS, ode_loss
from neurips26.scales import TRIAL_ENV

# The committed (default) configuration hashes: the paper plan and the trial caps must leave them alone.
DEFAULT_HASHES = {
    "teacher": "18fd8f7a3ff345a5",
    "tf": "d38f769d5f4407b0",
    "df": "e2e2d9f572c14998",
    "sf-rgb": "27f8b2abde878a2a",
    "jag-nosgf": "0a353cc4770785e8",
    "jag-tfmem": "306509e0c393ec85",
    "jag-sgf": "28dba57b66b13da6",
    "jag-sgf-noreward": "598a6efa22ff57ae",
}
COMMITTED_TEACHER = "f61a995ad327be66"  # the committed teacher's weights hash, in every student's hash


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_paper_plan_grows_frames_network_data_and_budgets(no_trial):
    default, paper = P.PrepareConfig.for_scale("default"), P.PrepareConfig.for_scale("paper")
    assert paper == P.PAPER and default == P.PrepareConfig()
    assert paper.data == scenes.DataConfig.for_scale("paper") != scenes.DataConfig.for_scale("default")
    data = paper.data
    assert (data.train_clips, data.train_frames, data.eval_clips, data.eval_frames) == (4096, 16, 64, 48)
    assert (default.data.size, data.size) == (16, 32)
    assert (default.memory_resolution, paper.memory_resolution) == (16, 32)
    assert (paper.width, paper.depth, paper.heads) == (128, 6, 4)
    assert (paper.teacher_steps, paper.base_steps, paper.batch, paper.warmup) == (20_000, 10_000, 32, 500)
    assert (paper.ode_clips, paper.ode_steps, paper.distill_steps, paper.distill_batch) == (
        512,
        2000,
        1000,
        8,
    )
    assert paper.self_forcing == default.self_forcing and paper.precision == "bf16"
    teacher = P.model_spec("teacher")
    big = JAGModel(paper.model_config(teacher))
    assert big.config.image_size == (32, 32) and big.parameter_count() == 3_691_488
    # the default network is the one the committed checkpoints hold
    assert default.model_config(teacher) == JAGConfig(causal=False, pixel_skip=True)


def test_default_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name, committed in DEFAULT_HASHES.items():
        teacher = "" if P.model_spec(name).base else COMMITTED_TEACHER
        assert P.expected_hash(name, "default", teacher) == committed, name
        assert P.expected_hash(name, "paper", teacher) != committed, name


def test_added_fields_enter_the_hash_only_when_they_leave_their_committed_values(no_trial):
    default = P.PrepareConfig()
    assert all(getattr(default, name) == value for name, value in P.GROWTH_FIELDS.items())
    assert not set(P.GROWTH_FIELDS) & set(P.hash_form(default))
    changed = {"depth": 4, "heads": 2, "warmup": 10, "ode_teacher_steps": 8, "precision": "bf16"}
    assert set(changed) == set(P.GROWTH_FIELDS)
    for name, value in changed.items():
        assert P.hash_form(dataclasses.replace(default, **{name: value}))[name] == value
    with pytest.raises(ValueError, match="precision"):
        P.PrepareConfig(precision="fp8")


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain = P.PrepareConfig.for_scale(scale)
    plain_hash = P.expected_hash("teacher", scale)
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = P.PrepareConfig.for_scale(scale)
    assert trial == P.trial_caps(plain)
    assert (trial.teacher_steps, trial.base_steps, trial.ode_steps, trial.distill_steps) == (1, 1, 1, 1)
    assert (trial.batch, trial.warmup, trial.train_clips, trial.ode_clips, trial.distill_batch) == (
        2,
        0,
        2,
        2,
        2,
    )
    assert (trial.ode_teacher_steps, trial.self_forcing.critic_updates) == (1, 1)
    assert (
        trial.data.train_clips,
        trial.data.train_frames,
        trial.data.eval_clips,
        trial.data.eval_frames,
    ) == (
        2,
        2,
        2,
        2,
    )
    spec = P.model_spec("jag-sgf")
    assert trial.model_config(spec) == plain.model_config(spec)  # the networks and frames keep their sizes
    assert trial.memory_resolution == plain.memory_resolution
    assert P.expected_hash("teacher", scale) != plain_hash  # never taken for a real checkpoint


class _Wrapper(nn.Module):
    """Stands in for DistributedDataParallel: a module without ``config`` whose forward is the model's."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module
        self.calls = 0

    def forward(self, *args, **kwargs):
        self.calls += 1
        return self.module(*args, **kwargs)


@pytest.fixture
def wrapped(monkeypatch):
    monkeypatch.setattr(distributed, "unwrap", lambda m: m.module if isinstance(m, _Wrapper) else m)
    return _Wrapper


def _clips(batch: int = 2, frames: int = 3, memory: bool = True) -> Clips:
    g = torch.Generator().manual_seed(3)
    rgb = torch.rand(batch, frames, 3, 16, 16, generator=g) * 2 - 1
    log_depth = torch.randn(batch, frames, 1, 16, 16, generator=g)
    valid = torch.rand(batch, frames, 1, 16, 16, generator=g) > 0.2
    plucker = torch.randn(batch, frames, 16, 6, generator=g)
    mem = None
    if memory:
        mem = (torch.rand_like(rgb), torch.randn_like(log_depth), (torch.rand_like(log_depth) > 0.5).float())
    return Clips(rgb, log_depth, valid, plucker, mem)


@pytest.mark.parametrize(
    ("mode", "config"),
    [
        ("teacher", JAGConfig(width=16, depth=1, heads=2, causal=False, pixel_skip=True)),
        ("df", JAGConfig(width=16, depth=1, heads=2, memory=False, pixel_skip=True)),
        ("tf", JAGConfig(width=16, depth=1, heads=2, geometry=False, memory=False, pixel_skip=True)),
    ],
)
def test_df_loss_calls_the_module_once_and_reads_its_config_inside(mode, config, wrapped):
    model = JAGModel(config, seed=1)
    clips = _clips(memory=config.memory)
    want = df_loss(model, clips, mode, torch.Generator().manual_seed(7))
    net = wrapped(model)
    got = df_loss(net, clips, mode, torch.Generator().manual_seed(7))
    assert net.calls == 1 and torch.equal(got, want)


@pytest.mark.parametrize("geometry", [True, False])
def test_ode_loss_calls_the_module_once_and_reads_its_config_inside(geometry, wrapped):
    model = JAGModel(JAGConfig(width=16, depth=1, heads=2, geometry=geometry, pixel_skip=True), seed=1)
    clips = _clips()
    ends = (clips.rgb, clips.log_depth)
    states = {t: (clips.rgb * (1 - t), clips.log_depth * (1 - t)) for t in STUDENT_LEVELS}
    want = ode_loss(model, states, ends, clips.plucker, torch.Generator().manual_seed(2), memory=clips.memory)
    net = wrapped(model)
    got = ode_loss(net, states, ends, clips.plucker, torch.Generator().manual_seed(2), memory=clips.memory)
    assert net.calls == 1 and torch.equal(got, want)


def test_training_memory_built_in_chunks_equals_one_build(monkeypatch):
    batch = scenes.make_dataset(5, 3, 11, size=16)
    whole = truth_memory(batch.rgb, batch.log_depth, batch.valid, batch.poses, batch.K, batch.bounds)
    monkeypatch.setattr(P, "MEMORY_CHUNK", 2)
    chunked = P._truth_memory(batch, 16, torch.device("cpu"))
    assert all(torch.equal(a, b) for a, b in zip(chunked, whole, strict=True))


def test_clips_on_the_same_device_keeps_the_tensors():
    clips = _clips()
    moved = P.clips_on(clips, "cpu")
    assert moved.rgb is clips.rgb and moved.memory[0] is clips.memory[0]


def test_voxel_resolution_follows_the_frames():
    assert (P.voxel_resolution(16), P.voxel_resolution(32)) == (16, 32)
    clips = scenes.make_dataset(1, 2, 5, size=16)
    assert experiments.self_memory(clips).memory.resolution == 16
    assert TEACHER_STEPS == P.PrepareConfig().ode_teacher_steps


def test_only_the_shipped_scale_trains_outside_the_results_cache(no_trial, monkeypatch, tmp_path):
    class Trained(Exception):
        pass

    def direct(name, scale, progress=True):
        raise Trained(("direct", scale))

    def through_cache(name, scale, verbose):
        raise Trained(("cached", scale))

    monkeypatch.setattr(P, "train_model", direct)
    monkeypatch.setattr(P, "_trained", through_cache)
    seen = []
    for scale in ("default", "paper", "smoke"):
        with pytest.raises(Trained) as why:
            P.prepare(scale, only=["tf"], out=tmp_path / scale, progress=False)
        seen.append(why.value.args[0])
    assert seen == [("direct", "default"), ("cached", "paper"), ("cached", "smoke")]
