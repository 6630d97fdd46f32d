"""SpatialClaw (chapter 16): spatial questions answered by writing one code cell at a time into a live kernel.

The pieces, in the order a sample meets them:

- procedural scenes and their renders (:mod:`.scene_types`, :mod:`.scenes`) and questions with exact
  answers (:mod:`.questions`);
- the kernel's pre-bound names (:mod:`.kernel_types`, :mod:`.session`) and tools: seeded stand-ins for
  SAM3, the reconstruction model and the grounding VLM, and exact geometry, mask, time and drawing
  utilities (:mod:`.tools`, :mod:`.frame_indexed`, :mod:`.per_frame_mask`, :mod:`.reconstruction`);
- the AST safety check (:mod:`.safety`); the executors, a real Jupyter kernel and an in-process twin
  (:mod:`.executor`); the feedback the agent reads (:mod:`.feedback`);
- the prompts (:mod:`.prompts`), the response parser (:mod:`.parser`), the tool-call translator of the
  ReAct baseline (:mod:`.react`) and the loop that drives every interface (:mod:`.loop`); the offline
  reference policy (:mod:`.reference_policy`, the code its cells write: :mod:`.policy_helpers`);
- scoring (:mod:`.scoring`) and the AST-based win attribution (:mod:`.attribution`);
- the chapter's figures: static (:mod:`.figures`) and interactive (:mod:`.interactive_figures`, with the
  transcript records of :mod:`.transcript`).

This package imports no torch: the kernel imports it.
"""

from neurips26.spatialclaw.attribution import Attribution, attribute, attribution_shares
from neurips26.spatialclaw.executor import (
    CellError,
    CellResult,
    Executor,
    InProcessExecutor,
    JupyterKernelExecutor,
)
from neurips26.spatialclaw.feedback import Feedback, format_feedback
from neurips26.spatialclaw.loop import AgentConfig, Episode, Step, run_episode
from neurips26.spatialclaw.parser import (
    ParsedResponse,
    ResponseFormatError,
    format_response,
    parse_boxed,
    parse_checklist,
    parse_response,
)
from neurips26.spatialclaw.prompts import INTERFACES, SECTIONS, PromptConfig, system_prompt
from neurips26.spatialclaw.questions import FAMILIES, GROUPS, Question, question_suite, scene_of
from neurips26.spatialclaw.react import ToolCallError, translate
from neurips26.spatialclaw.safety import UnsafeCodeError, check_code
from neurips26.spatialclaw.scene_types import CATEGORIES, Frames, SceneObject, SpatialScene
from neurips26.spatialclaw.scenes import frames_for, make_scene, render_frames
from neurips26.spatialclaw.scoring import exact_match, mean_relative_accuracy, score
from neurips26.spatialclaw.session import SessionSpec, bootstrap_code, build_namespace
from neurips26.spatialclaw.tools import build_tools, build_vlm

__all__ = [
    "CATEGORIES",
    "FAMILIES",
    "GROUPS",
    "INTERFACES",
    "SECTIONS",
    "AgentConfig",
    "Attribution",
    "CellError",
    "CellResult",
    "Episode",
    "Executor",
    "Feedback",
    "Frames",
    "InProcessExecutor",
    "JupyterKernelExecutor",
    "ParsedResponse",
    "PromptConfig",
    "Question",
    "ResponseFormatError",
    "SceneObject",
    "SessionSpec",
    "SpatialScene",
    "Step",
    "ToolCallError",
    "UnsafeCodeError",
    "attribute",
    "attribution_shares",
    "bootstrap_code",
    "build_namespace",
    "build_tools",
    "build_vlm",
    "check_code",
    "exact_match",
    "format_feedback",
    "format_response",
    "frames_for",
    "make_scene",
    "mean_relative_accuracy",
    "parse_boxed",
    "parse_checklist",
    "parse_response",
    "question_suite",
    "render_frames",
    "run_episode",
    "scene_of",
    "score",
    "system_prompt",
    "translate",
]
