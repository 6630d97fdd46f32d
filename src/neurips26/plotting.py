"""One colour-blind-safe palette and figure defaults for matplotlib and plotly.

The palette is Okabe & Ito's eight colours (distinguishable under the common
colour-vision deficiencies). The paper's method is always drawn in
``COLORS["method"]`` and baselines take the next colours in a fixed order, so a
method has the same colour in every figure of a chapter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def add_step_slider(
    fig: Any,
    labels: Sequence[str],
    *,
    traces_per_step: int | Sequence[int],
    prefix: str = "",
    titles: Sequence[str] | None = None,
    active: int = 0,
    pad_top: int = 40,
    first: int = 0,
) -> Any:
    """Add a slider to a plotly figure that shows one group of traces per step (and hides the others).

    The figures of a chapter's explore notebook precompute every slider value and store all of them in
    the page, so the slider works in the static book without a kernel. ``fig.data`` holds the groups in
    step order first — ``traces_per_step`` traces per step, or one count per step — and then any traces
    shown at every step (reference lines, data). ``first`` traces may come before the groups: they are
    shown at every step too (plotly draws traces in their order, so a map or a room drawn underneath the
    stepped traces goes first). ``titles``, one per step, replace the figure's title as the slider moves.
    The figure starts at step ``active``. Returns ``fig``.
    """
    labels = [str(label) for label in labels]
    if not labels:
        raise ValueError("labels must name at least one slider step")
    counts = [traces_per_step] * len(labels) if isinstance(traces_per_step, int) else list(traces_per_step)
    if len(counts) != len(labels) or any(not isinstance(c, int) or c < 0 for c in counts):
        raise ValueError(
            f"traces_per_step must be a non-negative int or one per label ({len(labels)}); "
            f"got {traces_per_step!r}"
        )
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        raise ValueError(f"first must be a non-negative int (traces before the groups); got {first!r}")
    stepped = sum(counts)
    if first + stepped > len(fig.data):
        raise ValueError(
            f"first + traces_per_step ask for {first + stepped} traces; the figure has {len(fig.data)}"
        )
    if titles is not None and len(titles) != len(labels):
        raise ValueError(f"titles must have one entry per label ({len(labels)}); got {len(titles)}")
    if not isinstance(active, int) or not 0 <= active < len(labels):
        raise ValueError(f"active must be a step index in [0, {len(labels)}); got {active!r}")
    owner = [j for j, c in enumerate(counts) for _ in range(c)]
    static = [True] * (len(fig.data) - first - stepped)
    steps = []
    for j, label in enumerate(labels):
        visible = [True] * first + [o == j for o in owner] + static
        layout = {} if titles is None else {"title.text": titles[j]}
        steps.append({"method": "update", "label": label, "args": [{"visible": visible}, layout]})
    for trace, shown in zip(fig.data, steps[active]["args"][0]["visible"], strict=True):
        trace.visible = shown
    if titles is not None:
        fig.update_layout(title_text=titles[active])
    fig.update_layout(
        sliders=[
            {"active": active, "currentvalue": {"prefix": prefix}, "pad": {"t": pad_top}, "steps": steps}
        ]
    )
    return fig
