"""The ReAct translator: one JSON call → one line of Python; argument expressions in a restricted AST."""

from __future__ import annotations

import ast

import pytest

from neurips26.spatialclaw.react import ToolCallError, check_tool_name, extract_call, translate
from neurips26.spatialclaw.safety import check_code

KNOWN = ("InputImages", "Metadata", "tools", "vlm", "result_1", "result_2", "result_3")


def tr(tool: str, args: dict, step: int = 4) -> str:
    return translate({"tool": tool, "args": args}, step, known_names=KNOWN)


def test_paper_example():
    call = {"tool": "tools.Geometry.euclidean_distance", "args": {"p1": "result_2", "p2": "result_3"}}
    assert (
        translate(call, 4, known_names=KNOWN)
        == "result_4 = tools.Geometry.euclidean_distance(p1=result_2, p2=result_3)"
    )


def test_expressions_literals_and_containers():
    line = tr(
        "tools.SAM3.segment_image_by_text",
        {"img": "InputImages[3]", "prompt": "'red chair'", "k": 2, "t": 0.5, "flag": True, "none": None},
        step=1,
    )
    assert line == (
        "result_1 = tools.SAM3.segment_image_by_text(img=InputImages[3], prompt='red chair', k=2, t=0.5, "
        "flag=True, none=None)"
    )
    line = tr(
        "vlm.locate", {"images": ["InputImages[0]", "InputImages[-1]"], "question": "'where is the lamp?'"}
    )
    assert (
        line
        == "result_4 = vlm.locate(images=[InputImages[0], InputImages[-1]], question='where is the lamp?')"
    )
    line = tr(
        "tools.Draw.draw_point",
        {"opts": {"color": "'red'", "radius": 3}, "p": "result_1.points[2][10:20, ::2]"},
    )
    assert (
        line == "result_4 = tools.Draw.draw_point(opts={'color': 'red', 'radius': 3}, "
        "p=result_1.points[2][10:20, ::2])"
    )


def test_one_method_call_rooted_at_a_kernel_name():
    line = tr(
        "tools.Geometry.euclidean_distance",
        {"p1": "result_3.get_centroid_3d(result_1, frame=4)", "p2": "-1.5"},
    )
    assert (
        line == "result_4 = tools.Geometry.euclidean_distance("
        "p1=result_3.get_centroid_3d(result_1, frame=4), p2=-1.5)"
    )
    # one call per leaf: each list element may have its own
    line = tr("tools.Mask.iou", {"masks": ["result_1.get_mask(0, 0)", "result_1.get_mask(0, 1)"]})
    assert line == "result_4 = tools.Mask.iou(masks=[result_1.get_mask(0, 0), result_1.get_mask(0, 1)])"
    assert tr("tools.Time.frame_to_seconds", {"f": "result_2.frame_indices[0]"}).endswith(
        "(f=result_2.frame_indices[0])"
    )


def test_show_and_return_answer_have_no_assignment():
    assert tr("ReturnAnswer", {"answer": "'B'"}) == "ReturnAnswer('B')"
    assert tr("ReturnAnswer", {"value": 2.5}) == "ReturnAnswer(2.5)"
    assert (
        tr("show", {"label": "'mask'", "image": "result_1.visualize(0)"})
        == "show(result_1.visualize(0), label='mask')"
    )


def test_text_with_prose_and_json_fence():
    call = '{"tool": "tools.Geometry.euclidean_distance", "args": {"p1": "result_1", "p2": "result_2"}}'
    text = f"I will measure.\n```json\n{call}\n```"
    assert (
        translate(text, 3, known_names=KNOWN)
        == "result_3 = tools.Geometry.euclidean_distance(p1=result_1, p2=result_2)"
    )
    bare = 'Thinking {not json}. {"tool": "ReturnAnswer", "args": {"a": "\'A\'"}} trailing'
    assert translate(bare, 9, known_names=KNOWN) == "ReturnAnswer('A')"
    assert extract_call('{"tool": "show"}') == {"tool": "show"}


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("a+b", "binary operator"),
        ("result_1 + result_2", "binary operator"),
        ("result_1 @ result_2", "binary operator"),
        ("[x for x in result_1]", "comprehension"),
        ("(x for x in result_1)", "comprehension"),
        ("{k: 1 for k in result_1}", "comprehension"),
        ("result_1.f(result_2.g())", "nested call"),
        ("f(g(x))", "nested call"),
        ("np.mean(result_1)", "method call"),
        ("len(result_1)", "method call"),
        ("chair.get(0)", "method call"),
        ("result_1.get_mask(0)[0].sum()", "method call"),
        ("[result_1.f(), result_2.g()]", "one call"),
        ("chair", "unknown name"),
        ("red chair", "syntax"),
        ("result_1 > 0", "comparison"),
        ("result_1 and result_2", "boolean operator"),
        ("lambda: 1", "lambda"),
        ("result_1 if result_2 else result_3", "conditional expression"),
        ("f'{result_1}'", "f-string"),
        ("-result_1", "unary operator"),
        ("not result_1", "unary operator"),
        ("result_1.f(*result_2)", "starred"),
        ("result_1.f(**result_2)", "starred"),
        ("{**result_1}", "starred"),
        ("result_1.__class__", "private attribute"),
        ("(y := 3)", "walrus"),
        ("{1, 2}", "not allowed"),
    ],
)
def test_restricted_argument_ast(value, rule):
    with pytest.raises(ToolCallError, match=rule):
        tr("tools.Geometry.euclidean_distance", {"p1": value, "p2": "result_2"})


def test_strings_in_lists_are_expressions_too():
    with pytest.raises(ToolCallError, match="binary operator"):
        tr("vlm.locate", {"images": ["InputImages[0]", "result_1 * 2"]})


def test_np_is_not_kernel_bound_unless_declared():
    with pytest.raises(ToolCallError, match="method call"):
        translate({"tool": "ReturnAnswer", "args": {"a": "np.mean(result_1)"}}, 2, known_names=KNOWN)
    assert translate(
        {"tool": "ReturnAnswer", "args": {"a": "np.mean(result_1)"}}, 2, known_names=(*KNOWN, "np")
    )


@pytest.mark.parametrize(
    "tool",
    [
        "tools.Geometry",
        "tools",
        "os.system",
        "tools.Geometry.x.y",
        "tools._private.m",
        "vlm.other",
        "print",
        "",
        None,
        3,
    ],
)
def test_unknown_tool_names(tool):
    with pytest.raises(ToolCallError, match="unknown tool"):
        translate({"tool": tool, "args": {}}, 1, known_names=KNOWN)


def test_check_tool_name_accepts_the_allowed_shapes():
    for tool in (
        "tools.SAM3.segment_image_by_text",
        "vlm.locate",
        "vlm.ask_with_thinking",
        "show",
        "ReturnAnswer",
    ):
        assert check_tool_name(tool) == tool


def test_malformed_calls():
    with pytest.raises(ToolCallError, match="no JSON object"):
        translate("I think the answer is B.", 1, known_names=KNOWN)
    with pytest.raises(ToolCallError, match="unexpected keys"):
        translate({"tool": "show", "args": {}, "extra": 1}, 1, known_names=KNOWN)
    with pytest.raises(ToolCallError, match="args"):
        translate({"tool": "show", "args": [1]}, 1, known_names=KNOWN)
    with pytest.raises(ToolCallError, match="not a valid keyword"):
        translate({"tool": "show", "args": {"bad name": "result_1"}}, 1, known_names=KNOWN)
    with pytest.raises(ToolCallError, match="exactly one"):
        translate({"tool": "ReturnAnswer", "args": {"a": 1, "b": 2}}, 1, known_names=KNOWN)
    with pytest.raises(ToolCallError, match="finite"):
        translate({"tool": "ReturnAnswer", "args": {"a": float("nan")}}, 1, known_names=KNOWN)


def test_argument_validation():
    with pytest.raises(ValueError, match="step"):
        translate({"tool": "show"}, -1, known_names=KNOWN)
    with pytest.raises(TypeError, match="step"):
        translate({"tool": "show"}, 1.0, known_names=KNOWN)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="known_names"):
        translate({"tool": "show"}, 1, known_names="result_1")
    with pytest.raises(TypeError, match="call"):
        translate(42, 1, known_names=KNOWN)  # type: ignore[arg-type]


def test_every_translation_is_one_safe_line():
    calls = [
        {
            "tool": "tools.SAM3.segment_image_by_text",
            "args": {"image": "InputImages[0]", "prompt": "'chair\\nred'"},
        },
        {
            "tool": "vlm.ask_with_thinking",
            "args": {"images": "InputImages[0:4]", "question": "'Which is closer?'"},
        },
        {"tool": "show", "args": {"x": "result_1.visualize(0)"}},
        {"tool": "ReturnAnswer", "args": {"answer": "[1, 2]"}},
    ]
    for k, call in enumerate(calls, start=1):
        line = translate(call, k, known_names=KNOWN)
        assert "\n" not in line
        check_code(line)
        assert len(ast.parse(line).body) == 1
