"""AST win attribution: composition, control flow, neutral; data flow across cells."""

from __future__ import annotations

import pytest

from neurips26.spatialclaw.attribution import LABELS, Attribution, attribute, attribution_shares
from neurips26.spatialclaw.react import translate

SEGMENT = [
    "masks_a = tools.SAM3.segment_image_by_text(InputImages[0], 'chair')\nprint(masks_a.num_objects)",
    "masks_b = tools.SAM3.segment_image_by_text(InputImages[0], 'sofa')",
    "recon = tools.Reconstruct.Reconstruct(InputImages)",
    "ca = masks_a.get_centroid_3d(recon, frame=0, object=0)\n"
    "cb = masks_b.get_centroid_3d(recon, frame=0, object=0)",
]


def test_composition_across_cells():
    result = attribute([*SEGMENT, "d = float(np.linalg.norm(ca - cb))\nprint(d)", "ReturnAnswer(d)"])
    assert result == Attribution("composition", (4,), (), result.reason)
    assert result.reason.startswith("cell 4, line 1") and "ca - cb" in result.reason


def test_control_flow_on_a_tool_result():
    cells = [
        "masks = tools.SAM3.segment_image_by_text(InputImages[0], 'seat')",
        "if masks.num_objects == 0:\n    point = vlm.locate(InputImages[0], 'seat')\n"
        "else:\n    print('found')",
        "ReturnAnswer(vlm.ask_with_thinking(InputImages, 'Which is closer?'))",
    ]
    result = attribute(cells)
    assert (result.label, result.composition_cells, result.control_flow_cells) == ("control_flow", (), (1,))
    assert "`if` tests masks.num_objects == 0" in result.reason


def test_tool_methods_printing_and_single_operand_ops_are_neutral():
    cells = [
        *SEGMENT,
        "pts = recon.points[0][masks_a.get_mask(0, 0)]\nprint(ca, cb, len(pts))",
        "centre = np.median(pts, axis=0)\nn = -centre\nshow(masks_a.visualize(0))",
        "ReturnAnswer(vlm.ask_with_thinking(InputImages, 'Which is closer?'))",
    ]
    result = attribute(cells)
    assert result == Attribution("neutral", (), (), result.reason)


def test_translated_tool_call_trajectories_are_neutral():
    calls = [
        {
            "tool": "tools.SAM3.segment_image_by_text",
            "args": {"image": "InputImages[0]", "prompt": "'chair'"},
        },
        {"tool": "tools.Reconstruct.Reconstruct", "args": {"frames": "InputImages"}},
        {
            "tool": "tools.Geometry.euclidean_distance",
            "args": {"p1": "result_1.get_centroid_3d(result_2, frame=0)"},
        },
        {"tool": "ReturnAnswer", "args": {"answer": "result_3"}},
    ]
    known = ["InputImages", "tools", "vlm"]
    cells = []
    for k, call in enumerate(calls, start=1):
        cells.append(translate(call, k, known_names=known))
        known.append(f"result_{k}")
    assert attribute(cells).label == "neutral"


@pytest.mark.parametrize(
    "cell",
    [
        "x = ca @ cb",
        "x = np.dot(ca, cb)",
        "x = ca.dot(cb)",
        "x = np.stack([ca, cb]).mean(axis=0)",
        "x = cKDTree(recon.points[0].reshape(-1, 3)).query(ca)",
        "total = ca\ntotal += cb",
        "ReturnAnswer('A' if ca[2] < cb[2] else 'B')",
        "print(f'{ca[0] - cb[0]:.2f}')",
        "x = math.atan2(ca[2], cb[0])",
    ],
)
def test_composition_forms(cell):
    result = attribute([*SEGMENT, cell])
    assert result.label == "composition" and result.composition_cells == (4,)


def test_comparison_in_a_conditional_expression_is_both():
    result = attribute([*SEGMENT, "ReturnAnswer('A' if ca[2] < cb[2] else 'B')"])
    assert (result.composition_cells, result.control_flow_cells) == ((4,), (4,))


@pytest.mark.parametrize(
    "cell",
    [
        "for k in range(masks_a.num_objects):\n    print(k)",
        "sizes = [masks_a.get_mask(0, k).sum() for k in range(masks_a.num_objects)]",
        "i = 0\nwhile i < masks_a.num_objects:\n    i = i + 1",
        "big = [k for k in range(5) if masks_a.num_objects > k]",
        "match masks_a.num_objects:\n    case 0:\n        print('none')",
        "if (n := masks_a.num_objects) > 1:\n    print(n)",
    ],
)
def test_control_flow_forms(cell):
    result = attribute([*SEGMENT[:1], cell])
    assert result.label == "control_flow" and result.control_flow_cells == (1,)


def test_data_flow_through_aliases_attributes_and_subscripts():
    cells = [
        "m = tools.SAM3.segment_image_by_text(InputImages[0], 'ball')",
        "x = m.points[0]",
        "y = x\nz = y * 2",  # one tool-derived operand: not composition
        "w = y - x",
    ]
    result = attribute(cells)
    assert result.composition_cells == (3,)


def test_rebinding_to_a_plain_value_clears_a_name():
    cells = [
        "x = tools.SAM3.segment_image_by_text(InputImages[0], 'ball')",
        "x = np.zeros(3)",
        "print(x + 1, x - x)",
    ]
    assert attribute(cells).label == "neutral"


def test_containers_filled_by_append_and_item_stores_are_derived():
    appended = [
        *SEGMENT,
        "cents = []\nfor k in range(2):\n    cents.append(masks_a.get_centroid_3d(recon, frame=k))",
        "d = cents[0] - cents[1]",
    ]
    result = attribute(appended)
    assert result.composition_cells == (5,) and result.control_flow_cells == ()
    stored = [*SEGMENT, "found = {}\nfound['a'] = ca\nfound['b'] = cb", "v = found['a'] - found['b']"]
    assert attribute(stored).composition_cells == (5,)


def test_loop_targets_and_with_targets_are_derived():
    result = attribute([*SEGMENT, "for c in [ca, cb]:\n    print(c - ca)"])
    assert (result.composition_cells, result.control_flow_cells) == ((4,), (4,))


def test_user_functions():
    called = attribute([*SEGMENT, "def dist(a, b):\n    return np.linalg.norm(a - b)", "d = dist(ca, cb)"])
    assert called.composition_cells == (5,)
    closure = attribute([*SEGMENT, "def gap():\n    return ca - cb", "g = gap()\nif g[0] > 0:\n    print(1)"])
    assert closure.composition_cells == (4,) and closure.control_flow_cells == (5,)


def test_seed_names_and_custom_tool_roots():
    assert attribute(["print(result_1 - result_2)"]).label == "neutral"
    assert attribute(["print(result_1 - result_2)"], ("result_1", "result_2")).label == "composition"
    cells = ["a = sensors.read(0)\nb = sensors.read(1)", "print(a - b)"]
    assert attribute(cells).label == "neutral"
    assert attribute(cells, tool_roots=("sensors",)).label == "composition"


def test_unparsable_cells_are_skipped():
    result = attribute([*SEGMENT, "d = ca - (", "ReturnAnswer(1)"])
    assert result.label == "neutral"


def test_attribute_validation():
    with pytest.raises(TypeError, match="cells"):
        attribute("x = 1")
    with pytest.raises(TypeError, match="cells"):
        attribute([1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="tool_result_names"):
        attribute([], "result_1")


def test_shares():
    labels = ["composition", "composition", "control_flow", Attribution("neutral", (), (), "")]
    assert attribution_shares(labels) == {"composition": 0.5, "control_flow": 0.25, "neutral": 0.25}
    assert attribution_shares([]) == dict.fromkeys(LABELS, 0.0)
    with pytest.raises(ValueError, match="labels"):
        attribution_shares(["win"])
