"""The ``paper`` scale of chapter 04: its plan, the trial caps, and a training objective that calls the
module (a data-parallel wrapper included) with the values of the objective as written before."""

from __future__ import annotations

import json
import math

import pytest
import torch

from neurips26.scales import TRIAL_ENV
from neurips26.skae.data import DataConfig, FlowRequest, _flow_request
from neurips26.skae.losses import LossWeights, check_windows, default_weights, kae_loss, loss_terms
from neurips26.skae.model import KAE
from neurips26.skae.prepare import (
    MODEL_NAMES,
    PACKAGE_DIR,
    PAPER,
    REGISTRY,
    TRIAL_POOL,
    PrepareConfig,
    model_spec,
    model_table,
    trial_caps,
    validation_metrics,
)
from neurips26.skae.systems import HardPoolConfig, make_system

# Two smoke hashes as recorded before the paper scale existed (the default ones are in the sidecars).
SMOKE_HASHES = {"lista-square-4-s0": "c355909275ca34ea", "topk-square-4-s0": "7c7efeb88e898586"}


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_paper_plan_is_the_papers_protocol_on_the_same_table(no_trial):
    default, paper = PrepareConfig.for_scale("default"), PrepareConfig.for_scale("paper")
    assert default == PrepareConfig() and paper == PAPER
    assert (paper.latent, paper.batch, paper.steps, paper.flow_steps) == (256, 256, 200_000, 100_000)
    assert (paper.lr, paper.lr * paper.k_lr_scale, paper.weight_decay) == (5e-5, 5e-5 * 0.1, 1e-4)
    assert (paper.flow_trajectories, paper.flow_length, paper.flow_warmup) == (200, 30_000, None)
    assert paper.pool == default.pool == HardPoolConfig() and paper.val_windows == default.val_windows
    assert model_table("paper") == model_table("default") and len(model_table("paper")) == 109
    controlled, flow = model_spec("lista-square-4-s0"), model_spec("lista-lorenz-63-s1")
    assert (paper.steps_for(controlled), paper.steps_for(flow)) == (200_000, 100_000)
    assert default.steps_for(controlled) == default.steps_for(flow) == 1500
    assert paper.data(flow).warmup is None and make_system("lorenz-63").warmup == 2000


def test_default_and_smoke_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name in MODEL_NAMES:
        sidecar = json.loads((PACKAGE_DIR / f"{name}.json").read_text())
        assert REGISTRY.expected_hash(name, "default") == sidecar["config_hash"], name
        assert REGISTRY.expected_hash(name, "paper") != sidecar["config_hash"], name
    for name, recorded in SMOKE_HASHES.items():
        assert REGISTRY.expected_hash(name, "smoke") == recorded


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain = PrepareConfig.for_scale(scale)
    plain_hashes = {name: REGISTRY.expected_hash(name, scale) for name in MODEL_NAMES[::9]}
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = PrepareConfig.for_scale(scale)
    assert trial == trial_caps(plain) and trial.latent == plain.latent and trial.lr == plain.lr
    flow = model_spec("dense-mlp-lorenz-96-s2")
    assert (trial.steps_for(flow), trial.steps_for(model_spec("topk-square-4-s0")), trial.batch) == (1, 1, 4)
    assert (trial.val_starts, trial.val_horizon, trial.val_windows) == (2, 10, 4)
    data = trial.data(flow)
    assert (data.flow_trajectories, data.flow_length, data.warmup) == (2, 20, 20)
    assert (
        _flow_request(data).system.warmup == 20
        and trial.data(model_spec("lista-square-4-s0")).pool == TRIAL_POOL
    )
    for name, plain_hash in plain_hashes.items():  # never taken for a real checkpoint
        assert REGISTRY.expected_hash(name, scale) != plain_hash


def test_a_warmup_cut_rolls_a_shorter_warmup_and_none_keeps_the_flows(no_trial):
    own = DataConfig("sakarya", seed=1, flow_trajectories=2, flow_length=20)
    assert own.dynamics() == make_system("sakarya")
    cut = DataConfig("sakarya", seed=1, flow_trajectories=2, flow_length=20, warmup=3)
    assert cut.dynamics().warmup == 3 and DataConfig("square-4", warmup=3).dynamics() == make_system(
        "square-4"
    )
    assert isinstance(_flow_request(cut), FlowRequest) and _flow_request(own).system.warmup == 2000


def _reference_terms(model: KAE, windows: torch.Tensor) -> dict[str, torch.Tensor]:
    """The unweighted terms as written before the objective called the module."""
    x = check_windows(model, windows)
    batch, length, dim = x.shape[0], x.shape[1] - 1, x.shape[2]
    z_enc = model.encode(x)
    k_t = model.transition_matrix().T
    rolled = []
    z = z_enc[:, 0]
    for _ in range(length):
        z = z @ k_t
        rolled.append(z)
    z_roll = torch.stack(rolled, dim=1)
    future = x[:, 1:]
    x_hat = model.decode(z_roll)
    x_rec = model.decode(z_enc[:, 1:])
    count = batch * length
    return {
        "pred": torch.linalg.vector_norm(x_hat - future, dim=-1).sum() / (count * math.sqrt(dim)),
        "rec": torch.linalg.vector_norm(x_rec - future, dim=-1).sum() / (count * math.sqrt(dim)),
        "lin": torch.linalg.vector_norm(z_roll - z_enc[:, 1:], dim=-1).sum() / count,
        "sp": z_roll.abs().sum() / count,
        "off": model.offblock_penalty(),
    }


def _reference_loss(model: KAE, windows: torch.Tensor, weights: LossWeights) -> torch.Tensor:
    terms = _reference_terms(model, windows)
    total = (
        weights.pred * terms["pred"]
        + weights.rec * terms["rec"]
        + weights.lin * terms["lin"]
        + weights.sp * terms["sp"]
    )
    return total + weights.off * terms["off"] if weights.off else total


KINDS = [
    {"encoder": "lista", "transition": "dense"},
    {"encoder": "lista", "transition": "block", "blocks": 4},
    {"encoder": "lista", "transition": "softblock", "blocks": 3},
    {"encoder": "mlp_sparse", "transition": "dense"},
    {"encoder": "mlp_dense", "transition": "dense"},
    {"encoder": "topk", "transition": "dense", "k": 4},
]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k['encoder']}-{k['transition']}")
def test_the_objective_calls_the_module_with_the_values_and_gradients_as_before(kind):
    model = KAE(latent=16, state_dim=3, seed=2, **kind)
    windows = torch.randn(5, 9, 3, generator=torch.Generator().manual_seed(7))
    weights = default_weights(model)
    want = _reference_loss(model, windows, weights)
    want_grads = torch.autograd.grad(want, list(model.parameters()))
    calls = []
    model.register_forward_hook(lambda module, args, out: calls.append(1))
    got = kae_loss(model, windows, weights)
    grads = torch.autograd.grad(got, list(model.parameters()))
    assert torch.equal(got, want) and calls == [1]
    assert all(torch.equal(a, b) for a, b in zip(grads, want_grads, strict=True))
    terms, reference = loss_terms(model, windows), _reference_terms(model, windows)
    assert all(torch.equal(terms[k], reference[k]) for k in reference)
    assert torch.equal(model(windows[:, 0]), model.decode(model.step(model.encode(windows[:, 0]))))


def test_the_objective_takes_a_data_parallel_wrapper(tmp_path):
    model = KAE("lista", "softblock", 16, state_dim=2, blocks=4, seed=1)
    windows = torch.randn(4, 9, 2, generator=torch.Generator().manual_seed(3))
    want = _reference_loss(model, windows, default_weights(model))
    calls = []
    model.register_forward_hook(lambda module, args, out: calls.append(1))
    store = f"file://{tmp_path / 'store'}"
    torch.distributed.init_process_group("gloo", init_method=store, rank=0, world_size=1)
    try:
        wrapper = torch.nn.parallel.DistributedDataParallel(model)
        got = kae_loss(wrapper, windows)  # default weights read off the module inside
        got.backward()
    finally:
        torch.distributed.destroy_process_group()
    assert torch.equal(got, want) and calls == [1]
    assert model.transition.K.grad is not None


def test_trial_validation_is_small_and_runs_on_the_paper_model(monkeypatch):
    monkeypatch.setenv(TRIAL_ENV, "1")
    config = PrepareConfig.for_scale("paper")
    spec = model_spec("lista-shimizu-morioka-s0")
    model = KAE(latent=config.latent, state_dim=3, seed=0)
    metrics = validation_metrics(spec, model, config)
    assert set(metrics) == {"val_loss", "val_mse"} and all(math.isfinite(v) for v in metrics.values())
