"""Multiple-choice image questions (the paper's MCQ format): the view recoloured five ways, one of them right.

Each option is a recolouring of the question's view that *shows* a candidate answer (§3.3 of the notes): a
highlight on the counted blocks (S1, S6..S9, T2a/T2b) or one palette colour per group (S2 clusters, S3
columns, S4 layers, S5 visible blocks). The correct option shows the ground truth; the four distractors are
the released *structured errors* of each task, under the released type names (``phantom_block_above_top``,
``merge_two_columns``, ``same_column_two_colors``, ``missing_one_layer``, ``fake_split_largest_cluster``,
``merge_adjacent_same_color``, ``empty_support``, ``random_wrong_highlight_blocks``, ...). The total (T1) is
asked with five integers instead (the released ``task_main`` text options: the answer plus four values around
a pivot within 3 of it, typed ``high_by_d`` / ``low_by_d``).

An option is a colour map ``{slot: (r, g, b)}`` over the view's visible blocks
(:func:`~neurips26.spatial_iq.render.render_view` draws it); blocks not in the map keep their look. A
*phantom* block, one that does not exist, is a key on the empty slot on top of a column
(:func:`~neurips26.spatial_iq.render.slot_above`), drawn there as an extra block in the highlight colour.
``None`` is the released last resort, an all-black image. Group ``g`` takes colour ``g`` of
:data:`~neurips26.spatial_iq.render.PALETTE` started at a random offset (the released code shuffles its
64 colours; a shift of our golden-ratio hues keeps any few consecutive colours far apart), and the
highlight is drawn uniformly in ``[0.15, 1]^3`` as released, redrawn while it is close to the objects'
own colours (ours).

Distractors use the released sets as the released code does, including its quirks: S7/S8 draw from the
support sets of the full height map (then keep the visible blocks), S8's ``support_blocks_not_column``
and S9's ``alt_incomplete_subset`` repeat another distractor (so they always become fallbacks), and S3
never shows ``missing_one_column`` (its fifth entry is cut by ``[:4]``). One deviation: the S2
distractors split or merge the clusters of ``N(V)``, the sets its answer counts (released: the clusters
of the full height map, which differ from ``N(V)``'s outside the reference view).

**Duplicates.** A distractor is replaced, as released, when its image equals the correct option's or an
earlier option's (same colours on the same visible blocks and phantoms); the replacement is a random
recolouring (1-3 random highlighted blocks for S7, S8, S9, T2; random colours from 4-16 for the others),
typed ``<type>_fallback_unique_<n>``, and after :data:`MAX_FALLBACK_TRIES` failures a black image. We also
reject a distractor whose colour *partition* of the visible blocks equals the correct option's (a colour
permutation of the right answer is another right answer; the released image fingerprints let it through).

**3 and 4 choices** (released ``inference_mcq_NCQ.py``) keep the correct option and ``k - 1`` of the four
distractors, covering the task's required distractor types (:data:`REQUIRED_WRONG_TYPES`) first, then
re-shuffle. The same seed gives the same five options for every ``k``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from neurips26.spatial_iq.cameras import GRID, IMAGE_SIZE, MAX_HEIGHT, View
from neurips26.spatial_iq.render import CATEGORY_COLOURS, PALETTE, render_view, slot_above
from neurips26.spatial_iq.scenes import StackScene
from neurips26.spatial_iq.tasks import TASKS, ViewLabels, check_task, clusters, top_support_sets
from neurips26.spatial_iq.visibility import occupancy
from neurips26.validation import check_int, check_seed

RGB = tuple[float, float, float]
Option = dict[int, RGB] | int | None

#: Numbers of choices of the released variants (5CQ, 4CQ, 3CQ).
CHOICES: tuple[int, ...] = (3, 4, 5)
#: Tasks answered by highlighting a block set, and by one colour per group.
HIGHLIGHT_TASKS: tuple[str, ...] = ("S1", "S6", "S7", "S8", "S9", "T2a", "T2b")
GROUP_TASKS: tuple[str, ...] = ("S2", "S3", "S4", "S5")
#: Tasks whose duplicate distractors are replaced by a random highlight (released task6/7/8/10/11).
FALLBACK_HIGHLIGHT_TASKS: tuple[str, ...] = ("S7", "S8", "S9", "T2a", "T2b")
#: Attempts at a unique random replacement before the black image (released: 8000).
MAX_FALLBACK_TRIES = 2000
#: Distractor types a reduced (3 or 4 choice) item keeps first, as released.
REQUIRED_WRONG_TYPES: dict[str, tuple[str, ...]] = {
    "S1": ("phantom_block_above_top",),
    "S6": ("phantom_block_above_top",),
    "S3": ("merge_two_columns", "same_column_two_colors"),
    "S4": ("missing_one_layer", "same_layer_two_colors", "far_layer_confusion"),
    "S5": ("merge_adjacent_same_color", "drop_half_visible_blocks"),
    "S7": ("empty_support",),
    "T2a": ("random_single_block", "both_views_blocks", "random_wrong_highlight_blocks"),
    "T2b": ("random_single_block", "both_views_blocks", "random_wrong_highlight_blocks"),
}
#: Highlight colours are drawn uniformly in [0.15, 1]^3 (released) and at least this far from the objects'.
MIN_HIGHLIGHT_DISTANCE = 0.35
_FALLBACK_SUFFIX = re.compile(r"_fallback_unique_\d+$")
_SIDE = GRID * MAX_HEIGHT  # slots per row i


@dataclass(frozen=True, eq=False)
class McqItem:
    """One question: ``options`` (colour maps, ``None`` for a black image, or integers for T1), their
    ``types`` (``"correct"`` or the distractor's name), the index ``answer`` of the correct one, and the
    ``highlight`` colour of the highlight tasks."""

    task: str
    options: tuple[Option, ...]
    types: tuple[str, ...]
    answer: int
    highlight: RGB

    @property
    def k(self) -> int:
        return len(self.options)


# ----------------------------------------------------------------------------------------------
# ground truth as groups of visible blocks


def task_groups(labels: ViewLabels, task: str) -> np.ndarray:
    """(4, 4, 4) int64 group label of each visible block for an image task (0 = not part of the answer):
    1 on the counted set for the highlight tasks; the cluster of ``N(V)`` (S2), the column ``i * 4 + j + 1``
    (S3), the layer ``k + 1`` (S4), or the rank among the visible blocks in slot order ``+ 1`` (S5)."""
    if not isinstance(labels, ViewLabels):
        raise TypeError(f"labels must be a ViewLabels; got {type(labels).__name__}")
    task = check_task(task)
    vis = labels.visible
    if task in HIGHLIGHT_TASKS:
        g = (labels.sets[task] & vis).astype(np.int64)
    elif task == "S2":
        g = clusters(labels.needed).astype(np.int64)
    elif task == "S3":
        g = np.broadcast_to(np.arange(GRID * GRID).reshape(GRID, GRID, 1) + 1, vis.shape).astype(np.int64)
    elif task == "S4":
        g = np.broadcast_to(np.arange(MAX_HEIGHT) + 1, vis.shape).astype(np.int64)
    elif task == "S5":
        g = np.zeros(vis.shape, dtype=np.int64)
        g[vis] = np.arange(1, int(vis.sum()) + 1)
    else:
        raise ValueError(f"task must be an image task (not {task}: its options are numbers)")
    return np.where(vis, g, 0)


def option_partition(option: Option) -> frozenset[frozenset[int]]:
    """The painted groups of a colour-map option: the slots sharing each colour (empty for ``None``)."""
    if option is None or isinstance(option, int):
        return frozenset()
    by_colour: dict[RGB, set[int]] = {}
    for s, c in option.items():
        by_colour.setdefault(tuple(c), set()).add(int(s))  # type: ignore[arg-type]
    return frozenset(frozenset(g) for g in by_colour.values())


# ----------------------------------------------------------------------------------------------
# small random helpers over sorted slot lists (deterministic in the generator)


def _choice(rng: np.random.Generator, seq: list) -> object:
    return seq[int(rng.integers(len(seq)))]


def _sample(rng: np.random.Generator, seq: list, n: int) -> list:
    return [seq[int(t)] for t in rng.choice(len(seq), size=n, replace=False)]


def _randint(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(rng.integers(lo, hi + 1))


def _shuffled(rng: np.random.Generator, seq: list) -> list:
    return [seq[int(t)] for t in rng.permutation(len(seq))]


def _slots(mask: np.ndarray) -> list[int]:
    return [int(s) for s in np.flatnonzero(np.asarray(mask).reshape(-1))]


class _Context:
    """What the distractor builders read: the structure, the visible slots, the colours."""

    def __init__(self, labels: ViewLabels, palette: list[RGB], highlight: RGB):
        self.labels = labels
        self.h = labels.scene.heights
        self.hflat = self.h.reshape(-1)
        self.vis = set(_slots(labels.visible))
        self.all = set(_slots(occupancy(self.h)))
        self.pal = palette
        self.hl = highlight

    def highlight(self, fg: set[int] | frozenset[int]) -> dict[int, RGB]:
        return {s: self.hl for s in sorted(fg) if s in self.vis}

    def by_index(self, index: dict[int, int]) -> dict[int, RGB]:
        return {s: self.pal[i % len(self.pal)] for s, i in sorted(index.items()) if s in self.vis}

    def nonempty_columns(self) -> list[int]:
        return [c for c in range(GRID * GRID) if self.hflat[c] > 0]

    def column(self, c: int) -> set[int]:
        return {c * MAX_HEIGHT + k for k in range(int(self.hflat[c]))}

    def phantom_on(self, c: int) -> int:
        return slot_above(self.h, c // GRID, c % GRID)


Spec = tuple[dict[int, RGB], str]


# ----------------------------------------------------------------------------------------------
# the released distractors, task by task


def _specs_s1(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task1: a phantom on a tallest column, one or two blocks left out, a column left out."""
    bl = _shuffled(rng, sorted(ctx.all))
    w1 = ctx.all - {bl[0]}
    w2 = ctx.all - set(bl[:2])
    c_drop = int(_choice(rng, ctx.nonempty_columns()))
    w3 = ctx.all - ctx.column(c_drop)
    tallest = [c for c in range(GRID * GRID) if ctx.hflat[c] == int(ctx.h.max())]
    phantom = ctx.phantom_on(int(_choice(rng, tallest)))
    return [
        ({**ctx.highlight(ctx.vis), phantom: ctx.hl}, "phantom_block_above_top"),
        (ctx.highlight(w1), "omit_one_block"),
        (ctx.highlight(w2), "omit_two_blocks"),
        (ctx.highlight(w3), "drop_one_column_highlight"),
    ]


def _other_column_top(ctx: _Context, top: list[int], rng: np.random.Generator) -> set[int]:
    """Released ``_t2_other_column_top_block``: a visible column top outside the top layer, else the block
    under a top block, else the first visible block."""
    opts = []
    for c in ctx.nonempty_columns():
        b = c * MAX_HEIGHT + int(ctx.hflat[c]) - 1
        if b in ctx.vis and b not in top:
            opts.append(b)
    if opts:
        return {int(_choice(rng, opts))}
    if top:
        b = int(_choice(rng, top))
        if b % MAX_HEIGHT > 0:
            return {b - 1}
    return set(sorted(ctx.vis)[:1])


def _specs_s6(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task2: a phantom on a top block (only the phantom coloured), one top block missed, the block
    under a top block, another column's top."""
    top = _slots(ctx.labels.sets["S6"])
    oth = _other_column_top(ctx, top, rng)
    w1 = set(top) - {int(_choice(rng, top))} if len(top) > 1 else set(top)
    b = top[0] if top else None
    w2 = {b - 1} if b is not None and b % MAX_HEIGHT > 0 else set(top)
    phantom: dict[int, RGB] = {}
    if top:
        phantom = {ctx.phantom_on(int(_choice(rng, top)) // MAX_HEIGHT): ctx.hl}
    return [
        (phantom, "phantom_block_above_top"),
        (ctx.highlight(w1), "missing_one_top_block"),
        (ctx.highlight(w2), "one_below_top"),
        (ctx.highlight(oth), "other_column_top"),
    ]


def _adjacent_column_group(cols: list[int], size: int, rng: np.random.Generator) -> list[int]:
    """Released ``_pick_adjacent_column_group``: grow a 4-connected group of non-empty columns from a random
    seed column; the first two columns if no column has a neighbour."""
    col_set = set(cols)

    def neighbours(c: int) -> list[int]:
        i, j = divmod(c, GRID)
        out = []
        for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            ni, nj = i + di, j + dj
            if 0 <= ni < GRID and 0 <= nj < GRID and ni * GRID + nj in col_set:
                out.append(ni * GRID + nj)
        return out

    for seed in _shuffled(rng, cols):
        group = [seed]
        frontier = _shuffled(rng, [n for n in neighbours(seed) if n not in group])
        while len(group) < size and frontier:
            pick = frontier.pop(0)
            if pick not in group:
                group.append(pick)
                frontier.extend(n for n in neighbours(pick) if n not in group and n not in frontier)
                frontier = _shuffled(rng, frontier)
        if len(group) >= 2:
            return group
    return list(cols[:2])


def _merge_groups(ctx: _Context, cols: list[int], rng: np.random.Generator) -> list[tuple[int, list[int]]]:
    """One or two disjoint groups of 2-4 adjacent columns, each merged into its first column's colour."""
    n_groups = 1 if len(cols) < 4 else int(_choice(rng, [1, 1, 2]))
    used: set[int] = set()
    groups = []
    for _ in range(n_groups):
        avail = [c for c in cols if c not in used]
        if len(avail) < 2:
            break
        size = min(len(avail), _randint(rng, 2, 4))
        grp = _adjacent_column_group(avail, size, rng)
        if len(grp) < 2:
            break
        groups.append((grp[0], grp[1:]))
        used |= set(grp)
    return groups


def _columns_map(ctx: _Context, colour_of: dict[int, int] | None = None, split: dict[int, int] | None = None):
    """S3 colour map: column ``c`` takes palette index ``colour_of.get(c, c)``; a split column's upper half
    (``k >= H // 2``) takes ``split[c]``."""
    index = {}
    for c in ctx.nonempty_columns():
        hc = int(ctx.hflat[c])
        for k in range(hc):
            idx = (colour_of or {}).get(c, c)
            if split and c in split and k >= hc // 2:
                idx = split[c]
            index[c * MAX_HEIGHT + k] = idx
    return ctx.by_index(index)


def _specs_s3(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task3: two-coloured columns (twice), merged adjacent columns (twice). The released list has a
    fifth entry, ``missing_one_column``, that its ``[:4]`` never reaches; we keep that."""
    cols = ctx.nonempty_columns()
    tall = [c for c in cols if ctx.hflat[c] >= 2]
    c_drop = int(_choice(rng, cols))
    tall = _shuffled(rng, tall)
    n_a = min(len(tall), int(_choice(rng, [2, 2, 3])))
    split_a = tall[:n_a] if n_a >= 1 else cols[:1]
    tall = _shuffled(rng, tall)
    n_b = min(len(tall), int(_choice(rng, [2, 2, 3])))
    split_b = tall[:n_b] if n_b >= 1 else split_a
    groups_a = _merge_groups(ctx, cols, rng)
    groups_b = _merge_groups(ctx, cols, rng)

    def two_colours(cs: list[int]) -> dict[int, RGB]:
        return _columns_map(ctx, split={c: (c + 1) % (GRID * GRID) for c in cs if ctx.hflat[c] >= 2})

    def merged(groups: list[tuple[int, list[int]]]) -> dict[int, RGB]:
        return _columns_map(ctx, colour_of={c: keep for keep, rest in groups for c in rest})

    dropped = {s: c for s, c in _columns_map(ctx).items() if s // MAX_HEIGHT != c_drop}
    specs = [
        (two_colours(split_a), "same_column_two_colors"),
        (two_colours(split_b), "same_column_two_colors"),
        (merged(groups_a), "merge_two_columns"),
        (merged(groups_b), "merge_two_columns"),
        (dropped, "missing_one_column"),
    ]
    return specs[:4]


def _specs_s4(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task4: one layer in two colours (checkerboard), layer 1 painted as layer 0, layer 0 left
    unpainted, layer 0 painted as layer 1."""
    max_k = int(ctx.h.max()) - 1
    counts = [int((ctx.h > k).sum()) for k in range(max_k + 1)]
    multi = [k for k in range(max_k + 1) if counts[k] >= 2]
    lk = int(_choice(rng, multi)) if multi else 0
    k0, k1 = (0, min(1, max_k)) if max_k >= 1 else (0, 0)

    def layers(remap: dict[int, int] | None = None, drop: int | None = None, two: int | None = None):
        index = {}
        for s in sorted(ctx.all):
            c, k = divmod(s, MAX_HEIGHT)
            if k == drop:
                continue
            use = (remap or {}).get(k, k)
            if k == two and (c // GRID + c % GRID) % 2 == 1:
                use = (two + 1) % (max_k + 1)
            index[s] = use
        return ctx.by_index(index)

    return [
        (layers(two=lk), "same_layer_two_colors"),
        (layers(remap={k1: k0}), "merge_two_layers"),
        (layers(drop=k0), "missing_one_layer"),
        (layers(remap={k0: k1}), "far_layer_confusion"),
    ]


def _adjacent_merge_groups(vis: list[int], rng: np.random.Generator) -> list[list[int]]:
    """Released ``_find_adjacent_merge_groups``: ``max(1, n // 5)`` disjoint groups of face-adjacent visible
    blocks, alternating triplets and pairs."""
    vis_set = set(vis)

    def neighbours(s: int) -> list[int]:
        i, j, k = s // _SIDE, (s // MAX_HEIGHT) % GRID, s % MAX_HEIGHT
        out = []
        for di, dj, dk in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)):
            ni, nj, nk = i + di, j + dj, k + dk
            if 0 <= ni < GRID and 0 <= nj < GRID and 0 <= nk < MAX_HEIGHT:
                n = (ni * GRID + nj) * MAX_HEIGHT + nk
                if n in vis_set:
                    out.append(n)
        return out

    nbrs = {s: neighbours(s) for s in vis}
    candidates = _shuffled(rng, [s for s in vis if nbrs[s]])
    max_groups = max(1, len(vis) // 5)
    groups: list[list[int]] = []
    used: set[int] = set()
    want_triplet = True
    for start in candidates:
        if len(groups) >= max_groups:
            break
        if start in used:
            continue
        avail = [n for n in nbrs[start] if n not in used]
        if not avail:
            continue
        second = int(_choice(rng, avail))
        if want_triplet:
            third = [n for n in nbrs[second] if n not in used and n != start]
            if third:
                groups.append([start, second, int(_choice(rng, third))])
                used |= set(groups[-1])
                want_triplet = False
                continue
        groups.append([start, second])
        used |= {start, second}
        want_triplet = True
    return groups


def _specs_s5(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task5: adjacent visible blocks sharing a colour (twice), half the visible blocks left
    unpainted (twice)."""
    vis = sorted(ctx.vis)
    ra, rb = (np.random.default_rng(int(rng.integers(2**30))) for _ in range(2))
    drop_a: list[int] = []
    drop_b: list[int] = []
    if len(vis) > 1:
        half = max(1, len(vis) // 2)
        drop_a = _shuffled(ra, vis)[:half]
        drop_b = _shuffled(rb, vis)[:half]

    def ranks(blocks: list[int]) -> dict[int, RGB]:
        return ctx.by_index({s: n for n, s in enumerate(sorted(blocks))})

    def merged(r: np.random.Generator) -> dict[int, RGB]:
        if len(vis) < 2:
            return ranks(vis)
        idx = {s: n for n, s in enumerate(vis)}
        for group in _adjacent_merge_groups(vis, r):
            leader = min(idx[s] for s in group)
            for s in group:
                idx[s] = leader
        return ctx.by_index(idx)

    return [
        (merged(ra), "merge_adjacent_same_color"),
        (merged(rb), "merge_adjacent_same_color"),
        (ranks(drop_a), "drop_half_visible_blocks"),
        (ranks(drop_b), "drop_half_visible_blocks"),
    ]


def _full_support_sets(ctx: _Context) -> tuple[list[int], list[int]]:
    """The released S7 and S8 sets before the visibility filter (direct supports, whole support columns)."""
    _, direct, below = top_support_sets(ctx.h, occupancy(ctx.h))
    return _slots(direct), _slots(below)


def _minus_one(rng: np.random.Generator, blocks: list[int]) -> set[int]:
    return set(blocks) - {int(_choice(rng, blocks))} if len(blocks) > 1 else set(blocks)


def _specs_s7(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task6: one support missed (twice, the released "wrong subset" draws from the same set), no
    support, one random non-support block."""
    t6, _ = _full_support_sets(ctx)
    w1 = _minus_one(rng, t6)
    w2 = _minus_one(rng, t6)
    non_s = sorted(ctx.all - set(t6))
    w4 = {int(_choice(rng, non_s))} if non_s else _minus_one(rng, t6)
    return [
        (ctx.highlight(w1), "miss_one_support"),
        (ctx.highlight(w2), "wrong_support_subset"),
        ({}, "empty_support"),
        (ctx.highlight(w4), "non_support_highlight"),
    ]


def _specs_s8(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task7: one block of the support columns missed, none, two missed, the direct supports outside
    the columns (always empty, so the one-missed set again)."""
    t6, t7 = _full_support_sets(ctx)
    w1 = _minus_one(rng, t7)
    w3 = set(t7) - set(_sample(rng, t7, min(2, len(t7)))) if len(t7) > 2 else w1
    w4 = (set(t6) - set(t7)) or w1
    return [
        (ctx.highlight(w1), "remove_support_column_blocks"),
        ({}, "wrong_column_empty"),
        (ctx.highlight(w3), "remove_two_column_blocks"),
        (ctx.highlight(w4), "support_blocks_not_column"),
    ]


def _specs_s9(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task8: one block missed, none, one random visible block outside the set, one missed again."""
    t8 = _slots(ctx.labels.sets["S9"])
    w1 = _minus_one(rng, t8)
    outside = sorted(ctx.vis - set(t8))
    w4 = {int(_choice(rng, outside))} if outside else w1
    return [
        (ctx.highlight(w1), "miss_one_supported"),
        ({}, "empty_t8"),
        (ctx.highlight(w4), "wrong_visible_block"),
        (ctx.highlight(w1), "alt_incomplete_subset"),
    ]


def _specs_s2(ctx: _Context, rng: np.random.Generator) -> list[Spec]:
    """Released task9 (clusters of ``N(V)``): split the largest cluster in two colours, merge two clusters'
    colours, collapse everything into one colour; with one cluster, every block its own colour."""
    lab = clusters(ctx.labels.needed).reshape(-1)
    nc = int(lab.max(initial=0))
    members = [[int(s) for s in np.flatnonzero(lab == c + 1)] for c in range(nc)]
    correct = {s: c for c in range(nc) for s in members[c]}

    def merge(src: int, dup: int) -> dict[int, RGB]:
        if nc < 2:
            return ctx.by_index(correct)
        return ctx.by_index({s: (src if c == dup else c) for s, c in correct.items()})

    def single(colour: int) -> dict[int, RGB]:
        return ctx.by_index({s: colour % nc for s in correct})

    def fake_split() -> dict[int, RGB]:
        sizes = [len(m) for m in members]
        target = int(np.argmax(sizes))
        if sizes[target] < 2:
            return ctx.by_index(correct)
        bl = _shuffled(rng, members[target])
        a_set = set(bl[: max(1, len(bl) // 2)])
        idx = {s: (0 if s in a_set else 1) if c == target else c for s, c in correct.items()}
        return ctx.by_index(idx)

    def multicolour() -> dict[int, RGB]:
        if nc != 1:
            return fake_split()
        return ctx.by_index({s: n for n, s in enumerate(sorted(members[0]))})

    if nc == 1:
        return [
            (multicolour(), "multicolor_single_cluster"),
            (single(0), "single_cluster_one_color_a"),
            (single(1), "single_cluster_one_color_b"),
            (fake_split(), "fake_split_into_two_colors"),
        ]
    if nc == 2:
        return [
            (fake_split(), "fake_split_one_cluster"),
            (merge(0, 1), "merge_c1_to_c0"),
            (merge(1, 0), "merge_c0_to_c1"),
            (single(0), "collapse_to_one_cluster_color"),
        ]
    return [
        (fake_split(), "fake_split_largest_cluster"),
        (merge(0, 1), "merge_clusters_color0_to_1"),
        (merge(0, min(2, nc - 1)), "merge_clusters_color0_to_2"),
        (merge(1, 0), "merge_clusters_color1_to_0"),
    ]


def _specs_t2(ctx: _Context, rng: np.random.Generator, task: str) -> list[Spec]:
    """Released task10/11: 1-3 random visible blocks outside the set, one random visible block, the blocks
    visible in both views, the set less one block."""
    t = _slots(ctx.labels.sets[task])
    vs = sorted(ctx.vis)
    both = sorted(ctx.vis - set(t))
    w1 = set(_sample(rng, vs, min(1, len(vs)))) if vs else set()
    w2 = set(both) if both else w1
    w3 = _minus_one(rng, t)
    rw = np.random.default_rng(int(rng.integers(2**30)))
    pool = both or vs
    n_w = _randint(rw, 1, min(3, len(pool))) if pool else 0
    wrong = set(_sample(rw, pool, n_w)) if n_w else set()
    return [
        (ctx.highlight(wrong), "random_wrong_highlight_blocks"),
        (ctx.highlight(w1), "random_single_block"),
        (ctx.highlight(w2), "both_views_blocks"),
        (ctx.highlight(w3), "missing_nonmatch"),
    ]


def _correct(ctx: _Context, task: str) -> dict[int, RGB]:
    g = task_groups(ctx.labels, task).reshape(-1)
    if task in HIGHLIGHT_TASKS:
        return ctx.highlight(set(_slots(g > 0)))
    return ctx.by_index({int(s): int(g[s]) - 1 for s in np.flatnonzero(g > 0)})


def _fallback(ctx: _Context, task: str, rng: np.random.Generator) -> dict[int, RGB]:
    """The released random replacement of a duplicate distractor."""
    pool = sorted(ctx.vis)
    if not pool:
        return {}
    if task in FALLBACK_HIGHLIGHT_TASKS:
        return ctx.highlight(set(_sample(rng, pool, _randint(rng, 1, min(3, len(pool))))))
    n_mat = min(16, max(4, len(pool)))
    colours = [tuple(round(float(c), 4) for c in rng.random(3)) for _ in range(n_mat)]
    return {s: colours[int(rng.integers(n_mat))] for s in pool}  # type: ignore[misc]


def _image_key(option: dict[int, RGB]) -> tuple:
    return tuple(sorted(option.items()))


def _dedupe(ctx: _Context, task: str, correct: dict[int, RGB], specs: list[Spec], rng: np.random.Generator):
    """Replace distractors that repeat an earlier image or the correct partition (module doc)."""
    seen = {_image_key(correct)}
    bad_partition = option_partition(correct)
    out: list[tuple[Option, str]] = []
    for option, name in specs:
        key = _image_key(option)
        if key not in seen and option_partition(option) != bad_partition:
            seen.add(key)
            out.append((option, name))
            continue
        for attempt in range(MAX_FALLBACK_TRIES):
            alt = _fallback(ctx, task, rng)
            alt_key = _image_key(alt)
            if alt_key not in seen and option_partition(alt) != bad_partition:
                seen.add(alt_key)
                out.append((alt, f"{name}_fallback_unique_{attempt}"))
                break
        else:
            out.append((None, f"{name}_dummy_black"))
    return out


def _highlight_colour(category: str, rng: np.random.Generator) -> RGB:
    """Uniform in [0.15, 1]^3 (released), redrawn while it is close to the category's colours (ours)."""
    objects = np.array(CATEGORY_COLOURS[category])
    colour = rng.uniform(0.15, 1.0, 3)
    for _ in range(100):
        if np.min(np.linalg.norm(objects - colour, axis=1)) >= MIN_HIGHLIGHT_DISTANCE:
            break
        colour = rng.uniform(0.15, 1.0, 3)
    return tuple(round(float(c), 4) for c in colour)  # type: ignore[return-value]


def total_options(total: int, rng: np.random.Generator) -> tuple[list[int], list[str]]:
    """The released five integer options of T1 (before shuffling): the answer, then values around a pivot
    within 3 of it at four of the distances 1..5, then random values within 8; all positive and distinct."""
    total = check_int("total", total, minimum=1)
    pivot = total + int(_choice(rng, [-3, -2, -1, 0, 0, 1, 2, 3]))
    spreads = sorted(_shuffled(rng, [1, 2, 3, 4, 5])[:4])
    pool = [total]
    for s in spreads:
        for v in (pivot - s, pivot + s, pivot):
            if v > 0 and v not in pool and len(pool) < 5:
                pool.append(v)
    for _ in range(40):
        if len(pool) >= 5:
            break
        v = total + _randint(rng, -8, 8)
        if v > 0 and v not in pool:
            pool.append(v)
    v = total
    while len(pool) < 5:  # not reached in practice; keeps five options
        v += 1
        if v not in pool:
            pool.append(v)
    types = [
        "correct" if v == total else (f"high_by_{v - total}" if v > total else f"low_by_{total - v}")
        for v in pool
    ]
    return pool, types


def _reduce(types: list[str], answer: int, task: str, k: int, rng: np.random.Generator) -> list[int]:
    """Released ``_select_n_options``: indices of the kept options (correct first, then wrong), shuffled."""
    wrong = [n for n in range(len(types)) if n != answer]
    required = REQUIRED_WRONG_TYPES.get(task, ())
    chosen: list[int] = []
    by_type: dict[str, list[int]] = {}
    for n in wrong:
        base = _FALLBACK_SUFFIX.sub("", types[n])
        if base and base != "correct":
            by_type.setdefault(base, []).append(n)
    available = [t for t in required if t in by_type]
    picked_types = _sample(rng, available, k - 1) if len(available) > k - 1 else available
    for t in picked_types:
        opts = [n for n in by_type[t] if n not in chosen]
        if opts:
            chosen.append(int(_choice(rng, opts)))
    rest = [n for n in wrong if n not in chosen]
    need = k - 1 - len(chosen)
    if need > 0 and rest:
        chosen.extend(_sample(rng, rest, min(need, len(rest))))
    kept = [answer, *chosen]
    return _shuffled(rng, kept)


def mcq_item(labels: ViewLabels, task: str, k: int = 5, seed: int = 0) -> McqItem:
    """The ``k``-choice question of ``task`` on the view of ``labels`` (module doc), deterministic in
    ``seed``. ``k`` in :data:`CHOICES`; the 3- and 4-choice items keep a subset of the 5-choice options."""
    if not isinstance(labels, ViewLabels):
        raise TypeError(f"labels must be a ViewLabels; got {type(labels).__name__}")
    task = check_task(task)
    k = check_int("k", k)
    if k not in CHOICES:
        raise ValueError(f"k must be one of {CHOICES}; got {k}")
    seed = check_seed("seed", seed)
    if not labels.visible.any():
        raise ValueError("labels must have at least one visible block")
    content, order, reduce = (
        np.random.default_rng(s) for s in np.random.SeedSequence([seed, TASKS.index(task)]).spawn(3)
    )
    highlight = _highlight_colour(labels.scene.category, content)
    offset = int(content.integers(len(PALETTE)))
    palette = list(PALETTE[offset:] + PALETTE[:offset])
    entries: list[tuple[Option, str]]
    if task == "T1":
        values, types = total_options(int(labels.answers["T1"]), content)
        entries = list(zip(values, types, strict=True))
    else:
        ctx = _Context(labels, palette, highlight)
        correct = _correct(ctx, task)
        if task in ("T2a", "T2b"):
            specs = _specs_t2(ctx, content, task)
        else:
            builder = {
                "S1": _specs_s1,
                "S2": _specs_s2,
                "S3": _specs_s3,
                "S4": _specs_s4,
                "S5": _specs_s5,
                "S6": _specs_s6,
                "S7": _specs_s7,
                "S8": _specs_s8,
                "S9": _specs_s9,
            }[task]
            specs = builder(ctx, content)
        entries = [(correct, "correct"), *_dedupe(ctx, task, correct, specs, content)]
    perm = [int(t) for t in order.permutation(len(entries))]
    entries = [entries[t] for t in perm]
    answer = next(n for n, (_, t) in enumerate(entries) if t == "correct")
    if k < len(entries):
        kept = _reduce([t for _, t in entries], answer, task, k, reduce)
        entries = [entries[t] for t in kept]
        answer = kept.index(answer)
    return McqItem(
        task=task,
        options=tuple(o for o, _ in entries),
        types=tuple(t for _, t in entries),
        answer=answer,
        highlight=highlight,
    )


def mcq_images(item: McqItem, scene: StackScene, view: View, size: int = IMAGE_SIZE) -> list[np.ndarray]:
    """The options of an image question rendered: (size, size, 3) float32 each (black for ``None``)."""
    if not isinstance(item, McqItem):
        raise TypeError(f"item must be a McqItem; got {type(item).__name__}")
    if item.task == "T1":
        raise ValueError("item must be an image question; T1's options are numbers")
    size = check_int("size", size, minimum=8)
    out = []
    for option in item.options:
        if option is None:
            out.append(np.zeros((size, size, 3), dtype=np.float32))
        else:
            out.append(render_view(scene, view, size, colours=option).rgb)
    return out


__all__ = [
    "CHOICES",
    "FALLBACK_HIGHLIGHT_TASKS",
    "GROUP_TASKS",
    "HIGHLIGHT_TASKS",
    "MAX_FALLBACK_TRIES",
    "MIN_HIGHLIGHT_DISTANCE",
    "McqItem",
    "Option",
    "REQUIRED_WRONG_TYPES",
    "mcq_images",
    "mcq_item",
    "option_partition",
    "task_groups",
    "total_options",
]
