"""One colour-blind-safe palette and figure defaults for matplotlib and plotly.

The palette is Okabe & Ito's eight colours (distinguishable under the common
colour-vision deficiencies). The paper's method is always drawn in
``COLORS["method"]`` and baselines take the next colours in a fixed order, so a
method has the same colour in every figure of a chapter.
"""

from __future__ import annotations

from collections.abc import Sequence

OKABE_ITO: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)

COLORS: dict[str, str] = {
    "method": OKABE_ITO[0],
    "baseline": OKABE_ITO[1],
    "baseline2": OKABE_ITO[2],
    "baseline3": OKABE_ITO[3],
    "baseline4": OKABE_ITO[4],
    "reference": OKABE_ITO[7],
    "truth": OKABE_ITO[7],
    "highlight": OKABE_ITO[4],
}

SEQUENTIAL_CMAP = "viridis"  # perceptually uniform, colour-blind safe
DIVERGING_CMAP = "RdBu_r"
PLOTLY_TEMPLATE = "neurips26"


def method_colors(names: Sequence[str]) -> dict[str, str]:
    """Colours for a list of method names: the first is the paper's method, the rest baselines in order."""
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError("names must be a sequence of str")
    if len(names) > len(OKABE_ITO):
        raise ValueError(f"names must have at most {len(OKABE_ITO)} entries; got {len(names)}")
    return {name: OKABE_ITO[i] for i, name in enumerate(names)}


def apply_style() -> None:
    """Book-wide matplotlib and plotly defaults (palette, sizes, grid, fonts)."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(
        {
            "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "font.size": 10,
            "axes.titlesize": 11,
            "legend.frameon": False,
            "image.cmap": SEQUENTIAL_CMAP,
        }
    )
    _register_plotly_template()


def _register_plotly_template() -> None:
    import plotly.graph_objects as go
    import plotly.io as pio

    template = go.layout.Template(pio.templates["plotly_white"])
    template.layout.colorway = list(OKABE_ITO)
    template.layout.font = {"size": 13}
    template.layout.margin = {"l": 60, "r": 20, "t": 50, "b": 50}
    pio.templates[PLOTLY_TEMPLATE] = template
    pio.templates.default = PLOTLY_TEMPLATE
