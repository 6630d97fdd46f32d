"""The prompts of the agent loop: the main system prompt in named, ablatable sections (paper §3.3), the
planner, the optional reflection, the single-turn workflow, the tool-call (ReAct) format and no-tool CoT.

Every interface gets the *same* prompt content; only the parts that describe how to act differ (the paper's
control: same tools, same prompt, only the interface changes). The main prompt is the concatenation of
:data:`SECTIONS` in order; :class:`PromptConfig` drops any of them for an ablation. Tool documentation is
generated from the docstrings of the objects the kernel binds (:func:`tool_documentation`), so the prompt
documents exactly the code that runs. The wording is ours; the section list and what each section asks of the
agent follow the paper's description.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field

from neurips26.validation import check_choice, check_int

#: The interfaces (paper §3.4): code as action (SpatialClaw), one program, JSON tool calls, no tools.
INTERFACES: tuple[str, ...] = ("code", "single_pass", "tool_call", "no_tool")

#: The main prompt's sections, in order (paper §3.3).
SECTIONS: tuple[str, ...] = (
    "header",
    "response_format",
    "show_api",
    "vlm_api",
    "available_tools",
    "coordinate_system",
    "robust_computation",
    "evidence_hierarchy",
    "return_answer",
    "code_rules",
    "workflow",
    "session_input",
)


@dataclass(frozen=True)
class SessionInfo:
    """What the prompt says about the inputs: frame count, absolute frame indices, fps, whether it is a
    video, and the key frames attached to the first message (position → absolute index)."""

    num_frames: int
    frame_indices: tuple[int, ...]
    fps: float
    is_video: bool
    key_frames: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_int("num_frames", self.num_frames, minimum=1)
        if len(self.frame_indices) != self.num_frames:
            raise ValueError(
                f"frame_indices must list num_frames = {self.num_frames} indices; "
                f"got {len(self.frame_indices)}"
            )


@dataclass(frozen=True)
class PromptConfig:
    """Which interface the prompt is for, the step budget it announces, and the sections left out."""

    interface: str = "code"
    max_steps: int = 10
    drop: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        check_choice("interface", self.interface, INTERFACES)
        check_int("max_steps", self.max_steps, minimum=1)
        drop = frozenset(self.drop)
        unknown = sorted(drop - set(SECTIONS))
        if unknown:
            raise ValueError(f"drop must name sections out of {SECTIONS}; unknown: {unknown}")
        object.__setattr__(self, "drop", drop)


# --------------------------------------------------------------------------------------------
# tool documentation from the bound objects' docstrings


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return "(undocumented)"
    text = inspect.cleandoc(doc)
    return text.split("\n\n", 1)[0].replace("\n", " ")


def _methods(obj: object) -> list[tuple[str, object]]:
    out = []
    for name in sorted(dir(obj)):
        if name.startswith("_"):
            continue
        member = getattr(obj, name, None)
        if callable(member):
            out.append((name, member))
    return out


def _signature(fn: object) -> str:
    try:
        return str(inspect.signature(fn))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def tool_documentation(bound: Mapping[str, object]) -> str:
    """One line per public callable of each bound object: ``name.method(signature): first docstring
    paragraph``. ``bound`` maps the kernel name (``"tools.SAM3"``, ``"vlm"`` …) to the object."""
    if not isinstance(bound, Mapping):
        raise TypeError(f"bound must be a mapping name -> object; got {type(bound).__name__}")
    lines = []
    for prefix, obj in bound.items():
        methods = _methods(obj)
        lines.append(f"{prefix}: {_first_paragraph(type(obj).__doc__ if methods else obj.__doc__)}")
        for name, member in methods:
            lines.append(f"  {prefix}.{name}{_signature(member)}: {_first_paragraph(member.__doc__)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# the sections


def _header(cfg: PromptConfig) -> str:
    acting = {
        "code": "You act by writing one Python cell per step into a live kernel whose variables persist",
        "single_pass": "You act by writing a single Python program, which runs once",
        "tool_call": "You act by issuing one JSON tool call per step; each result is stored in a variable",
        "no_tool": "You answer from the images alone",
    }[cfg.interface]
    return (
        "You are a spatial-reasoning agent. You answer questions about where objects are, how they relate "
        "and how the camera or objects move in 3D, from a set of video frames or views. The frames are "
        f"bound to `InputImages` and their description to `Metadata`. {acting}."
    )


def _response_format(cfg: PromptConfig) -> str:
    if cfg.interface == "tool_call":
        return (
            "Response format: first a short **Reasoning** paragraph, then exactly one JSON object "
            '`{"tool": "<name>", "args": {...}}` in a ```json block. Argument values are expressions over '
            'kernel names (e.g. `"InputImages[3]"`, `"result_2"`); literal text is quoted inside: '
            "`\"'red chair'\"`. No arithmetic, no nested calls."
        )
    if cfg.interface == "no_tool":
        return "Response format: reason step by step, then give the final answer as \\boxed{answer}."
    return (
        "Response format (mandatory), four headings in this order:\n"
        "**Purpose**: what this step is for.\n"
        "**Reasoning**: what you know so far and why this step is next.\n"
        "**Next Goal**: what the code must establish.\n"
        "**Code**: exactly one ```python block."
    )


#: The sections whose text is the same for every interface that has them.
_STATIC: dict[str, str] = {
    "show_api": (
        "`show(x)` puts an image, a list of images or a figure into your next observation (plt.show() is "
        "captured too). Use it to check a mask or a plot with your own eyes. The session has a budget of "
        "250 shown images."
    ),
    "vlm_api": (
        "`vlm.locate(images, question)` asks an isolated grounding model for the 0–1000 normalised position "
        "of the object named in the question in each image (or 'Not visible'). `vlm.ask_with_thinking("
        "images, question)` asks an isolated visual reasoner a question in words; its answers are not "
        "metric and may be wrong. Ask neutral questions: never put your own conclusion into the question. "
        "Coordinates come from `vlm.locate` or from masks, never from eyeballing an image."
    ),
    "coordinate_system": (
        "Coordinate systems. Pixel space: (x right, y down) in an image; motion in pixels is ambiguous "
        "(the camera moves too). Camera space: OpenCV axes, x right, y down, z forward. World space (from "
        "`tools.Reconstruct`): +Y up, the ground at Y = 0, the first reconstructed camera at the origin "
        "looking along -Z, +X its right; extrinsics are camera-to-world with columns right, down, forward, "
        "position. Object-centred space: the object's own front and left. To decide left/right/front/behind "
        "for a viewer, take the viewer's right and forward axes at that same frame and the sign of the dot "
        "product of (target - viewer) with each."
    ),
    "robust_computation": (
        "Robust computation: prefer medians to means over masked points; drop low-confidence points; check "
        "that a quantity agrees across two or more frames; keep metric units; sanity-check magnitudes "
        "(rooms are a few metres across, furniture under two metres tall)."
    ),
    "evidence_hierarchy": (
        "Evidence: support an answer with at least two independent lines of evidence where you can. When "
        "two sources disagree, find the concrete error (an empty or merged mask, a wrong frame, a wrong "
        "axis) instead of picking the answer you like."
    ),
    "return_answer": (
        "Answering: call `ReturnAnswer(x)` with a str (the option text, for multiple choice), an int or a "
        "float (metres for distances). It ends the session when the value is valid; you have at most 5 "
        "attempts."
    ),
}
#: Sections a no-tool prompt leaves out (it has no kernel).
_NOT_FOR_NO_TOOL: tuple[str, ...] = ("show_api", "vlm_api", "available_tools", "code_rules", "return_answer")


def _code_rules(cfg: PromptConfig) -> str:
    if cfg.interface in ("tool_call", "no_tool"):
        return ""
    return (
        "Code rules: numpy (np), math, collections, itertools, functools, matplotlib.pyplot (plt) and scipy "
        "are imported. Imports of os, sys, subprocess, io, pathlib, pickle, torch and similar, and the "
        "builtins open, exec, eval, compile, __import__, input and breakpoint are rejected before running. "
        "Never rebind tools, InputImages, Metadata, ReturnAnswer, show, feedback, RefImages or vlm. Print "
        "what you need to see: only printed output, variable summaries and shown images come back."
    )


def _workflow(cfg: PromptConfig) -> str:
    if cfg.interface == "single_pass":
        return (
            "Single-turn mode: your program runs exactly once and you will not see its output before it "
            "ends. Gather all the evidence you need in this one program and finish it with ReturnAnswer; "
            "there is no second chance. Budget: 1 step."
        )
    if cfg.interface == "no_tool":
        return "Look at the frames carefully, reason about 3D layout, then answer."
    return (
        "Workflow: follow the plan; one logical step per response; inspect every intermediate result "
        "before building on it; when a tool returns nothing or something implausible, try another route; "
        f"prefer quantitative methods; cross-validate before answering. Budget: {cfg.max_steps} steps."
    )


def _session_input(cfg: PromptConfig, session: SessionInfo | None) -> str:
    if session is None:
        return ""
    kind = "a video" if session.is_video else "a set of views"
    indices = ", ".join(str(i) for i in session.frame_indices)
    text = (
        f"Session input: {kind} of {session.num_frames} frames (fps {session.fps:g}). InputImages[k] is the "
        f"k-th frame; its absolute frame index is InputImages[k].frame_index (indices: {indices}); slices "
        "keep absolute indices."
    )
    if session.key_frames:
        mapping = ", ".join(f"image {k} = frame {f}" for k, f in enumerate(session.key_frames))
        text += f" Attached key frames: {mapping}."
    return text


def section_text(
    name: str, config: PromptConfig, *, tool_docs: str = "", session: SessionInfo | None = None
) -> str:
    """The text of section ``name`` for ``config`` (empty when it does not apply to the interface)."""
    check_choice("name", name, SECTIONS)
    if config.interface == "no_tool" and name in _NOT_FOR_NO_TOOL:
        return ""
    if name in _STATIC:
        return _STATIC[name]
    if name == "available_tools":
        return "Available tools (bound in the kernel):\n" + (tool_docs or "(none)")
    if name == "session_input":
        return _session_input(config, session)
    builders = {"header": _header, "response_format": _response_format, "code_rules": _code_rules}
    return builders.get(name, _workflow)(config)


def system_prompt(
    config: PromptConfig | None = None, *, tool_docs: str = "", session: SessionInfo | None = None
) -> str:
    """The main agent's system prompt: every section of :data:`SECTIONS` not in ``config.drop``, each under a
    ``## name`` heading, in order."""
    config = PromptConfig() if config is None else config
    if not isinstance(config, PromptConfig):
        raise TypeError(f"config must be a PromptConfig; got {type(config).__name__}")
    parts = []
    for name in SECTIONS:
        if name in config.drop:
            continue
        text = section_text(name, config, tool_docs=tool_docs, session=session)
        if text:
            parts.append(f"## {name}\n{text}")
    return "\n\n".join(parts)


def planner_prompt(question: str, *, tool_docs: str = "", session: SessionInfo | None = None) -> str:
    """The planner's prompt (a separate session, paper §3.2 step 1): analyse the task and its frame of
    reference, list the information needed and the tools, verification steps as pseudocode, and end with a
    ``### CHECKLIST`` JSON list of ``{"priority": "HIGH"|"MEDIUM"|"LOW", "description": ...}``. The planner
    does not answer the question."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    session_text = _session_input(PromptConfig(), session)
    return (
        "You plan, you do not answer. Another agent will carry out your plan with the tools below.\n\n"
        f"Question: {question}\n\n{session_text}\n\nTools:\n{tool_docs or '(none)'}\n\n"
        "Write: (1) task analysis, including which frame of reference the question uses (pixel, camera, "
        "world or object-centred); (2) the information needed; (3) the tools to use; (4) verification "
        "steps as pseudocode, never the answer; then a heading ### CHECKLIST followed by a JSON list of "
        '{"priority": "HIGH" | "MEDIUM" | "LOW", "description": "..."} items.'
    )


def reflection_prompt() -> str:
    """The optional reflection message (off by default; paper §3.2): a JSON verdict on the trajectory."""
    return (
        "Review the trajectory so far. Check for logical, geometric and frame-of-reference errors, tool "
        "misuse, drifting from the goal, loops, claims no tool supports, tool inputs never verified, a tool "
        "output whose shape does not fit the question, being stuck on 'Cannot determine', leading questions "
        "to the VLM, and coordinates guessed by eye. Answer with JSON only: "
        '{"status": "ok" | "concern", "explanation": "...", "suggestion": "...", '
        '"checklist_ops": [{"op": "verify" | "flag" | "add", "item": "..."}]}.'
    )


def user_message(question: str, choices: tuple[str, ...] = ()) -> str:
    """The first user message: the question and, for multiple choice, the options."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty string")
    if choices:
        options = "\n".join(f"{chr(65 + k)}. {c}" for k, c in enumerate(choices))
        return f"{question}\nOptions:\n{options}\nAnswer with the option text."
    return question
