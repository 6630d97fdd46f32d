"""The ``paper`` scale of chapter 06: its plan, the trial caps, per-rank loss noise, and a prior loss that
calls the module (a data-parallel wrapper included)."""

from __future__ import annotations

import pytest
import torch

from neurips26.picsb import picsb
from neurips26.picsb.baselines import dps
from neurips26.picsb.denoiser import DenoiserConfig
from neurips26.picsb.prepare import (
    MODEL_NAMES,
    PAPER_DATA,
    PAPER_PICSB,
    PRIOR_BUDGET,
    REGISTRY,
    PrepareConfig,
    split,
    trial_caps,
)
from neurips26.scales import TRIAL_ENV

# The committed (default) configuration hashes: the paper plan and the trial caps must leave them alone.
DEFAULT_HASHES = {
    "picsb": "754450b12581473c",
    "no-refresh": "2758e7dd9fd2224c",
    "no-pde": "61e3d3afee67abcc",
    "soft-obs": "591ec725357b809a",
    "lf-only": "1ed71775e9c6626e",
    "oracle": "e8a0d435ed6235f6",
    "dps-prior": "1f740fdcc60d606c",
}


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_paper_plan_grows_data_network_and_budget_but_keeps_the_problem(no_trial):
    default, paper = PrepareConfig.for_scale("default"), PrepareConfig.for_scale("paper")
    assert (paper.data, paper.picsb) == (PAPER_DATA, PAPER_PICSB)
    assert (paper.data.train, paper.data.validation, paper.data.test) == (8192, 256, 1024)
    assert (paper.picsb.rounds, paper.picsb.steps, paper.picsb.batch) == (5, 4000, 64)
    assert paper.picsb.denoiser.channels == (128, 256) and default.picsb.denoiser == DenoiserConfig()
    # the prior: the bridges' widths, four times their steps, their batch
    assert (paper.prior.channels, paper.prior.time_dim) == ((128, 256), paper.picsb.denoiser.time_dim)
    assert paper.prior.train_steps == PRIOR_BUDGET * 5 * 4000 and paper.prior.batch == 64
    # the twin experiment the claims are about: same PDE, sensors, seeds, refresh and loss weights
    assert (paper.data.burgers, paper.data.observations, paper.data.seed) == (
        default.data.burgers,
        default.data.observations,
        default.data.seed,
    )
    for name in ("sample_steps", "polish_steps", "kappa", "lr", "obs_weight", "residual_weight", "seed"):
        assert getattr(paper.picsb, name) == getattr(default.picsb, name), name
    assert default.prior == dps.PriorConfig(train_steps=4 * 3 * 800)  # the committed prior's config


def test_default_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name in MODEL_NAMES:
        assert REGISTRY.expected_hash(name, "default") == DEFAULT_HASHES[name]
        assert REGISTRY.expected_hash(name, "paper") != DEFAULT_HASHES[name]


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain = PrepareConfig.for_scale(scale)
    plain_hashes = {name: REGISTRY.expected_hash(name, scale) for name in MODEL_NAMES}
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = PrepareConfig.for_scale(scale)
    assert trial == trial_caps(plain)
    assert (trial.data.train, trial.data.validation, trial.data.test) == (8, 4, 4)
    assert (trial.picsb.rounds, trial.picsb.steps, trial.picsb.batch) == (1, 1, 4)
    assert (trial.picsb.sample_steps, trial.picsb.polish_steps) == (2, 2)
    assert (trial.prior.train_steps, trial.prior.batch) == (1, 4)
    assert trial.picsb.denoiser == plain.picsb.denoiser and trial.prior.channels == plain.prior.channels
    assert len(split("validation", scale)) == 4  # the freshness metric's cases
    for name in MODEL_NAMES:  # never taken for a real checkpoint
        assert REGISTRY.expected_hash(name, scale) != plain_hashes[name]


def test_loss_noise_is_the_batch_stream_in_one_process_and_per_rank_under_torchrun(monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    batches = torch.Generator().manual_seed(3)
    assert picsb.loss_generator(batches, 3) is batches
    draws = []
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        noise = picsb.loss_generator(batches, 3)
        assert noise is not batches
        draws.append(torch.rand(4, generator=noise))
    assert not torch.equal(draws[0], draws[1])
    assert not torch.equal(draws[0], torch.rand(4, generator=torch.Generator().manual_seed(3)))


def test_initial_surrogates_in_chunks_equal_one_solve(monkeypatch):
    data = split("validation", "smoke")
    whole = picsb.initial_surrogates(data.x1, data.y, data.mask)
    monkeypatch.setattr(picsb, "SURROGATE_CHUNK", 3)
    chunked = picsb.initial_surrogates(data.x1, data.y, data.mask)
    torch.testing.assert_close(chunked, whole, rtol=0, atol=1e-6)
    assert torch.equal(chunked[data.mask], data.y[data.mask])


def _reference_prior_loss(prior, x0, generator):
    """The prior's loss as written before it read the schedule off the unwrapped module."""
    n = torch.randint(prior.config.diffusion_steps, (x0.shape[0],), generator=generator)
    noise = torch.randn(x0.shape, generator=generator, dtype=x0.dtype)
    a = prior.alpha_bars[n].to(x0.dtype)[:, None, None]
    return (prior(a.sqrt() * x0 + (1.0 - a).sqrt() * noise, n) - noise).square().mean()


def test_prior_loss_calls_the_module_and_takes_a_data_parallel_wrapper(tmp_path):
    config = dps.PriorConfig(channels=(8, 8), time_dim=8, groups=4)
    prior = dps.Prior(config, seed=0)
    x0 = torch.randn(4, *config.burgers.shape, generator=torch.Generator().manual_seed(1))
    want = _reference_prior_loss(prior, x0, torch.Generator().manual_seed(5))
    calls = []
    prior.register_forward_hook(lambda module, args, out: calls.append(1))
    assert torch.equal(dps.prior_loss(prior, x0, torch.Generator().manual_seed(5)), want)
    assert calls == [1]
    store = f"file://{tmp_path / 'store'}"
    torch.distributed.init_process_group("gloo", init_method=store, rank=0, world_size=1)
    try:
        wrapper = torch.nn.parallel.DistributedDataParallel(prior)
        got = dps.prior_loss(wrapper, x0, torch.Generator().manual_seed(5))
    finally:
        torch.distributed.destroy_process_group()
    assert torch.equal(got, want) and calls == [1, 1]


def test_a_trial_bridge_trains_on_the_paper_network(monkeypatch):
    """One round of one update at the paper widths, refreshed: the sensors stay exact in the surrogates."""
    monkeypatch.setenv(TRIAL_ENV, "1")
    config = PrepareConfig.for_scale("paper")
    data = split("train", "paper")
    result = picsb.train_picsb(data.training_set(), config.picsb)
    assert len(result.losses) == 1 and result.model.parameter_count() == 2_176_288
    assert torch.equal(result.surrogates[data.mask], data.y[data.mask])
