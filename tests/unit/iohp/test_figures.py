"""The floor-plan drawing: one patch per piece and proxy, conflicts hatched, bad input named."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from neurips26.iohp.figures import draw_plan, legend_handles, plan_grid  # noqa: E402
from neurips26.iohp.initial import initial_layout  # noqa: E402
from neurips26.iohp.proxy import default_proxies  # noqa: E402
from neurips26.iohp.rooms import sample_room  # noqa: E402


@pytest.fixture(scope="module")
def layout():
    room, furniture = sample_room("dining", 100, density="medium")
    return initial_layout(room, furniture, 100)


def test_one_patch_per_piece_and_proxy(layout):
    proxies = default_proxies(layout)
    fig, ax = plt.subplots()
    draw_plan(ax, layout, proxies, reachable=True, labels=True, title="t")
    hatched = [p for p in ax.patches if p.get_hatch()]
    # room floor + door wedges + pieces + proxies
    assert len(ax.patches) == 1 + len(layout.room.doors) + layout.n + len(proxies)
    assert len(hatched) <= len(proxies) and ax.get_title() == "t"
    plt.close(fig)
    assert len(legend_handles()) == 3


def test_plan_grid_and_bad_input(layout):
    fig = plan_grid([layout, layout, layout], ["a", "b", "c"], columns=2)
    assert len(fig.axes) == 4
    plt.close(fig)
    with pytest.raises(TypeError, match="layout"):
        draw_plan(plt.gca(), "room")
    with pytest.raises(ValueError, match="titles"):
        plan_grid([layout], ["a", "b"])
    with pytest.raises(ValueError, match="layouts"):
        plan_grid([])
    plt.close("all")
