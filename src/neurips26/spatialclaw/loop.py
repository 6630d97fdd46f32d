"""The agent loop (paper §3.2): plan → act → execute → feedback → answer, for every interface.

One function, :func:`run_episode`, drives any chat model (an LLM backend of :mod:`neurips26.llm`, or the
offline :class:`~.reference_policy.ReferencePolicy`, which implements the same ``complete`` method) through
one sample:

* ``code`` (SpatialClaw): a planner session writes a plan with a ``### CHECKLIST``; then, step after step,
  the model answers in the four-heading format, its one python block runs in the persistent kernel, and
  the formatted feedback (stdout, condensed traceback, variable summaries, shown images, budgets) becomes
  the next user message. A valid ``ReturnAnswer`` ends the episode.
* ``single_pass``: the same with ``max_steps = 1``, no planner and the single-turn workflow section.
* ``tool_call``: each step is one JSON tool call, translated by :func:`~.react.translate` into one
  assignment ``result_<k> = tools.X.m(...)`` and run in the same kernel, followed by a bare ``result_<k>``
  so that the result's repr is echoed into the feedback (a tool-call agent sees what each tool returned;
  it cannot compute on it).
* ``no_tool``: one completion over the frames, answer in ``\\boxed{}``.

Failures (a response without a code block, an untranslatable call, a rejected or failing cell) count
against ``max_failures``. When the step or failure budget runs out without an answer, the episode is
*force-terminated*: the same model answers once more without tools (the no-tool prompt), as in the released
code. At most ``max_answer_attempts`` ``ReturnAnswer`` calls are accepted (enforced in the kernel).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from neurips26.llm.messages import Message
from neurips26.spatialclaw.executor import CellResult, Executor
from neurips26.spatialclaw.feedback import condense_feedback, format_feedback
from neurips26.spatialclaw.kernel_types import png_bytes
from neurips26.spatialclaw.parser import ResponseFormatError, parse_boxed, parse_response
from neurips26.spatialclaw.prompts import (
    INTERFACES,
    PromptConfig,
    SessionInfo,
    planner_prompt,
    system_prompt,
    user_message,
)
from neurips26.spatialclaw.react import ToolCallError, translate
from neurips26.spatialclaw.scene_types import SpatialScene
from neurips26.spatialclaw.session import SessionSpec, bootstrap_code, tool_docs_for
from neurips26.validation import check_choice, check_float, check_int

#: Names bound in every kernel that a tool call may reference.
KERNEL_NAMES: tuple[str, ...] = ("InputImages", "Metadata", "tools", "vlm")


@dataclass(frozen=True)
class AgentConfig:
    """The loop's settings. ``max_steps`` 10 (the release uses 30; ours is a CPU budget), ``max_failures``,
    ``planning`` (code and tool-call interfaces; single-pass never plans), ``prompt_drop`` (sections left
    out of the system prompt, an ablation), ``cell_timeout`` seconds, ``key_frames`` (frames attached to
    the first message as images: the paper's sighted mode), ``temperature`` and ``max_tokens`` of every
    completion."""

    interface: str = "code"
    max_steps: int = 10
    max_failures: int = 10
    planning: bool = True
    prompt_drop: frozenset[str] = field(default_factory=frozenset)
    cell_timeout: float = 60.0
    key_frames: bool = True
    temperature: float = 0.0
    max_tokens: int = 4096

    def __post_init__(self) -> None:
        check_choice("interface", self.interface, INTERFACES)
        check_int("max_steps", self.max_steps, minimum=1)
        check_int("max_failures", self.max_failures, minimum=1)
        check_float("cell_timeout", self.cell_timeout, minimum=0.0, strict_min=True)
        check_float("temperature", self.temperature, minimum=0.0)
        check_int("max_tokens", self.max_tokens, minimum=1)
        for name in ("planning", "key_frames"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {type(getattr(self, name)).__name__}")
        PromptConfig(self.interface, self.steps, frozenset(self.prompt_drop))  # validates prompt_drop
        object.__setattr__(self, "prompt_drop", frozenset(self.prompt_drop))

    @property
    def steps(self) -> int:
        """The step budget the interface really gets (single-pass: 1)."""
        return 1 if self.interface == "single_pass" else self.max_steps

    @property
    def plans(self) -> bool:
        return self.planning and self.interface in ("code", "tool_call")


@dataclass(frozen=True)
class Step:
    """One step: the model's ``response``, the ``code`` that ran (translated for tool calls; ``None`` when
    nothing ran), the kernel's ``result``, the ``feedback`` text sent back, and whether it ``failed``."""

    index: int
    response: str
    code: str | None
    result: CellResult | None
    feedback: str
    failed: bool


@dataclass(frozen=True)
class Episode:
    """One sample's run: the ``answer`` (``None`` if none could be parsed), whether it came from
    ``forced`` termination, the ``plan``, the ``steps`` and the full conversation ``messages``."""

    interface: str
    question: str
    answer: str | float | int | None
    forced: bool
    plan: str | None
    steps: tuple[Step, ...]
    messages: tuple[Message, ...]

    @property
    def cells(self) -> tuple[str, ...]:
        """The code of every step that ran (for win attribution)."""
        return tuple(s.code for s in self.steps if s.code is not None)


def _complete(model: object, messages: list[Message], config: AgentConfig) -> str:
    reply = model.complete(messages, temperature=config.temperature, max_tokens=config.max_tokens)  # type: ignore[attr-defined]
    return reply.text


def _session_info(scene: SpatialScene, key_frames: bool) -> SessionInfo:
    n = scene.num_frames
    return SessionInfo(
        num_frames=n,
        frame_indices=tuple(range(n)),
        fps=scene.fps,
        is_video=scene.kind == "video",
        key_frames=tuple(range(n)) if key_frames else (),
    )


@functools.lru_cache(maxsize=8)
def _key_frame_images(scene_seed: int, kind: str, mover: bool) -> tuple[bytes, ...]:
    """Every frame of the scene as PNG, cached: a suite asks for the same scene once per interface."""
    from neurips26.spatialclaw.scenes import frames_for, make_scene

    frames = frames_for(make_scene(scene_seed, kind, mover=mover))
    return tuple(png_bytes(frames.rgb[f]) for f in range(frames.num_frames))


def _no_tool_answer(
    model: object, question: str, choices: tuple[str, ...], images: tuple[bytes, ...], config: AgentConfig
) -> tuple[str | None, list[Message]]:
    prompt = system_prompt(PromptConfig("no_tool", 1, config.prompt_drop))
    messages = [Message("system", prompt), Message("user", user_message(question, choices), images)]
    text = _complete(model, messages, config)
    messages.append(Message("assistant", text))
    return parse_boxed(text), messages


def _condense_failed_history(
    messages: list[Message], steps: list[Step], feedback_at: dict[int, int], max_steps: int
) -> None:
    """Shorten the feedback of earlier failed steps to one line (paper §3.2: errored steps are condensed
    in the history); the latest feedback, about to be appended, stays whole."""
    for step in steps[:-1]:
        at = feedback_at.get(step.index)
        if at is None or not step.failed:
            continue
        if step.result is None:
            line = f"Step {step.index}/{max_steps} could not be executed (response format)."
        else:
            line = condense_feedback(step.result, step=step.index, max_steps=max_steps)
        messages[at] = Message("user", line)
        del feedback_at[step.index]


def run_episode(
    question: str,
    spec: SessionSpec,
    model: object,
    executor: Executor | None,
    config: AgentConfig | None = None,
    *,
    choices: tuple[str, ...] = (),
    tool_docs: str | None = None,
) -> Episode:
    """Run one sample (module docstring). ``executor`` may be ``None`` only for the ``no_tool`` interface;
    it is started (or reset) with the sample's bootstrap here. ``tool_docs`` (the prompts' tool
    documentation) defaults to the docstrings of the tools the session binds
    (:func:`~.session.tool_docs_for`)."""
    config = AgentConfig() if config is None else config
    if not isinstance(config, AgentConfig):
        raise TypeError(f"config must be an AgentConfig; got {type(config).__name__}")
    if not isinstance(spec, SessionSpec):
        raise TypeError(f"spec must be a SessionSpec; got {type(spec).__name__}")
    if not callable(getattr(model, "complete", None)):
        raise TypeError(f"model must have a complete(messages, ...) method; got {type(model).__name__}")
    scene = spec.scene()
    images = _key_frame_images(spec.scene_seed, spec.scene_kind, spec.mover) if config.key_frames else ()
    if tool_docs is None:
        tool_docs = tool_docs_for(spec)
    if config.interface == "no_tool":
        answer, messages = _no_tool_answer(model, question, choices, images, config)
        return Episode("no_tool", question, answer, False, None, (), tuple(messages))
    if executor is None:
        raise ValueError(f"executor is required for the {config.interface!r} interface")

    session = _session_info(scene, config.key_frames)
    plan = None
    if config.plans:
        planner = [Message("user", planner_prompt(question, tool_docs=tool_docs, session=session))]
        plan = _complete(model, planner, config)
    prompt = system_prompt(
        PromptConfig(config.interface, config.steps, config.prompt_drop), tool_docs=tool_docs, session=session
    )
    first = user_message(question, choices) + (f"\n\nPlan:\n{plan}" if plan else "")
    messages = [Message("system", prompt), Message("user", first, images)]
    executor.start(bootstrap_code(spec))

    steps: list[Step] = []
    feedback_at: dict[int, int] = {}  # step -> index of its feedback message
    failures, answer, known = 0, None, list(KERNEL_NAMES)
    for k in range(1, config.steps + 1):
        text = _complete(model, messages, config)
        messages.append(Message("assistant", text))
        code, result, error = None, None, None
        try:
            if config.interface == "tool_call":
                code = translate(text, k, known_names=tuple(known))
                if code.startswith(f"result_{k} = "):  # echo the result, as a tool-call interface shows it
                    code += f"\nresult_{k}"
            else:
                code = parse_response(text).code
        except (ResponseFormatError, ToolCallError) as err:
            error = f"Your response could not be executed: {err}"
        if code is not None:
            result = executor.run(code, timeout=config.cell_timeout)
            if config.interface == "tool_call" and result.error is None and result.rejected is None:
                known.append(f"result_{k}")
            fb = format_feedback(
                result, step=k, max_steps=config.steps, show_budget_left=result.show_budget_left
            )
            feedback_text, feedback_images = fb.text, fb.images
        else:
            feedback_text, feedback_images = error or "", ()
        failed = result is None or result.error is not None or result.rejected is not None
        failures += failed
        steps.append(Step(k, text, code, result, feedback_text, failed))
        if result is not None and result.answers:
            answer = result.answers[-1]
            break
        if failures >= config.max_failures:
            break
        _condense_failed_history(messages, steps, feedback_at, config.steps)
        feedback_at[k] = len(messages)
        messages.append(Message("user", feedback_text, tuple(feedback_images)))

    forced = answer is None
    if forced:  # forced termination: one no-tool chain-of-thought answer from the same model
        answer, extra = _no_tool_answer(model, question, choices, images, config)
        messages.extend(extra[1:])
    return Episode(config.interface, question, answer, forced, plan, tuple(steps), tuple(messages))
