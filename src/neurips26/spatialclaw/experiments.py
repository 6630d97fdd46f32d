"""The chapter's experiments: every interface on the same questions, and the sweeps behind claims C1–C6.

- :func:`run_suite` runs the agent loop (:func:`~.loop.run_episode`) for each question of a
  :func:`~.questions.question_suite` with each interface, the same tools, prompts and perception noise
  for all, and scores each answer (:func:`~.scoring.score`). The model is the offline
  :func:`~.reference_policy.reference_model` unless a chat model is given. Episodes run in real Jupyter
  kernels (``executor="kernel"``; ``workers`` kernels side by side) or in the in-process twin
  (``"in_process"``; same transcripts, used for the sweeps). Results are cached twice: each finished
  episode on its own as soon as it ends (so a run stopped by an error, say a failing LLM backend,
  resumes where it stopped, and suites that ask the same question under the same settings share it),
  and each interface's part of a suite (:func:`_cached_interface`, one file to load).
- :func:`noise_sweep` (claim C3), :func:`step_sweep` (C5) and :func:`ablation_suite` (C4) are the same suite
  with one setting changed; :func:`win_attributions` (C6) labels the questions code wins and tool calls
  lose.

No verdicts here: the claims notebook reads these numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from neurips26.cache import cache_enabled, cache_key, cached
from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.spatialclaw.attribution import Attribution, attribute
from neurips26.spatialclaw.executor import Executor, InProcessExecutor, JupyterKernelExecutor
from neurips26.spatialclaw.loop import AgentConfig, Episode, run_episode
from neurips26.spatialclaw.prompts import INTERFACES
from neurips26.spatialclaw.questions import FAMILIES, GROUPS, Question, question_suite
from neurips26.spatialclaw.scoring import score
from neurips26.spatialclaw.session import SessionSpec
from neurips26.spatialclaw.tools.noise import PerceptionNoise
from neurips26.validation import check_choice, check_int, check_seed

EXECUTORS: tuple[str, ...] = ("kernel", "in_process")
#: The name under which the offline reference policy's episodes are cached.
REFERENCE_MODEL = "reference_policy"


class EpisodeError(RuntimeError):
    """An episode of a suite failed (the model backend raised, say): names the question ``qid`` and the
    ``interface``; the episodes finished before it are cached when the suite caches (:func:`run_suite`)."""

    def __init__(self, message: str, qid: str, interface: str) -> None:
        super().__init__(message)
        self.qid = qid
        self.interface = interface


@dataclass(frozen=True)
class SuiteConfig:
    """One suite run: ``per_family`` questions of each of ``families`` (seed ``seed``), each answered with
    every interface of ``interfaces`` under the same settings — ``max_steps``, the perception ``noise``
    (keyword arguments of ``PerceptionNoise``; ``None``: no noise), the tool ablations ``utilities`` and
    ``perception`` — on ``executor`` with ``workers`` kernels in parallel (the in-process twin runs one
    episode at a time: its stdout and pyplot capture are process-wide)."""

    scale: str = "default"
    families: tuple[str, ...] = FAMILIES
    per_family: int = 20
    seed: int = 0
    interfaces: tuple[str, ...] = INTERFACES
    max_steps: int = 10
    noise: dict[str, float] | None = field(default_factory=dict)
    utilities: bool = True
    perception: bool = True
    executor: str = "kernel"
    workers: int = 2

    def __post_init__(self) -> None:
        check_choice("scale", self.scale, ("smoke", "default", "paper"))
        if not isinstance(self.families, tuple) or not self.families:
            raise TypeError(f"families must be a non-empty tuple of family names; got {self.families!r}")
        for f in self.families:
            check_choice("families", f, FAMILIES)
        check_int("per_family", self.per_family, minimum=1)
        check_seed("seed", self.seed)
        if not isinstance(self.interfaces, tuple) or not self.interfaces:
            raise TypeError(f"interfaces must be a non-empty tuple of interfaces; got {self.interfaces!r}")
        for i in self.interfaces:
            check_choice("interfaces", i, INTERFACES)
        check_int("max_steps", self.max_steps, minimum=1)
        check_choice("executor", self.executor, EXECUTORS)
        check_int("workers", self.workers, minimum=1)
        SessionSpec(0, noise=self.noise, utilities=self.utilities, perception=self.perception)  # validates

    @classmethod
    def for_scale(cls, scale: str) -> SuiteConfig:
        """smoke: 2 families × 4 questions; default: 9 × 20; paper: 9 × 50.

        The default is our choice: 180 questions in four interfaces fit the chapter on two cores.
        """
        return pick(
            scale,
            smoke=cls(scale="smoke", families=("distance", "relative_direction"), per_family=4),
            default=cls(),
            paper=cls(scale="paper", per_family=50),
        )

    def questions(self) -> list[Question]:
        return question_suite(self.families, self.per_family, self.seed)

    def spec(self, question: Question) -> SessionSpec:
        """The kernel session of ``question`` under this suite's settings."""
        return SessionSpec(
            question.scene_seed,
            question.scene_kind,
            question.scene_mover,
            noise=self.noise,
            utilities=self.utilities,
            perception=self.perception,
        )


@dataclass(frozen=True)
class EpisodeRecord:
    """One question answered with one interface: the ``answer`` as text, its ``score`` in [0, 1], whether
    the episode was ``forced`` to a no-tool answer, the number of ``steps`` and failed steps, the code
    ``cells`` that ran, and its wall ``seconds``."""

    qid: str
    family: str
    group: str
    interface: str
    answer: str
    score: float
    forced: bool
    steps: int
    failures: int
    cells: tuple[str, ...]
    seconds: float = field(compare=False)


@dataclass(frozen=True)
class SuiteResult:
    """Every :class:`EpisodeRecord` of a suite, sorted by question and interface; ``wall_seconds`` the time
    the suite took to run (or to load from the cache)."""

    config: SuiteConfig
    records: tuple[EpisodeRecord, ...]
    wall_seconds: float = field(compare=False)

    def select(
        self, interface: str | None = None, family: str | None = None, group: str | None = None
    ) -> list[EpisodeRecord]:
        return [
            r
            for r in self.records
            if (interface is None or r.interface == interface)
            and (family is None or r.family == family)
            and (group is None or r.group == group)
        ]

    def accuracy(self, interface: str, family: str | None = None, group: str | None = None) -> float:
        """Mean score (MC exact match, numeric MRA) of ``interface``, optionally within a family or group."""
        rows = self.select(interface, family, group)
        if not rows:
            raise ValueError(f"no episodes for interface={interface!r}, family={family!r}, group={group!r}")
        return float(np.mean([r.score for r in rows]))

    def table(self) -> dict[str, dict[str, float]]:
        """``{interface: {family: accuracy, ..., "average": mean over families}}``."""
        out = {}
        for i in self.config.interfaces:
            row = {f: self.accuracy(i, f) for f in self.config.families}
            row["average"] = float(np.mean(list(row.values())))
            out[i] = row
        return out


def _record(question: Question, episode: Episode, seconds: float) -> EpisodeRecord:
    answer = "" if episode.answer is None else str(episode.answer)
    value = (
        0.0
        if episode.answer is None
        else score(question.kind, episode.answer, question.answer, question.choices)
    )
    return EpisodeRecord(
        qid=question.qid,
        family=question.family,
        group=question.group,
        interface=episode.interface,
        answer=answer,
        score=float(value),
        forced=episode.forced,
        steps=len(episode.steps),
        failures=sum(s.failed for s in episode.steps),
        cells=episode.cells,
        seconds=seconds,
    )


ModelFactory = Callable[[str, SessionSpec], object]


def _default_model(interface: str, spec: SessionSpec) -> object:
    from neurips26.spatialclaw.reference_policy import reference_model

    return reference_model(interface, spec)


def _episode_settings(config: SuiteConfig, model_name: str) -> str:
    """Key of everything besides the question and the interface that an episode's transcript depends on:
    the model, the step budget, the perception noise (spelled canonically: ``{}`` is the defaults), the
    tool ablations and the package's source. Not the parallelism, the executor (the twins' transcripts
    are equal) or the rest of the suite, so suites that share a question share its episode."""
    noise = None if config.noise is None else dataclasses.asdict(PerceptionNoise(**config.noise))
    settings = {
        "model": model_name,
        "max_steps": config.max_steps,
        "noise": noise,
        "utilities": config.utilities,
        "perception": config.perception,
    }
    return cache_key("spatialclaw-episode", settings, package="neurips26.spatialclaw")


def _run(
    config: SuiteConfig, model_for: ModelFactory, show_progress: bool, model_name: str | None
) -> SuiteResult:
    """Run every (question, interface) of ``config``; with a ``model_name`` each episode is loaded from,
    or stored to, the cache as soon as it ends (``cached`` per episode). The first failing episode stops
    the run with an :class:`EpisodeError` (episodes not started are cancelled; running ones finish)."""
    start = time.perf_counter()
    jobs = [(q, i) for q in config.questions() for i in config.interfaces]
    settings = None if model_name is None else _episode_settings(config, model_name)
    ran = [0]  # episodes run (not loaded from the cache)
    local = threading.local()
    executors: list[Executor] = []
    lock = threading.Lock()

    def executor() -> Executor:
        ex = getattr(local, "executor", None)
        if ex is None:
            ex = JupyterKernelExecutor() if config.executor == "kernel" else InProcessExecutor()
            local.executor = ex
            with lock:
                executors.append(ex)
        return ex

    def episode(question: Question, interface: str) -> EpisodeRecord:
        spec = config.spec(question)
        agent = AgentConfig(interface, max_steps=config.max_steps)
        tic = time.perf_counter()
        try:
            result = run_episode(
                question.text,
                spec,
                model_for(interface, spec),
                None if interface == "no_tool" else executor(),
                agent,
                choices=question.choices,
            )
        except Exception as err:
            if settings is None:
                kept = "are not cached: run_suite was given no model_name"
            else:
                kept = "are cached; a rerun resumes from them" if cache_enabled() else "are not cached"
            raise EpisodeError(
                f"question {question.qid!r} with interface {interface!r} failed: {type(err).__name__}: "
                f"{err} (the episodes finished before it {kept})",
                question.qid,
                interface,
            ) from err
        with lock:
            ran[0] += 1
        return _record(question, result, time.perf_counter() - tic)

    def one(job: tuple[Question, str]) -> EpisodeRecord:
        question, interface = job
        if settings is None:
            return episode(question, interface)
        key = {"settings": settings, "question": question, "interface": interface}
        return cached("spatialclaw-episode", key, lambda: episode(question, interface), verbose=False)

    try:
        workers = config.workers if config.executor == "kernel" else 1
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(one, job) for job in jobs]
            try:
                records = [
                    f.result()
                    for f in progress(futures, total=len(jobs), desc="episodes", show=show_progress)
                ]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    finally:
        for ex in executors:
            ex.close()
    if show_progress and settings is not None and ran[0] < len(jobs):
        print(f"[cache] reused {len(jobs) - ran[0]} of {len(jobs)} finished episodes")
    records.sort(key=lambda r: (r.qid, config.interfaces.index(r.interface)))
    return SuiteResult(config, tuple(records), time.perf_counter() - start)


def run_suite(
    config: SuiteConfig | None = None,
    *,
    model_for: ModelFactory | None = None,
    model_name: str | None = None,
    verbose: bool = True,
) -> SuiteResult:
    """Every question of ``config`` with every interface (module docstring).

    With the default offline model every finished episode is cached, and so is each interface's part
    (:func:`_cached_interface`). With a given ``model_for(interface, spec)`` (an LLM backend, say) the
    episodes are cached under ``model_name`` (the model's name, e.g. the endpoint's model id), so a run
    that stops on an :class:`EpisodeError` resumes from the episodes it finished; without a
    ``model_name`` nothing is cached (two models must not share episodes)."""
    config = SuiteConfig.for_scale("default") if config is None else config
    if not isinstance(config, SuiteConfig):
        raise TypeError(f"config must be a SuiteConfig; got {type(config).__name__}")
    if model_name is not None:
        if not isinstance(model_name, str):
            raise TypeError(f"model_name must be a str (the model's name); got {type(model_name).__name__}")
        if not model_name.strip():
            raise ValueError("model_name must be a non-empty name of the model")
    if model_for is not None:
        if not callable(model_for):
            raise TypeError(f"model_for must be callable (interface, spec) -> chat model; got {model_for!r}")
        return _run(config, model_for, verbose, model_name)
    if model_name is not None:
        raise ValueError("model_name names the model of model_for; give model_for too (or neither)")
    start = time.perf_counter()
    joint = functools.cache(  # run at most once, all interfaces together
        lambda: _run(config, _default_model, verbose, REFERENCE_MODEL)
    )
    parts = [_cached_interface(config, i, joint, verbose) for i in config.interfaces]
    records = sorted(
        (r for part in parts for r in part.records),
        key=lambda r: (r.qid, config.interfaces.index(r.interface)),
    )
    return SuiteResult(config, tuple(records), time.perf_counter() - start)


def _cached_interface(
    config: SuiteConfig, interface: str, joint: Callable[[], SuiteResult], verbose: bool
) -> SuiteResult:
    """The episodes of ``interface``, cached on their own, so that suites and sweeps that share an
    interface and its settings share the run; a missing part is cut from ``joint()``, the run of every
    interface of ``config`` together (one pool of kernels). The key leaves out what does not change the
    transcripts: the parallelism, the executor (the twins' transcripts are equal) and how the noise is
    spelled (``{}`` is the defaults)."""
    noise = None if config.noise is None else dataclasses.asdict(PerceptionNoise(**config.noise))
    key = dataclasses.replace(config, interfaces=(interface,), workers=1, executor="kernel", noise=noise)

    def part() -> SuiteResult:  # wall_seconds: of the joint run it was cut from
        whole = joint()
        mine = tuple(r for r in whole.records if r.interface == interface)
        return SuiteResult(dataclasses.replace(config, interfaces=(interface,)), mine, whole.wall_seconds)

    return cached("spatialclaw-suite", key, part, package="neurips26.spatialclaw", verbose=verbose)


def noise_sweep(
    base: SuiteConfig, p_miss: Sequence[float] = (0.0, 0.1, 0.2, 0.4), *, verbose: bool = True
) -> dict[float, SuiteResult]:
    """Claim C3: the suite at each segmentation miss rate ``p_miss`` (other noise as in ``base``)."""
    out = {}
    for p in p_miss:
        noise = dict(base.noise or {}) | {"p_miss": float(p)}
        out[float(p)] = run_suite(dataclasses.replace(base, noise=noise), verbose=verbose)
    return out


def step_sweep(
    base: SuiteConfig, steps: Sequence[int] = (1, 2, 4, 8, 16), *, verbose: bool = True
) -> dict[int, SuiteResult]:
    """Claim C5: the code interface at each step budget (``base.interfaces`` is replaced by ``code``)."""
    return {
        int(k): run_suite(dataclasses.replace(base, interfaces=("code",), max_steps=int(k)), verbose=verbose)
        for k in steps
    }


def ablation_suite(base: SuiteConfig, *, verbose: bool = True) -> dict[str, SuiteResult]:
    """Claim C4: the code interface with all tools, without the utility wrappers (Geometry, Mask, Time,
    Draw; NumPy/SciPy stay), and without the perception tools (SAM3, Reconstruct)."""
    code = dataclasses.replace(base, interfaces=("code",))
    return {
        "full": run_suite(code, verbose=verbose),
        "no_utilities": run_suite(dataclasses.replace(code, utilities=False), verbose=verbose),
        "no_perception": run_suite(dataclasses.replace(code, perception=False), verbose=verbose),
    }


def win_attributions(result: SuiteResult, *, win: float = 0.999) -> dict[str, Attribution]:
    """Claim C6: for each question where ``code`` scores ≥ ``win`` and ``tool_call`` below it, the AST
    attribution of the code trajectory (composition, control flow or neutral)."""
    code = {r.qid: r for r in result.select("code")}
    calls = {r.qid: r for r in result.select("tool_call")}
    if not code or not calls:
        raise ValueError("result must hold both the code and the tool_call interfaces")
    return {
        qid: attribute(r.cells)
        for qid, r in sorted(code.items())
        if r.score >= win and qid in calls and calls[qid].score < win
    }


def group_gap(result: SuiteResult, a: str = "code", b: str = "tool_call") -> dict[str, float]:
    """Claim C2: accuracy of ``a`` minus ``b`` per question group (:data:`~.questions.GROUPS`)."""
    groups = sorted({GROUPS[f] for f in result.config.families})
    return {g: result.accuracy(a, group=g) - result.accuracy(b, group=g) for g in groups}
