"""The records a reader steps through in a transcript: an :class:`~.loop.Episode` cut into the question
(with the plan and the key frames attached), then per step the model's words, the code that ran and the
feedback it read next, with any images ``show()`` sent back; a forced no-tool answer last.

:func:`transcript_frames` makes them; :func:`~.interactive_figures.transcript_figure` draws them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neurips26.spatialclaw.loop import Episode

#: Kinds of transcript record: the question message, a step of the loop, the forced no-tool answer.
TRANSCRIPT_KINDS: tuple[str, ...] = ("question", "step", "forced")
_CODE_BLOCK = re.compile(r"```python\n.*?```", re.DOTALL)


@dataclass(frozen=True)
class TranscriptFrame:
    """One record of a transcript: ``index`` (0 = the question; 1… = the steps; then the forced answer),
    ``kind`` (:data:`TRANSCRIPT_KINDS`), a short ``title``, the model's ``words`` (its reply without the
    python block; for ``kind="question"`` the question and its options), the ``code`` that ran (``None``:
    nothing ran), the ``feedback`` the model read next (for the question: the planner's plan), the
    ``images`` attached to that message as ``(label, PNG bytes)`` (the key frames, or what ``show()``
    registered), whether the step ``failed`` and the ``answer`` it submitted (``None``: none)."""

    index: int
    kind: str
    title: str
    words: str
    code: str | None
    feedback: str
    images: tuple[tuple[str, bytes], ...]
    failed: bool
    answer: str | int | float | None = None


def transcript_frames(episode: Episode) -> list[TranscriptFrame]:
    """The records of ``episode`` in reading order (module docstring). A ``no_tool`` episode (no steps)
    gives the question and its one answer."""
    if not isinstance(episode, Episode):
        raise TypeError(f"episode must be an Episode (from run_episode); got {type(episode).__name__}")
    first = next((m for m in episode.messages if m.role == "user"), None)
    if first is None:
        raise ValueError("episode must hold a user message with the question")
    n_images = len(first.images)
    asked = first.content.split("\n\nPlan:\n", 1)[0]  # the loop appends the plan to the question
    question = TranscriptFrame(
        index=0,
        kind="question",
        title=f"the question ({episode.interface} interface, {n_images} key frame(s) attached)",
        words=asked,
        code=None,
        feedback=episode.plan or "",
        images=tuple((f"key frame {k}", png) for k, png in enumerate(first.images)),
        failed=False,
    )
    out = [question]
    for step in episode.steps:
        result = step.result
        answer = result.answers[-1] if result is not None and result.answers else None
        status = "failed" if step.failed else "ran"
        if step.code is None:
            status = "could not be executed"
        title = f"step {step.index}: the cell {status}" + (
            f"; answer {answer!r}" if answer is not None else ""
        )
        out.append(
            TranscriptFrame(
                index=step.index,
                kind="step",
                title=title,
                words=_CODE_BLOCK.sub(
                    "[the python block: shown below as the code that ran]", step.response
                ).strip(),
                code=step.code,
                feedback=step.feedback,
                images=tuple(result.images) if result is not None else (),
                failed=step.failed,
                answer=answer,
            )
        )
    if episode.forced or not episode.steps:
        reply = next((m.content for m in reversed(episode.messages) if m.role == "assistant"), "")
        kind = "forced" if episode.forced and episode.interface != "no_tool" else "step"
        title = (
            "forced termination: one no-tool answer" if kind == "forced" else "the one no-tool answer"
        ) + f"; answer {episode.answer!r}"
        out.append(
            TranscriptFrame(
                index=len(episode.steps) + 1,
                kind=kind,
                title=title,
                words=reply,
                code=None,
                feedback="",
                images=(),
                failed=False,
                answer=episode.answer,
            )
        )
    return out


__all__ = ["TRANSCRIPT_KINDS", "TranscriptFrame", "transcript_frames"]
