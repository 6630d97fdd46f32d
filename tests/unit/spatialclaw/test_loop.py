"""The agent loop end to end on a real scene: every interface, both executors, forced termination."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from neurips26.llm.offline import Scripted
from neurips26.spatialclaw.executor import InProcessExecutor, JupyterKernelExecutor
from neurips26.spatialclaw.loop import AgentConfig, run_episode
from neurips26.spatialclaw.parser import format_response
from neurips26.spatialclaw.questions import question_suite, scene_of
from neurips26.spatialclaw.scenes import frames_for, visible_frames
from neurips26.spatialclaw.scoring import score
from neurips26.spatialclaw.session import SessionSpec, build_namespace, tool_docs_for

QUESTION = question_suite(("distance",), per_family=1, seed=0)[0]
SPEC = SessionSpec(QUESTION.scene_seed, QUESTION.scene_kind, QUESTION.scene_mover, noise=None)
FRAME = min(
    set(visible_frames(frames_for(scene_of(QUESTION)), QUESTION.objects[0])).intersection(
        visible_frames(frames_for(scene_of(QUESTION)), QUESTION.objects[1])
    )
)
A, B = QUESTION.names

MEASURE = f"""
recon = tools.Reconstruct.Reconstruct(InputImages)
img = InputImages[{FRAME}]
m_a = tools.SAM3.segment_image_by_text(img, "{A}")
m_b = tools.SAM3.segment_image_by_text(img, "{B}")
p_a = m_a.get_centroid_3d(recon, {FRAME})
p_b = m_b.get_centroid_3d(recon, {FRAME})
d = float(np.linalg.norm(p_a - p_b))
print(f"MEASURED {{d:.4f}}")
"""


def _code_policy(messages):
    """Plans, measures in one cell, answers in the next from the printed value (as an LLM would)."""
    last = messages[-1].content
    if "You plan, you do not answer" in last:
        return 'Measure both centroids.\n### CHECKLIST\n[{"priority": "HIGH", "description": "centroids"}]'
    if "MEASURED " not in last:
        return format_response("measure", "need both centroids", "print the distance", MEASURE.strip())
    value = float(last.split("MEASURED ")[1].split()[0])
    return format_response("answer", "measured", "submit", f"ReturnAnswer({value})")


def _tool_call_policy(messages):
    steps = sum(m.role == "assistant" for m in messages)
    image = f"InputImages[{FRAME}]"
    calls = [
        {"tool": "tools.SAM3.segment_image_by_text", "args": {"image": image, "prompt": f"'{A}'"}},
        {"tool": "tools.SAM3.segment_image_by_text", "args": {"image": image, "prompt": f"'{B}'"}},
        {"tool": "tools.Reconstruct.Reconstruct", "args": {"frames": "InputImages"}},
        {
            "tool": "tools.Geometry.euclidean_distance",
            "args": {
                "p1": f"result_1.get_centroid_3d(result_3, {FRAME})",
                "p2": f"result_2.get_centroid_3d(result_3, {FRAME})",
            },
        },
    ]
    if "You plan, you do not answer" in messages[-1].content:
        return "plan\n### CHECKLIST\n[]"
    if steps < len(calls):
        return "**Reasoning** next call\n```json\n" + json.dumps(calls[steps]) + "\n```"
    return '{"tool": "ReturnAnswer", "args": {"x": "result_4"}}'


def _stubborn(messages):
    """Never answers through the kernel; its no-tool answer is 2.5."""
    if "\\boxed" in messages[0].content:
        return "I guess \\boxed{2.5}"
    return format_response("look", "nothing", "print", "print(len(InputImages))")


def test_code_interface_answers_from_the_printed_value_in_process():
    with InProcessExecutor() as ex:
        episode = run_episode(QUESTION.text, SPEC, Scripted(_code_policy), ex, AgentConfig("code"))
    assert not episode.forced and len(episode.steps) == 2 and episode.plan.startswith("Measure")
    printed = float(episode.steps[0].feedback.split("MEASURED ")[1].split()[0])
    assert episode.answer == pytest.approx(printed)
    assert score(QUESTION.kind, episode.answer, QUESTION.answer) >= 0.7  # centroids of visible surfaces


def test_kernel_and_in_process_transcripts_are_equal():
    cfg = AgentConfig("code")
    with InProcessExecutor() as ex:
        local = run_episode(QUESTION.text, SPEC, Scripted(_code_policy), ex, cfg)
    with JupyterKernelExecutor() as ex:
        kernel = run_episode(QUESTION.text, SPEC, Scripted(_code_policy), ex, cfg)
    assert [s.result for s in local.steps] == [s.result for s in kernel.steps]
    assert local.answer == kernel.answer and local.messages == kernel.messages


def test_tool_call_interface_chains_results_without_arithmetic():
    with InProcessExecutor() as ex:
        episode = run_episode(QUESTION.text, SPEC, Scripted(_tool_call_policy), ex, AgentConfig("tool_call"))
    assert episode.steps[0].code.startswith("result_1 = tools.SAM3.segment_image_by_text(")
    assert episode.steps[-1].code == "ReturnAnswer(result_4)"
    assert not episode.forced and score(QUESTION.kind, episode.answer, QUESTION.answer) >= 0.7


def test_budget_exhaustion_forces_a_no_tool_answer():
    with InProcessExecutor() as ex:
        episode = run_episode(QUESTION.text, SPEC, Scripted(_stubborn), ex, AgentConfig("code", max_steps=3))
    assert episode.forced and episode.answer == "2.5" and len(episode.steps) == 3
    with InProcessExecutor() as ex:
        single = run_episode(QUESTION.text, SPEC, Scripted(_stubborn), ex, AgentConfig("single_pass"))
    assert single.forced and len(single.steps) == 1 and single.plan is None


def test_no_tool_interface_needs_no_executor():
    episode = run_episode(QUESTION.text, SPEC, Scripted(_stubborn), None, AgentConfig("no_tool"))
    assert episode.answer == "2.5" and episode.steps == () and not episode.forced


def test_namespace_holds_the_pre_bound_names():
    ns = build_namespace(SPEC)
    for name in ("InputImages", "Metadata", "tools", "vlm", "ReturnAnswer", "show", "np", "plt", "scipy"):
        assert name in ns, name
    assert ns["InputImages"].frame_indices == list(range(scene_of(QUESTION).num_frames))


def test_the_kernel_side_never_imports_torch():
    code = (
        "import sys\n"
        "from neurips26.spatialclaw.session import SessionSpec, build_namespace\n"
        f"build_namespace(SessionSpec({SPEC.scene_seed}, {SPEC.scene_kind!r}, noise=None))\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="interface"):
        AgentConfig("json")
    with pytest.raises(ValueError, match="max_steps"):
        AgentConfig(max_steps=0)
    with pytest.raises(ValueError, match="executor"):
        run_episode(QUESTION.text, SPEC, Scripted(_stubborn), None, AgentConfig("code"))
    with pytest.raises(TypeError, match="model"):
        run_episode(QUESTION.text, SPEC, object(), None, AgentConfig("no_tool"))
    with pytest.raises(ValueError, match="scene_kind"):
        SessionSpec(1, "panorama")


def _fails_twice_then_answers(messages):
    steps = sum(m.role == "assistant" for m in messages)
    if "You plan, you do not answer" in messages[-1].content:
        return "plan\n### CHECKLIST\n[]"
    if steps == 0:
        return format_response("a", "b", "c", "x = 1 / 0")
    if steps == 1:
        return "no code block at all"
    return format_response("a", "b", "c", "ReturnAnswer(1.5)")


def test_failed_steps_are_condensed_in_the_history():
    with InProcessExecutor() as ex:
        episode = run_episode(QUESTION.text, SPEC, Scripted(_fails_twice_then_answers), ex, AgentConfig())
    assert [s.failed for s in episode.steps] == [True, True, False] and episode.answer == 1.5
    users = [m.content for m in episode.messages if m.role == "user"]
    assert users[1] == "Step 1/10 failed at cell line 1: ZeroDivisionError: division by zero"
    assert users[2].startswith("Your response could not be executed")  # the latest stays whole


def test_the_prompts_document_the_tools_the_session_binds():
    with InProcessExecutor() as ex:
        full = run_episode(QUESTION.text, SPEC, Scripted(_stubborn), ex, AgentConfig("code", max_steps=1))
        bare = SessionSpec(SPEC.scene_seed, SPEC.scene_kind, utilities=False)
        ablated = run_episode(QUESTION.text, bare, Scripted(_stubborn), ex, AgentConfig("code", max_steps=1))
    system = full.messages[0].content
    assert "tools.SAM3.segment_video_by_text(" in system and "vlm.locate(" in system
    assert "tools.Geometry.euclidean_distance(" in system
    assert "tools.Geometry.euclidean_distance(" not in ablated.messages[0].content
    assert "tools.SAM3.segment_video_by_text(" in ablated.messages[0].content
    assert tool_docs_for(SPEC) in system  # the same text the session helper gives
