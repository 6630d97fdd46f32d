"""The suite runner: one record per question and interface, scores, parallel and kernel runs agree."""

from __future__ import annotations

import dataclasses

import pytest

from neurips26.llm.offline import Scripted
from neurips26.spatialclaw.experiments import (
    EpisodeError,
    SuiteConfig,
    group_gap,
    run_suite,
    win_attributions,
)
from neurips26.spatialclaw.parser import format_response

CONFIG = SuiteConfig(
    scale="smoke", families=("distance", "counting"), per_family=2, executor="in_process", workers=1
)


def _model_for(interface, spec):
    """Answers 2.0 through the kernel (code, single-pass, tool call) or in words (no tool)."""

    def policy(messages):
        if "You plan, you do not answer" in messages[-1].content:
            return "plan\n### CHECKLIST\n[]"
        if interface == "no_tool" or "\\boxed" in messages[0].content:
            return "\\boxed{2.0}"
        if interface == "tool_call":
            return '{"tool": "ReturnAnswer", "args": {"x": "2.0"}}'
        cell = "n = len(InputImages)\nReturnAnswer(2.0)" if interface == "code" else "ReturnAnswer(2.0)"
        return format_response("p", "r", "g", cell)

    return Scripted(policy)


def test_one_record_per_question_and_interface_with_scores():
    result = run_suite(CONFIG, model_for=_model_for, verbose=False)
    questions = CONFIG.questions()
    assert len(result.records) == len(questions) * len(CONFIG.interfaces)
    assert [r.qid for r in result.records] == sorted(r.qid for r in result.records)
    for r in result.records:
        assert 0.0 <= r.score <= 1.0 and r.answer in ("2.0", "2") and not r.forced
    table = result.table()
    assert set(table) == set(CONFIG.interfaces)
    assert table["code"]["average"] == pytest.approx(table["no_tool"]["average"])  # same answers
    assert set(group_gap(result)) == {"chained", "perception"}
    assert all(v == pytest.approx(0.0) for v in group_gap(result).values())
    assert win_attributions(result) == {}  # code never wins where tool calls lose: same answers


def test_parallel_and_kernel_runs_give_the_same_records():
    serial = run_suite(CONFIG, model_for=_model_for, verbose=False)
    parallel = run_suite(dataclasses.replace(CONFIG, workers=2), model_for=_model_for, verbose=False)
    kernel = run_suite(
        dataclasses.replace(CONFIG, executor="kernel", families=("distance",), per_family=1),
        model_for=_model_for,
        verbose=False,
    )
    assert serial.records == parallel.records
    assert kernel.records == tuple(r for r in serial.records if r.qid == kernel.records[0].qid)


def test_bad_config_names_the_field():
    with pytest.raises(ValueError, match="families"):
        SuiteConfig(families=("astrology",))
    with pytest.raises(ValueError, match="executor"):
        SuiteConfig(executor="docker")
    with pytest.raises(ValueError, match="per_family"):
        SuiteConfig(per_family=0)
    with pytest.raises(TypeError, match="model_for"):
        run_suite(CONFIG, model_for="gpt")


def test_cached_suites_share_each_interfaces_run(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NEURIPS26_PROGRESS", "0")
    monkeypatch.delenv("NEURIPS26_NO_CACHE", raising=False)
    small = dataclasses.replace(CONFIG, families=("distance",), per_family=1, interfaces=("code", "no_tool"))
    both = run_suite(small, verbose=False)
    assert [r.interface for r in both.records] == ["code", "no_tool"]
    runs = sorted(p.name for p in tmp_path.glob("spatialclaw-suite-*.pkl"))
    assert len(runs) == 2  # one entry per interface
    # the code interface alone, the default noise spelled out: the same cached run, no new entry
    alone = run_suite(
        dataclasses.replace(small, interfaces=("code",), noise={"p_miss": 0.1}, executor="kernel", workers=2),
        verbose=False,
    )
    assert alone.records == both.records[:1]
    assert sorted(p.name for p in tmp_path.glob("spatialclaw-suite-*.pkl")) == runs
    # Each finished episode is cached on its own too; a larger suite that asks the same first question
    # under the same settings reuses its episode and runs only the new one.
    assert len(list(tmp_path.glob("spatialclaw-episode-*.pkl"))) == 2
    more = run_suite(dataclasses.replace(small, per_family=2, interfaces=("no_tool",)), verbose=False)
    assert more.records[0] == both.records[1] and len(more.records) == 2
    assert len(list(tmp_path.glob("spatialclaw-episode-*.pkl"))) == 3


class _Backend:
    """A ``model_for`` whose models answer as :func:`_model_for` and count their calls (``calls``; per
    episode, in the order the episodes start, ``[calls, failed]`` in ``episodes``); with ``fail_at`` the
    suite's ``fail_at``-th call raises."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at = fail_at
        self.calls = 0
        self.episodes: list[list[int]] = []

    def __call__(self, interface, spec):
        inner = _model_for(interface, spec)
        mine = [0, 0]
        self.episodes.append(mine)
        backend = self

        class Model:
            def complete(self, messages, **kwargs):
                backend.calls += 1
                if backend.calls == backend.fail_at:
                    mine[1] = 1
                    raise ConnectionError("backend unreachable")
                mine[0] += 1
                return inner.complete(messages, **kwargs)

        return Model()


def test_a_failing_backend_names_the_episode_and_a_rerun_resumes_from_the_finished_ones(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NEURIPS26_NO_CACHE", raising=False)
    whole = _Backend()
    uninterrupted = run_suite(CONFIG, model_for=whole, verbose=False)  # no model_name: nothing cached
    assert not list(tmp_path.glob("*.pkl"))
    jobs = [(q.qid, i) for q in CONFIG.questions() for i in CONFIG.interfaces]

    failing = _Backend(fail_at=9)
    with pytest.raises(EpisodeError) as info:
        run_suite(CONFIG, model_for=failing, model_name="fake-llm", verbose=False)
    # One worker starts the episodes in job order (the next may start before the error stops the run).
    failed = [k for k, (_, bad) in enumerate(failing.episodes) if bad]
    assert len(failed) == 1
    qid, interface = jobs[failed[0]]
    assert (info.value.qid, info.value.interface) == (qid, interface)
    assert qid in str(info.value) and repr(interface) in str(info.value)
    assert "backend unreachable" in str(info.value)
    assert isinstance(info.value.__cause__, ConnectionError)
    finished = sum(n for n, bad in failing.episodes if not bad)
    assert failed[0] > 0 and finished > 0

    working = _Backend()
    resumed = run_suite(CONFIG, model_for=working, model_name="fake-llm", verbose=False)
    assert working.calls == whole.calls - finished  # the finished episodes were not asked again
    assert resumed.records == uninterrupted.records
    # Everything is cached now: a backend that always fails is never called; another name is not reused.
    down = _Backend(fail_at=1)
    assert run_suite(CONFIG, model_for=down, model_name="fake-llm", verbose=False).records == resumed.records
    assert down.calls == 0
    with pytest.raises(EpisodeError):
        run_suite(CONFIG, model_for=down, model_name="another-llm", verbose=False)


def test_model_name_is_checked():
    with pytest.raises(TypeError, match="model_name"):
        run_suite(CONFIG, model_for=_model_for, model_name=3)
    with pytest.raises(ValueError, match="model_name"):
        run_suite(CONFIG, model_for=_model_for, model_name=" ")
    with pytest.raises(ValueError, match="model_name"):
        run_suite(CONFIG, model_name="gpt")
