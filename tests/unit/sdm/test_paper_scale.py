"""The ``paper`` scale of the recall models: Zoology-sized MQAR and a longer run, trial caps, and the default
task's data, weights and hashes exactly as before the task became a parameter."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from neurips26.checkpoint_files import weights_hash
from neurips26.scales import TRIAL_ENV
from neurips26.sdm import prepare as P
from neurips26.sdm.data import (
    FACT_ALPHABET,
    VOCAB_SIZE,
    fact_table,
    recall_batch,
    sequence_length,
    training_batch,
    vocab_size,
)
from neurips26.sdm.models import REFERENCE, MixerSpec, RecallModel, flops_per_token
from neurips26.sdm.training import (
    PAPER_TASK,
    TaskSpec,
    TrainSpec,
    batch_loss,
    eval_pairs,
    evaluate,
    task_for,
    train_model,
)


def _fingerprint(*tensors: torch.Tensor) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def test_paper_plan_differs_from_default():
    default, paper = TrainSpec.for_scale("default"), TrainSpec.for_scale("paper")
    assert paper.steps > default.steps and paper.batch_size > default.batch_size
    assert paper.warmup > default.warmup
    assert (paper.lr, paper.weight_decay) == (default.lr, default.weight_decay)
    assert paper.pairs == eval_pairs("paper") == (8, 16, 32, 64)
    assert task_for("default") == task_for("smoke") == TaskSpec() and task_for("paper") == PAPER_TASK
    assert PAPER_TASK.vocab_size == 256 + 2 * FACT_ALPHABET and sequence_length(64) <= PAPER_TASK.context
    assert P.train_at("gdn-long", "paper").steps == 4 * paper.steps
    assert P.spec_at("sdm-n1024", "paper") == P.spec_at("sdm-n1024", "default")  # the same fifteen rows


def test_default_and_smoke_hashes_are_the_committed_ones():
    for name in P.NAMES:
        sidecar = P.PACKAGE_DIR / f"{name}.json"
        if sidecar.exists():
            assert P.expected_hash(name, "default") == json.loads(sidecar.read_text())["config_hash"], name
        assert P.expected_hash(name, "paper") != P.expected_hash(name, "default")
    assert P.expected_hash("gdn-s0", "smoke") == "33572331458c6d6b"


def test_trial_caps(monkeypatch):
    paper_hash = P.expected_hash("gdn-long", "paper")
    monkeypatch.setenv(TRIAL_ENV, "1")
    for name in ("gdn-long", "sdm-s0"):
        train = P.train_at(name, "paper")
        assert (train.steps, train.warmup, train.batch_size) == (1, 0, 8)
        assert train.pairs == (8, 16, 32, 64)
    assert P.validation_size() == P.TRIAL_VALIDATION_SIZE < P.VALIDATION_SIZE
    assert P.expected_hash("gdn-long", "paper") != paper_hash


def test_default_task_data_and_weights_are_unchanged():
    """Fingerprints taken before the vocabulary and the context became parameters."""
    b = recall_batch(4, 16, 7)
    assert _fingerprint(b.inputs, b.targets, b.context_mask, b.fact_mask) == "9522771a2e43dbe4"
    t = training_batch(5, batch_size=8, seed=3)
    assert _fingerprint(t.inputs, t.targets, t.context_mask, t.fact_mask) == "7f869372b9b3254e"
    assert _fingerprint(torch.from_numpy(fact_table())) == "b968047f715759f4"
    expected = {"gdn": "f900a57f6d763606", "sdm": "1713090a21b60bd6", "attention": "94912748a32d2541"}
    for kind, expected_hash in expected.items():
        spec = REFERENCE if kind == "sdm" else MixerSpec(kind, heads=4 if kind == "attention" else 2)
        assert weights_hash(RecallModel(spec, seed=3).state_dict()) == expected_hash, kind
    assert vocab_size() == VOCAB_SIZE == b.vocab_size


def test_paper_task_batches_and_models():
    b = recall_batch(3, 64, 1, mqar_vocab=256)
    assert b.inputs.shape == (3, sequence_length(64)) and b.mqar_vocab == 256
    assert int(b.targets.max()) < PAPER_TASK.vocab_size
    keys = b.inputs[:, 0 : 2 * 64 : 2]
    assert int(keys.max()) < 128 and all(len(set(row.tolist())) == 64 for row in keys)
    facts = b.inputs[:, -11:]  # g1 g2 v g1 g2 v g1 g2 v g1 g2 (the last v is a target)
    assert int(facts[:, 0].min()) >= 256 and int(facts[:, 1].min()) >= 256 + FACT_ALPHABET
    assert int(fact_table(256).min()) >= 128 and int(fact_table(256).max()) < 256
    model = RecallModel(MixerSpec("attention", heads=4), vocab=PAPER_TASK.vocab_size, context=160)
    assert model(b.inputs).shape == (3, sequence_length(64), PAPER_TASK.vocab_size)
    assert flops_per_token(model)["head"] == 64 * PAPER_TASK.vocab_size
    result = evaluate(model, (8, 64), size=2)
    assert set(result) == {8, 64} and 0.0 <= result[64]["context"] <= 1.0
    with pytest.raises(ValueError, match="positions"):
        RecallModel(MixerSpec("gdn"))(b.inputs)  # the default context holds 64 tokens


def test_task_checks():
    with pytest.raises(ValueError, match="mqar_vocab"):
        TaskSpec(mqar_vocab=63)
    with pytest.raises(ValueError, match="pairs"):
        TaskSpec().check_pairs((32,))  # 32 pairs need 91 positions
    with pytest.raises(ValueError, match="n_pairs"):
        recall_batch(2, 40, 0)
    TaskSpec().check_pairs((4, 8, 12, 16))
    PAPER_TASK.check_pairs((8, 16, 32, 64))


def test_one_paper_update_trains_on_the_paper_task(monkeypatch):
    monkeypatch.setenv("NEURIPS26_DEVICE", "cpu")
    train = TrainSpec(steps=1, batch_size=4, warmup=0, pairs=(64,))
    model, curves, _ = train_model(MixerSpec("sdm", slots=64), train, seed=0, task=PAPER_TASK, progress=False)
    assert model.vocab == PAPER_TASK.vocab_size and len(curves["loss"]) == 1
    batch = training_batch(0, batch_size=4, seed=1, pairs=(64,), mqar_vocab=256)
    assert torch.isfinite(batch_loss(model, batch))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_training_and_evaluation_run_on_the_gpu(monkeypatch):
    monkeypatch.setenv("NEURIPS26_DEVICE", "cuda")
    train = TrainSpec(steps=2, batch_size=8, warmup=0, pairs=(8, 16))
    model, _, _ = train_model(MixerSpec("sdm"), train, seed=0, task=PAPER_TASK, progress=False)
    assert next(model.parameters()).is_cuda
    on_gpu = evaluate(model, (8,), size=8)
    on_cpu = evaluate(model.cpu(), (8,), size=8)
    assert on_gpu[8]["loss"] == pytest.approx(on_cpu[8]["loss"], abs=1e-3)
