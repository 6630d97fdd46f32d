import numpy as np
import plotly.graph_objects as go
import pytest

from neurips26.plotting import COLORS, OKABE_ITO, add_step_slider, apply_style, method_colors
from neurips26.seeding import seed_everything
from neurips26.versions import report


def test_method_colors_fixed_order():
    colors = method_colors(["ThWF", "RGD", "SPF"])
    assert colors == {"ThWF": OKABE_ITO[0], "RGD": OKABE_ITO[1], "SPF": OKABE_ITO[2]}
    assert COLORS["method"] == OKABE_ITO[0]
    with pytest.raises(TypeError, match="names"):
        method_colors("ThWF")
    with pytest.raises(ValueError, match="names"):
        method_colors([str(i) for i in range(9)])


def test_apply_style_sets_palette():
    import matplotlib as mpl
    import plotly.io as pio

    apply_style()
    assert mpl.rcParams["axes.prop_cycle"].by_key()["color"][0] == OKABE_ITO[0]
    assert pio.templates.default == "neurips26"


def test_seed_everything_is_repeatable():
    import torch  # imported first: seed_everything seeds torch only when it is loaded

    g1 = seed_everything(7)
    a, t1 = np.random.rand(3), torch.rand(2)  # noqa: NPY002
    g2 = seed_everything(7)
    np.testing.assert_array_equal(a, np.random.rand(3))  # noqa: NPY002
    assert torch.equal(t1, torch.rand(2))
    assert g1.random() == g2.random()
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-3)


def test_version_report_names_the_library():
    assert report().startswith("python ")
    assert "neurips26" in report()


def test_step_slider_shows_one_group_and_the_static_traces():
    fig = go.Figure([go.Scatter(y=[i]) for i in range(5)])  # steps of 2 and 2, then 1 static trace
    add_step_slider(fig, [10, 20], traces_per_step=2, prefix="M = ", titles=["a", "b"], active=1)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["10", "20"]
    assert steps[0].args[0]["visible"] == [True, True, False, False, True]
    assert steps[1].args[0]["visible"] == [False, False, True, True, True]
    assert steps[1].args[1] == {"title.text": "b"}
    assert [t.visible for t in fig.data] == [False, False, True, True, True]  # starts at step ``active``
    assert fig.layout.title.text == "b" and fig.layout.sliders[0].currentvalue.prefix == "M = "
    uneven = go.Figure([go.Scatter(y=[i]) for i in range(3)])
    add_step_slider(uneven, ["x", "y"], traces_per_step=[1, 2])
    assert uneven.layout.sliders[0].steps[1].args[0]["visible"] == [False, True, True]


def test_step_slider_rejects_bad_input():
    fig = go.Figure([go.Scatter(y=[0])])
    with pytest.raises(ValueError, match="labels"):
        add_step_slider(fig, [], traces_per_step=1)
    with pytest.raises(ValueError, match="traces_per_step"):
        add_step_slider(fig, ["a", "b"], traces_per_step=1)
    with pytest.raises(ValueError, match="traces_per_step"):
        add_step_slider(fig, ["a"], traces_per_step=[1, 1])
    with pytest.raises(ValueError, match="titles"):
        add_step_slider(fig, ["a"], traces_per_step=1, titles=["x", "y"])
    with pytest.raises(ValueError, match="active"):
        add_step_slider(fig, ["a"], traces_per_step=1, active=1)


def _figure(before: int, groups: int, per: int, after: int) -> go.Figure:
    fig = go.Figure()
    for k in range(before + groups * per + after):
        fig.add_trace(go.Scatter(x=[k], y=[k], name=str(k)))
    return fig


def test_traces_before_the_groups_are_shown_at_every_step():
    fig = add_step_slider(_figure(2, 3, 2, 1), ["a", "b", "c"], traces_per_step=2, first=2)
    for j, step in enumerate(fig.layout.sliders[0].steps):
        visible = step.args[0]["visible"]
        assert visible[:2] == [True, True] and visible[-1] is True
        assert visible[2:-1] == [k // 2 == j for k in range(6)]
    assert [t.visible for t in fig.data] == [True, True, True, True, False, False, False, False, True]


def test_first_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="first"):
        add_step_slider(_figure(0, 2, 1, 0), ["a", "b"], traces_per_step=1, first=-1)
    with pytest.raises(ValueError, match="first"):
        add_step_slider(_figure(1, 2, 1, 0), ["a", "b"], traces_per_step=1, first=2)
