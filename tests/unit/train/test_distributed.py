"""Data-parallel ``fit`` under torchrun (two gloo ranks on the CPU) and ``neurips26.distributed``."""

import os
import runpy
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch
from torch import nn

from neurips26 import distributed
from neurips26.distributed import World
from neurips26.train import fit

# A tiny float64 MLP, 5 AdamW steps on global batches of 8 (rows drawn from the step), no dropout: two
# ranks with 4 rows each must reach the parameters of one process with all 8. Rank 0 saves through
# main_only; the file name carries the rank that wrote it. "fail": rank 1 raises at step 2.
SCRIPT = textwrap.dedent(
    """
    import os
    import sys

    import torch
    from torch import nn
    from torch.distributed.elastic.multiprocessing.errors import record

    from neurips26 import distributed
    from neurips26.train import fit

    torch.set_num_threads(1)
    STEPS, BATCH = 5, 8


    def build():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1)).double()


    def batches(step):
        g = torch.Generator().manual_seed(1000 + step)
        x = torch.randn(BATCH, 4, generator=g, dtype=torch.float64)
        return x, torch.sin(x.sum(dim=1, keepdim=True))


    def make_loss(mode):
        def loss_fn(model, batch):
            x, y = batch
            if mode == "fail" and distributed.world().rank == 1 and loss_fn.calls == 2:
                raise ValueError("an injected failure")
            loss_fn.calls += 1
            return nn.functional.mse_loss(model(x), y)

        loss_fn.calls = 0
        return loss_fn


    def train(mode="ok", micro=1):
        model = build()
        history = fit(
            model, make_loss(mode), batches, steps=STEPS, seed=0, lr=1e-2, progress=False,
            micro_batches=micro,
        )
        return model, history


    class Gated(nn.Module):
        # "extra" joins the output on even steps only (the step rides in the batch): odd steps leave it out.
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.body = nn.Linear(4, 1).double()
            self.extra = nn.Linear(4, 1).double()

        def forward(self, x, use):
            return self.body(x) + (self.extra(x) if use else 0.0)


    def gated_batches(step):
        x, y = batches(step)
        return x, y, torch.tensor(step % 2 == 0)


    def train_gated():
        # AdamW skips "extra" on odd steps in one process (no gradient); DDP must leave it missing too.
        def loss_fn(model, batch):
            x, y, use = batch
            return nn.functional.mse_loss(model(x, bool(use)), y)

        model = Gated()
        fit(
            model, loss_fn, gated_batches, steps=STEPS, seed=0, lr=1e-2, weight_decay=0.1,
            progress=False, find_unused_parameters=True,
        )
        return model


    def main_first_result(out):
        # rank 0 builds (writes a marker) while rank 1 waits; rank 1 then finds the marker
        marker = os.path.join(os.path.dirname(out), os.path.basename(out) + "-built")

        def build(first):
            if first:
                with open(marker, "w") as f:
                    f.write("built")
                return "built"
            assert os.path.exists(marker), "rank 1 ran before rank 0 had built"
            return "read"

        return distributed.main_first(build)


    def bypass_message():
        # A loss_fn that calls the module inside the DDP wrapper skips DDP's forward: a clear error.
        def loss_fn(model, batch):
            x, y = batch
            return nn.functional.mse_loss(distributed.unwrap(model)(x), y)

        try:
            fit(build(), loss_fn, batches, steps=1, seed=0, progress=False)
        except distributed.RankFailed as error:
            return str(error)
        return None


    @record
    def main(out, mode):
        model, history = train(mode)
        accumulated, _ = train(mode, micro=2)  # 2 ranks x 2 micro-batches of 2 rows
        message = bypass_message()
        gated = train_gated()
        me = distributed.world()
        assert main_first_result(out) == ("built" if me.rank == 0 else "read")

        @distributed.main_only
        def save():
            state = {k: v.clone() for k, v in model.state_dict().items()}
            payload = {"state": state, "loss": history.loss, "seen": history.seen, "bypass": message}
            payload["accumulated"] = {k: v.clone() for k, v in accumulated.state_dict().items()}
            payload["gated"] = {k: v.clone() for k, v in gated.state_dict().items()}
            torch.save(payload, os.path.join(out, f"final-rank{me.rank}.pt"))
            return "saved"

        assert save() == ("saved" if me.rank == 0 else None)


    if __name__ == "__main__":
        main(sys.argv[1], sys.argv[2])
    """
)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _torchrun(script, out, mode: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="", NEURIPS26_PROGRESS="0")
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
        "--master_addr=127.0.0.1", f"--master_port={_free_port()}", "--monitor_interval=0.5",
        str(script), str(out), mode,
    ]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_two_gloo_ranks_match_one_process_and_only_rank_0_writes(tmp_path, monkeypatch):
    script = tmp_path / "tiny_ddp.py"
    script.write_text(SCRIPT)
    out = tmp_path / "ok"
    out.mkdir()
    start = time.perf_counter()
    run = _torchrun(script, out, "ok")
    assert run.returncode == 0, run.stderr[-4000:]
    assert sorted(p.name for p in out.iterdir()) == ["final-rank0.pt"]  # rank 1 wrote nothing
    saved = torch.load(out / "final-rank0.pt")

    # The same model in this one process, with the full batch of 8 at every step.
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        loaded = runpy.run_path(str(script))
        model, history = loaded["train"]()
        gated = loaded["train_gated"]().state_dict()
    finally:
        torch.set_num_threads(before)
    single = model.state_dict()
    assert saved["state"].keys() == single.keys()
    for name, value in single.items():
        assert value.dtype == torch.float64
        torch.testing.assert_close(saved["state"][name], value, rtol=0, atol=1e-6, msg=name)
        torch.testing.assert_close(saved["accumulated"][name], value, rtol=0, atol=1e-6, msg=name)
    assert not all(torch.equal(saved["state"][k], v) for k, v in _initial(script).items())  # it trained
    # A part left out on some steps: with find_unused_parameters, AdamW skips it there on both ranks too.
    for name, value in gated.items():
        torch.testing.assert_close(saved["gated"][name], value, rtol=0, atol=1e-6, msg=name)
    # History: the mean of the ranks' losses is the global batch's loss; seen counts global samples.
    np.testing.assert_allclose(saved["loss"], history.loss, rtol=1e-10)
    assert saved["seen"] == history.seen == [8, 16, 24, 32, 40]
    assert "rank 0 of 2" in saved["bypass"] and "must call model(...)" in saved["bypass"]

    # Rank 1 raises at step 2: the run exits non-zero and stderr names the rank and the cause.
    out = tmp_path / "fail"
    out.mkdir()
    run = _torchrun(script, out, "fail")
    assert run.returncode != 0
    expected = "RankFailed: rank 1 of 2 (local rank 1) failed at step 2: ValueError: an injected failure"
    assert expected in run.stderr
    assert not any(out.iterdir())
    assert time.perf_counter() - start < 60


def _initial(script):
    return runpy.run_path(str(script))["build"]().state_dict()


# --- helpers, in this one process ---------------------------------------------------------------------


def test_world_reads_torchrun_environment():
    assert distributed.world({}) == World(rank=0, size=1, local_rank=0)
    assert not distributed.world({}).distributed
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}
    assert distributed.world(env) == World(rank=3, size=4, local_rank=1)
    assert distributed.world(env).distributed
    with pytest.raises(ValueError, match="RANK"):
        distributed.world({"RANK": "4", "WORLD_SIZE": "4"})
    with pytest.raises(ValueError, match="WORLD_SIZE"):
        distributed.world({"WORLD_SIZE": "two"})


def test_one_process_helpers_are_no_ops(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert distributed.init() == World(0, 1, 0) and not distributed.is_initialized()
    assert distributed.is_main()
    distributed.barrier()
    t = torch.tensor([1.5, 2.5])
    assert distributed.all_reduce_mean(2.5) == 2.5 and distributed.all_reduce_mean(t) is t
    assert distributed.broadcast_object({"a": 1}) == {"a": 1}
    assert distributed.main_first(lambda first: first) is True
    model = nn.Linear(2, 2)
    assert distributed.wrap(model) is model and distributed.unwrap(model) is model
    calls = []
    save = distributed.main_only(lambda x: calls.append(x) or "done")
    assert save(7) == "done" and calls == [7]


def test_main_only_skips_other_ranks(monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    calls = []

    @distributed.main_only(sync=False)
    def save():
        calls.append(1)
        return "done"

    assert save() is None and calls == []


def test_shard_takes_equal_contiguous_rows():
    x = torch.arange(16).reshape(8, 2)
    y = torch.arange(8)
    table = torch.ones(3, 3)  # not batch-shaped: every rank gets it whole
    parts = [distributed.shard({"x": x, "y": y, "table": table}, r, 4) for r in range(4)]
    assert torch.equal(torch.cat([p["x"] for p in parts]), x)
    assert all(p["x"].shape == (2, 2) and p["table"] is table for p in parts)
    assert torch.equal(parts[1]["y"], torch.tensor([2, 3]))
    assert distributed.shard(list(range(10)), 1, 2) == [5, 6, 7, 8, 9]
    assert distributed.shard(range(6), 2, 3) == range(4, 6)
    assert distributed.shard((x, y), 0, 1)[0] is x
    with pytest.raises(ValueError, match="not divisible"):
        distributed.shard((x, y), 0, 3)
    with pytest.raises(ValueError, match="rank"):
        distributed.shard(x, 2, 2)


def test_rank_seeds_differ_and_rank_0_keeps_the_seed():
    seeds = [distributed.rank_seed(5, r) for r in range(4)]
    assert seeds[0] == 5 and len(set(seeds)) == 4


def test_bf16_precision_runs_under_autocast_and_bad_values_are_rejected():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    dtypes = []

    def loss_fn(m, batch):
        out = m(batch)
        dtypes.append(out.dtype)
        return out.float().pow(2).mean()

    x = torch.randn(16, 4)
    history = fit(model, loss_fn, lambda s: x, steps=2, seed=0, precision="bf16", progress=False)
    assert dtypes == [torch.bfloat16] * 2 and len(history.loss) == 2
    assert model[0].weight.dtype == torch.float32  # master weights keep their dtype
    with pytest.raises(ValueError, match="precision"):
        fit(model, loss_fn, lambda s: x, steps=1, seed=0, precision="fp16", progress=False)


def test_micro_batches_accumulate_the_whole_batch_gradient():
    def build():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)).double()

    def batches(step):
        g = torch.Generator().manual_seed(step)
        x = torch.randn(12, 3, generator=g, dtype=torch.float64)
        return {"x": x, "y": x.prod(dim=1, keepdim=True), "scale": torch.tensor(2.0)}

    def loss_fn(model, batch):
        return nn.functional.mse_loss(model(batch["x"]), batch["scale"] * batch["y"])

    trained = {}
    for parts in (1, 2, 3, 4):
        model = build()
        history = fit(model, loss_fn, batches, steps=4, seed=0, lr=1e-2, micro_batches=parts, progress=False)
        trained[parts] = (model.state_dict(), history)
    one, history_one = trained[1]
    for parts in (2, 3, 4):
        state, history = trained[parts]
        for name, value in one.items():
            torch.testing.assert_close(state[name], value, rtol=0, atol=1e-12, msg=name)
        np.testing.assert_allclose(history.loss, history_one.loss, rtol=1e-12)
        assert history.seen == history_one.seen == [12, 24, 36, 48]
        assert history.config.micro_batches == parts
    with pytest.raises(ValueError, match="micro_batches=5 must divide"):
        fit(build(), loss_fn, batches, steps=1, seed=0, micro_batches=5, progress=False)
    with pytest.raises(ValueError, match="micro_batches"):
        fit(build(), loss_fn, batches, steps=1, seed=0, micro_batches=0, progress=False)


def test_one_micro_batch_is_the_plain_step_bit_for_bit():
    # micro_batches=1 must not even divide the loss: the committed checkpoints were trained without it.
    torch.manual_seed(0)
    a = nn.Linear(4, 2)
    b = nn.Linear(4, 2)
    b.load_state_dict(a.state_dict())
    x = torch.randn(6, 4)

    def loss_fn(m, batch):
        return m(batch).pow(2).mean()

    fit(a, loss_fn, lambda s: x, steps=3, seed=1, progress=False)
    fit(b, loss_fn, lambda s: x, steps=3, seed=1, micro_batches=1, progress=False)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
