"""The ``paper`` plan of the ATISS-style decoder: it grows the model and the corpus, a trial run caps it to
one update on a 16-layout corpus, and the default and smoke plans hash as their checkpoints record."""

import json
import pickle

import pytest
import torch

from neurips26.iohp import prepare as P
from neurips26.iohp.baselines.atiss import (
    ATISS_CONFIG,
    atiss_model,
    category_count_correlation,
    train_atiss,
    validation_nll,
)
from neurips26.iohp.corpus import build_corpus
from neurips26.scales import TRIAL_ENV


def test_paper_plan_grows_the_decoder_and_the_corpus():
    default, paper = P.plan_for("default"), P.plan_for("paper")
    assert paper == P.PAPER_PLAN and default == P.AtissPlan()
    assert paper.corpus == 10 * default.corpus and paper.steps > default.steps and paper.batch > default.batch
    assert (paper.config.width, paper.config.depth, paper.config.heads) == (512, 4, 8)
    assert paper.config.width * paper.config.mlp_ratio == 1024  # ATISS's feed-forward width
    assert paper.config.context == ATISS_CONFIG.context and default.config == ATISS_CONFIG
    assert atiss_model(paper.config).num_parameters() == 8_620_544
    assert P.expected_hash(P.NAME, "paper") != P.expected_hash(P.NAME, "default")


def test_default_and_smoke_hash_as_before():
    """The fields added for ``paper`` leave the default and smoke hashes as they were (the committed
    checkpoint records the default's)."""
    recorded = json.loads((P.PACKAGE_DIR / f"{P.NAME}.json").read_text())["config_hash"]
    assert P.expected_hash(P.NAME, "default") == recorded == "cb1e26f6179d63b6"
    assert P.expected_hash(P.NAME, "smoke") == "debb893c72a625d7"


def test_workers_do_not_enter_the_hash_and_warmup_does(monkeypatch):
    base = P.plan_for("default")
    monkeypatch.setattr(P, "plan_for", lambda scale: P.AtissPlan(workers=8))
    assert P.expected_hash(P.NAME, "default") == "cb1e26f6179d63b6"
    monkeypatch.setattr(P, "plan_for", lambda scale: P.AtissPlan(warmup=10))
    assert P.expected_hash(P.NAME, "default") != "cb1e26f6179d63b6"
    assert base.warmup == 50


def test_trial_caps_apply_at_every_scale(monkeypatch):
    paper_hash = P.expected_hash(P.NAME, "paper")
    monkeypatch.setenv(TRIAL_ENV, "1")
    for scale in ("smoke", "default", "paper"):
        plan = P.plan_for(scale)
        assert (plan.corpus, plan.steps, plan.batch, plan.warmup, plan.workers) == (16, 1, 8, 0, 1)
    assert P.plan_for("paper").config == P.PAPER_CONFIG  # the model keeps its paper size
    assert P.expected_hash(P.NAME, "paper") != paper_hash
    assert P.expected_hash(P.NAME, "default") != "cb1e26f6179d63b6"
    assert len(P.check_layouts("paper")) == 2


@pytest.mark.slow
def test_a_corpus_built_in_processes_is_the_serial_one():
    serial = build_corpus(5, cache=False)
    parallel = build_corpus(5, cache=False, workers=2)
    assert [pickle.dumps(c) for c in parallel] == [pickle.dumps(c) for c in serial]


def test_workers_must_be_a_count():
    with pytest.raises(ValueError, match="workers"):
        build_corpus(4, cache=False, workers=-1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_training_and_measurements_run_on_the_gpu(monkeypatch):
    monkeypatch.setenv("NEURIPS26_DEVICE", "cuda")
    corpus = build_corpus(16, cache=False)
    run = train_atiss(corpus, 2, 0, batch=8, warmup=0, eval_every=1)
    assert next(run.model.parameters()).is_cuda
    held_out = [corpus[i] for i in run.validation]
    on_cpu = validation_nll(run.model.cpu(), held_out)
    assert validation_nll(run.model.cuda(), held_out) == pytest.approx(on_cpu, abs=1e-4)
    assert category_count_correlation(run.model, held_out, 0).mean_objects[1] > 0
