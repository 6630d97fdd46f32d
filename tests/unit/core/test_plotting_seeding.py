import numpy as np
import pytest

from neurips26.plotting import COLORS, OKABE_ITO, apply_style, method_colors
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
