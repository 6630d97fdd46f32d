"""The prompt builder: every section present and ablatable, interface-specific parts, docs from docstrings."""

from __future__ import annotations

import pytest

from neurips26.spatialclaw.prompts import (
    INTERFACES,
    SECTIONS,
    PromptConfig,
    SessionInfo,
    planner_prompt,
    reflection_prompt,
    section_text,
    system_prompt,
    tool_documentation,
    user_message,
)

SESSION = SessionInfo(num_frames=3, frame_indices=(4, 5, 6), fps=8.0, is_video=True, key_frames=(4, 6))


class _Geometry:
    """Exact geometry helpers."""

    @staticmethod
    def euclidean_distance(p1, p2):
        """Distance between two points, in their units.

        More text that the documentation leaves out."""
        return 0.0


def test_code_prompt_has_every_section_in_order():
    text = system_prompt(PromptConfig("code", max_steps=7), tool_docs="tools.X: doc", session=SESSION)
    positions = [text.index(f"## {name}\n") for name in SECTIONS]
    assert positions == sorted(positions)
    assert "Budget: 7 steps" in text and "**Next Goal**" in text and "tools.X: doc" in text
    assert "indices: 4, 5, 6" in text and "image 1 = frame 6" in text


@pytest.mark.parametrize("name", SECTIONS)
def test_each_section_can_be_dropped(name):
    text = system_prompt(PromptConfig("code", drop=frozenset({name})), tool_docs="docs", session=SESSION)
    assert f"## {name}\n" not in text
    assert all(f"## {other}\n" in text for other in SECTIONS if other != name)


def test_interfaces_share_content_and_differ_in_how_to_act():
    prompts = {i: system_prompt(PromptConfig(i), tool_docs="docs", session=SESSION) for i in INTERFACES}
    shared = section_text("robust_computation", PromptConfig("code"))
    assert all(shared in prompts[i] for i in INTERFACES)  # same content for every interface
    assert "Single-turn mode" in prompts["single_pass"] and "Budget: 1 step" in prompts["single_pass"]
    assert '{"tool"' in prompts["tool_call"] and "## code_rules" not in prompts["tool_call"]
    assert "\\boxed{" in prompts["no_tool"] and "## available_tools" not in prompts["no_tool"]


def test_tool_documentation_comes_from_docstrings():
    docs = tool_documentation({"tools.Geometry": _Geometry()})
    assert docs.splitlines()[0] == "tools.Geometry: Exact geometry helpers."
    assert "tools.Geometry.euclidean_distance(p1, p2): Distance between two points, in their units." in docs
    assert "More text" not in docs


def test_planner_reflection_and_user_message():
    plan = planner_prompt("How far apart are the red chair and the blue table?", session=SESSION)
    assert "### CHECKLIST" in plan and "never the answer" in plan
    assert '"status": "ok" | "concern"' in reflection_prompt()
    assert user_message("Left or right?", ("left", "right")).endswith("Answer with the option text.")
    assert "B. right" in user_message("Left or right?", ("left", "right"))


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="interface"):
        PromptConfig("json")
    with pytest.raises(ValueError, match="max_steps"):
        PromptConfig(max_steps=0)
    with pytest.raises(ValueError, match="drop"):
        PromptConfig(drop=frozenset({"nonsense"}))
    with pytest.raises(ValueError, match="frame_indices"):
        SessionInfo(num_frames=2, frame_indices=(1,), fps=1.0, is_video=False)
    with pytest.raises(ValueError, match="question"):
        planner_prompt("  ")
    with pytest.raises(TypeError, match="config"):
        system_prompt("code")  # type: ignore[arg-type]
