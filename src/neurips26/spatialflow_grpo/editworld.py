"""The chapter's editing world: seeded 16 × 16 canvases with coloured squares and "recolour" instructions.

A case is a source image, an instruction of one to three clauses, its region masks and the ground-truth
edit (the shared conventions of the chapter: images (3, 16, 16) float32 RGB in [0, 1], at most
:data:`K_MAX` clauses, region 0 = the preservation region Ω₀):

- **canvas**: a smooth gradient of low saturation (random direction and end colours, every value inside
  (0.29, 0.71)) plus a faint grey texture (uniform, amplitude :data:`TEXTURE_AMPLITUDE`) that an editor must
  keep; 1-3 flat squares of side 3-5 px with distinct :data:`PALETTE` colours, pairwise at least one pixel
  apart.
- **instruction**: ≤ 3 clauses "recolour the ‹c› square ‹c′›" in random order; each addresses an object by
  its current colour. [deviation] The paper's instructions are free text; we address objects by colour, not
  by ordinals or positions, so that a 118k-parameter editor can learn to ground them. The new colour c′
  differs from every object's colour before the edit and from the other clauses' new colours, so the colours
  of a canvas stay distinct after the edit. Encoded as :data:`INSTRUCTION_DIM` = 36 numbers: per clause slot
  a one-hot of c (6) then a one-hot of c′ (6); unused slots are zero.
- **regions**: ``masks`` (K_MAX + 1, 16, 16) in {0, 1}: slot k ≥ 1 is the square named by clause k, slot 0
  is everything else (background and unmentioned, *kept* objects); the used slots partition the image.
- **target**: the source with each instructed square recoloured to its c′.

Evaluation suites (:data:`SUITES`, :func:`make_suite`): ``single`` (one clause, 1-3 objects), ``mixed``
(1-2 clauses, as many to 3 objects) and ``multiedit`` (half 3 clauses on 3 objects, half 2 clauses and a
kept object). Pretraining pairs (:func:`training_batch`) are deliberately **flawed** so the base editor has
headroom for RL: in :data:`FLAW_PARTIAL` of the multi-clause cases the target applies clause 1 only, and in
:data:`FLAW_TINT` of all cases its Ω₀ carries a tint of :data:`TINT` on one channel (chapter 08, "Data").

Every draw is seeded: suites use ``sub_seed(seed, STREAM_SUITE, suite index)``, training step ``s`` uses
``sub_seed(seed, STREAM_TRAIN, s)`` and :func:`sample_cases` ``sub_seed(seed, STREAM_CASES)``: disjoint
streams. Generation is NumPy, vectorised over the batch except the placement of the squares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from neurips26.seeding import sub_seed
from neurips26.validation import check_choice, check_float, check_int, check_seed

# --- constants ----------------------------------------------------------------------------------------------
#: Canvas side (pixels) and the most clauses (= edit regions) of an instruction.
SIZE = 16
K_MAX = 3
#: The palette: pure RGB primaries and secondaries, pairwise ≥ 1 apart, ≥ 0.29·√3 ≈ 0.50 from any canvas
#: background pixel (those lie in [0.29, 0.71]³).
PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (1.0, 0.0, 0.0),
    "green": (0.0, 1.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
    "magenta": (1.0, 0.0, 1.0),
    "cyan": (0.0, 1.0, 1.0),
}
COLOUR_NAMES: tuple[str, ...] = tuple(PALETTE)
N_COLOURS = len(COLOUR_NAMES)
PALETTE_RGB = np.array([PALETTE[name] for name in COLOUR_NAMES], dtype=np.float32)  # (6, 3)
#: Per clause slot: one-hot of the current colour, then one-hot of the new colour.
CLAUSE_DIM = 2 * N_COLOURS
INSTRUCTION_DIM = K_MAX * CLAUSE_DIM
#: Background: grey level of each gradient end, its per-channel chroma offset, the texture amplitude.
GREY_RANGE = (0.38, 0.62)
CHROMA = 0.06
TEXTURE_AMPLITUDE = 0.03
#: Side range of a square (pixels, inclusive) and the clear gap between two squares (pixels).
SIDE_RANGE = (3, 5)
GAP = 1
#: Flaws of the pretraining pairs: the partial-edit rate among multi-clause cases, the tint rate, its size.
FLAW_PARTIAL = 0.35
FLAW_TINT = 0.10
TINT = 0.06
#: Columns of :attr:`EditBatch.flaw`.
FLAWS: tuple[str, ...] = ("partial", "tint")
#: The evaluation suites, their default size and the named seed streams (see the module docstring).
SUITES: tuple[str, ...] = ("single", "mixed", "multiedit")
SUITE_SIZE = 256
STREAM_SUITE = 801
STREAM_TRAIN = 802
STREAM_CASES = 803
#: Candidate placements drawn at once per canvas, and the rounds of them before the layout starts over.
_CANDIDATES = 12
_ROUNDS = 8


# --- the batch ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class EditBatch:
    """Editing cases stacked along dim 0 (B cases).

    ``source``, ``target`` (B, 3, 16, 16) float32 in [0, 1]; ``masks`` (B, K_MAX + 1, 16, 16) float32 in
    {0, 1} (slot 0 = Ω₀, slot k = clause k's square, unused slots zero); ``region_valid`` (B, K_MAX + 1)
    bool; ``target_colours`` (B, K_MAX, 3) float32 (c′ of each clause slot, zeros unused); ``instruction``
    (B, :data:`INSTRUCTION_DIM`) float32; ``n_clauses``, ``n_objects`` (B,) int64; ``text`` one string per
    case; ``suite`` the suite's name (``"train"`` for pretraining batches, ``"custom"`` for
    :func:`sample_cases`); ``flaw`` (B, 2) bool, columns :data:`FLAWS` (all False unless flawed pretraining
    pairs; ``None`` at construction means none).
    """

    source: Tensor
    target: Tensor
    masks: Tensor
    region_valid: Tensor
    target_colours: Tensor
    instruction: Tensor
    n_clauses: Tensor
    n_objects: Tensor
    text: tuple[str, ...]
    suite: str
    flaw: Tensor | None = field(default=None)

    def __post_init__(self) -> None:
        n = _check_tensor("source", self.source, (None, 3, SIZE, SIZE)).shape[0]
        _check_tensor("target", self.target, (n, 3, SIZE, SIZE))
        _check_tensor("masks", self.masks, (n, K_MAX + 1, SIZE, SIZE))
        _check_tensor("region_valid", self.region_valid, (n, K_MAX + 1))
        _check_tensor("target_colours", self.target_colours, (n, K_MAX, 3))
        _check_tensor("instruction", self.instruction, (n, INSTRUCTION_DIM))
        _check_tensor("n_clauses", self.n_clauses, (n,))
        _check_tensor("n_objects", self.n_objects, (n,))
        if not isinstance(self.text, tuple) or len(self.text) != n:
            raise ValueError(f"text must be a tuple of {n} strings; got {type(self.text).__name__}")
        if not isinstance(self.suite, str):
            raise TypeError(f"suite must be a str; got {type(self.suite).__name__}")
        if self.flaw is None:
            object.__setattr__(self, "flaw", torch.zeros(n, len(FLAWS), dtype=torch.bool))
        _check_tensor("flaw", self.flaw, (n, len(FLAWS)))

    def __len__(self) -> int:
        return self.source.shape[0]

    def _tensors(self) -> dict[str, Tensor]:
        return {
            f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("text", "suite")
        }

    def select(self, index: Tensor | Sequence[int]) -> EditBatch:
        """The cases at ``index`` (a LongTensor or a list of row numbers, repeats allowed), in that order."""
        if isinstance(index, Tensor):
            if index.dtype != torch.int64 or index.ndim != 1:
                raise TypeError(
                    f"index must be a 1-D LongTensor or a list of ints; got {index.dtype}, {index.ndim}-D"
                )
            rows = index.tolist()
        elif isinstance(index, list | tuple):
            rows = [
                check_int(f"index[{i}]", r, minimum=-len(self), maximum=len(self) - 1)
                for i, r in enumerate(index)
            ]
        else:
            raise TypeError(f"index must be a LongTensor or a list of ints; got {type(index).__name__}")
        if any(not -len(self) <= r < len(self) for r in rows):
            raise ValueError(f"index must hold rows in [0, {len(self)}); got {rows}")
        idx = torch.tensor(rows, dtype=torch.int64)
        parts = {name: t[idx.to(t.device)] for name, t in self._tensors().items()}
        return EditBatch(**parts, text=tuple(self.text[r] for r in rows), suite=self.suite)

    def repeat_each(self, g: int) -> EditBatch:
        """Each case repeated ``g`` times in a row (GRPO groups): rows ``i·g … i·g + g − 1`` are case i."""
        g = check_int("g", g, minimum=1)
        parts = {name: t.repeat_interleave(g, dim=0) for name, t in self._tensors().items()}
        return EditBatch(**parts, text=tuple(s for s in self.text for _ in range(g)), suite=self.suite)

    def to(self, device: torch.device | str) -> EditBatch:
        """The same cases with every tensor on ``device``."""
        parts = {name: t.to(device) for name, t in self._tensors().items()}
        return EditBatch(**parts, text=self.text, suite=self.suite)


def _check_tensor(name: str, value: object, shape: tuple[int | None, ...]) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if value.ndim != len(shape) or any(
        s is not None and s != v for s, v in zip(shape, value.shape, strict=True)
    ):
        want = tuple("any" if s is None else s for s in shape)
        raise ValueError(f"{name} must have shape {want}; got {tuple(value.shape)}")
    return value


# --- instructions -------------------------------------------------------------------------------------------
def instruction_text(clauses: Sequence[tuple[str, str]]) -> str:
    """The instruction's words: "recolour the red square blue, the green square cyan and the …"."""
    parts = [f"the {c} square {new}" for c, new in clauses]
    if not parts:
        raise ValueError("clauses must hold at least one (colour, new colour) pair")
    body = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return "recolour " + body


def encode_instruction(clauses: Sequence[tuple[str, str]]) -> Tensor:
    """The (:data:`INSTRUCTION_DIM`,) float32 code of 1-3 clauses (colour names): one-hot c ‖ one-hot c′
    per clause slot, unused slots zero."""
    if not isinstance(clauses, Sequence) or not 1 <= len(clauses) <= K_MAX:
        raise ValueError(
            f"clauses must be a sequence of 1 to {K_MAX} (colour, new colour) pairs; got {clauses!r}"
        )
    code = torch.zeros(INSTRUCTION_DIM)
    for k, (c, new) in enumerate(clauses):
        check_choice(f"clauses[{k}][0]", c, COLOUR_NAMES)
        check_choice(f"clauses[{k}][1]", new, COLOUR_NAMES)
        code[k * CLAUSE_DIM + COLOUR_NAMES.index(c)] = 1.0
        code[k * CLAUSE_DIM + N_COLOURS + COLOUR_NAMES.index(new)] = 1.0
    return code


def decode_instruction(code: Tensor) -> tuple[tuple[str, str], ...]:
    """The clauses ``((c, c′), …)`` of one code (:data:`INSTRUCTION_DIM`,); a zero slot ends them."""
    code = _check_tensor("code", code, (INSTRUCTION_DIM,)).detach().cpu().reshape(K_MAX, 2, N_COLOURS)
    clauses = []
    for slot in code:
        if not bool(slot.any()):
            break
        clauses.append((COLOUR_NAMES[int(slot[0].argmax())], COLOUR_NAMES[int(slot[1].argmax())]))
    return tuple(clauses)


# --- generation ---------------------------------------------------------------------------------------------
def _backgrounds(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 3, 16, 16) gradients between two low-saturation colours in a random direction, plus texture."""
    grey = rng.uniform(*GREY_RANGE, size=(n, 2, 1))
    ends = grey + rng.uniform(-CHROMA, CHROMA, size=(n, 2, 3))  # (n, 2, 3)
    theta = rng.uniform(0.0, 2.0 * np.pi, size=n)
    cos, sin = np.cos(theta)[:, None, None], np.sin(theta)[:, None, None]
    centred = np.arange(SIZE) - (SIZE - 1) / 2.0
    u = (
        cos * centred[None, None, :] + sin * centred[None, :, None]
    )  # (n, 16, 16), projection on the direction
    s = 0.5 + u / (2.0 * (SIZE - 1) / 2.0 * (np.abs(cos) + np.abs(sin)))  # in [0, 1]
    image = ends[:, 0, :, None, None] + (ends[:, 1] - ends[:, 0])[:, :, None, None] * s[:, None]
    texture = rng.uniform(-TEXTURE_AMPLITUDE, TEXTURE_AMPLITUDE, size=(n, 1, SIZE, SIZE))
    return (image + texture).astype(np.float32)


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Squares (row, col, side) ``a`` and ``b`` leave at least :data:`GAP` clear pixels between them."""
    return bool(
        a[0] + a[2] + GAP <= b[0]
        or b[0] + b[2] + GAP <= a[0]
        or a[1] + a[2] + GAP <= b[1]
        or b[1] + b[2] + GAP <= a[1]
    )


def _draw_squares(rng: np.random.Generator, count: int) -> np.ndarray:
    """(count, 3) squares (row, col, side) of one canvas, placed one by one by rejection (starting over after
    :data:`_ROUNDS` rounds of candidates without a fit, so a blocked layout cannot stall it)."""
    placed: list[np.ndarray] = []
    rounds = 0
    while len(placed) < count:
        rounds += 1
        if rounds > _ROUNDS:
            placed, rounds = [], 0
        side = rng.integers(SIDE_RANGE[0], SIDE_RANGE[1] + 1, size=_CANDIDATES)
        corner = (rng.random((_CANDIDATES, 2)) * (SIZE - side[:, None] + 1)).astype(np.int64)
        for cand in np.concatenate([corner, side[:, None]], axis=1):
            if all(_apart(cand, p) for p in placed):
                placed.append(cand)
                if len(placed) == count:
                    break
    return np.stack(placed)


def _generate(
    rng: np.random.Generator, n_clauses: np.ndarray, n_objects: np.ndarray, suite: str
) -> EditBatch:
    """The cases with the given clause and object counts (each (B,), int64)."""
    b = len(n_clauses)
    source = _backgrounds(rng, b)
    # Object o of a case: colour perm[o]; clause k edits object k (objects are placed in a random order, so
    # the first n_clauses are a random choice) and gives it colour perm[n_objects + k]: distinct from every
    # colour before the edit and from the other new colours.
    perm = np.argsort(rng.random((b, N_COLOURS)), axis=1)
    squares = np.zeros((b, K_MAX, 3), dtype=np.int64)
    for i in range(b):
        sq = _draw_squares(rng, int(n_objects[i]))
        squares[i, : len(sq)] = sq[rng.permutation(len(sq))]
    exists = np.arange(K_MAX)[None, :] < n_objects[:, None]  # (B, 3)
    edited = np.arange(K_MAX)[None, :] < n_clauses[:, None]
    grid = np.arange(SIZE)
    rows = (grid[None, None, :] >= squares[..., :1]) & (
        grid[None, None, :] < squares[..., :1] + squares[..., 2:]
    )
    cols = (grid[None, None, :] >= squares[..., 1:2]) & (
        grid[None, None, :] < squares[..., 1:2] + squares[..., 2:]
    )
    obj = (rows[..., :, None] & cols[..., None, :]) & exists[..., None, None]  # (B, 3, 16, 16)
    colour = PALETTE_RGB[perm[:, :K_MAX]]  # (B, 3, 3): object o's colour
    new_index = np.take_along_axis(
        perm, np.minimum(n_objects[:, None] + np.arange(K_MAX), N_COLOURS - 1), axis=1
    )
    new_colour = np.where(edited[..., None], PALETTE_RGB[new_index], 0.0).astype(np.float32)  # (B, 3, 3)
    objf = obj.astype(np.float32)
    covered = objf.sum(axis=1, keepdims=True)  # (B, 1, 16, 16), 0 or 1
    paint = np.einsum("bohw,boc->bchw", objf, colour)
    source = source * (1.0 - covered) + paint
    edit_obj = objf * edited[..., None, None]
    target = source * (1.0 - edit_obj.sum(axis=1, keepdims=True)) + np.einsum(
        "bohw,boc->bchw", edit_obj, new_colour
    )
    masks = np.concatenate([1.0 - edit_obj.sum(axis=1, keepdims=True), edit_obj], axis=1)
    valid = np.concatenate([np.ones((b, 1), dtype=bool), edited], axis=1)
    code = np.zeros((b, K_MAX, 2, N_COLOURS), dtype=np.float32)
    ii, kk = np.nonzero(edited)
    code[ii, kk, 0, perm[ii, kk]] = 1.0
    code[ii, kk, 1, new_index[ii, kk]] = 1.0
    text = tuple(
        instruction_text(
            [(COLOUR_NAMES[perm[i, k]], COLOUR_NAMES[new_index[i, k]]) for k in range(int(n_clauses[i]))]
        )
        for i in range(b)
    )
    return EditBatch(
        source=torch.from_numpy(np.ascontiguousarray(source, dtype=np.float32)),
        target=torch.from_numpy(np.ascontiguousarray(target, dtype=np.float32)),
        masks=torch.from_numpy(masks.astype(np.float32)),
        region_valid=torch.from_numpy(valid),
        target_colours=torch.from_numpy(new_colour),
        instruction=torch.from_numpy(code.reshape(b, INSTRUCTION_DIM)),
        n_clauses=torch.from_numpy(n_clauses.astype(np.int64)),
        n_objects=torch.from_numpy(n_objects.astype(np.int64)),
        text=text,
        suite=suite,
    )


def _counts(
    rng: np.random.Generator,
    n: int,
    clauses: tuple[int, ...],
    objects: tuple[int, ...] | None,
    balanced: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case clause counts (uniform over ``clauses``, or in exact equal shares when ``balanced``, shuffled)
    and object counts (uniform over the allowed ones that are ≥ the clause count)."""
    if balanced:
        n_clauses = np.array(clauses, dtype=np.int64)[np.arange(n) % len(clauses)]
        n_clauses = n_clauses[rng.permutation(n)]
    else:
        n_clauses = np.array(clauses, dtype=np.int64)[rng.integers(0, len(clauses), size=n)]
    allowed = np.array(objects if objects is not None else range(1, K_MAX + 1), dtype=np.int64)
    choices = allowed[None, :] >= n_clauses[:, None]  # (n, len(allowed))
    if not choices.any(axis=1).all():
        raise ValueError(
            f"objects must allow at least as many objects as clauses; got {objects} for {clauses}"
        )
    pick = (rng.random(n) * choices.sum(axis=1)).astype(np.int64)  # index among the allowed choices
    order = np.cumsum(choices, axis=1) - 1
    n_objects = allowed[np.argmax(choices & (order == pick[:, None]), axis=1)]
    return n_clauses, n_objects


def _check_counts(name: str, value: object) -> tuple[int, ...]:
    if not isinstance(value, tuple) or not value:
        raise TypeError(f"{name} must be a non-empty tuple of ints in [1, {K_MAX}]; got {value!r}")
    return tuple(check_int(f"{name}[{i}]", v, minimum=1, maximum=K_MAX) for i, v in enumerate(value))


def sample_cases(
    n: int,
    seed: int,
    *,
    clauses: tuple[int, ...] | None = None,
    objects: tuple[int, ...] | None = None,
    balanced: bool = False,
    suite: str = "custom",
) -> EditBatch:
    """``n`` seeded cases: clause counts uniform over ``clauses`` (default 1-3; exact equal shares in random
    order when ``balanced``), object counts uniform over ``objects`` (default 1-3) restricted to ≥ the clause
    count. The generator behind :func:`make_suite` and :func:`training_batch`."""
    n = check_int("n", n, minimum=1)
    seed = check_seed("seed", seed)
    clauses = tuple(range(1, K_MAX + 1)) if clauses is None else _check_counts("clauses", clauses)
    objects = None if objects is None else _check_counts("objects", objects)
    if not isinstance(balanced, bool):
        raise TypeError(f"balanced must be a bool; got {type(balanced).__name__}")
    if not isinstance(suite, str):
        raise TypeError(f"suite must be a str; got {type(suite).__name__}")
    return _sample(np.random.default_rng(sub_seed(seed, STREAM_CASES)), n, clauses, objects, balanced, suite)


def _sample(
    rng: np.random.Generator,
    n: int,
    clauses: tuple[int, ...],
    objects: tuple[int, ...] | None,
    balanced: bool,
    suite: str,
) -> EditBatch:
    n_clauses, n_objects = _counts(rng, n, clauses, objects, balanced)
    return _generate(rng, n_clauses, n_objects, suite)


#: Clause counts, object counts and balance of each suite (see :func:`sample_cases`).
_SUITE_SPECS: dict[str, tuple[tuple[int, ...], tuple[int, ...] | None]] = {
    "single": ((1,), (1, 2, 3)),
    "mixed": ((1, 2), None),
    "multiedit": ((2, 3), (3,)),
}


def make_suite(name: str, n: int = SUITE_SIZE, seed: int = 0) -> EditBatch:
    """The evaluation suite ``name`` (:data:`SUITES`) of ``n`` cases, from ``sub_seed(seed, STREAM_SUITE,
    index)``: ``single`` 1 clause on 1-3 objects; ``mixed`` 1-2 clauses (half each) on clauses-to-3 objects;
    ``multiedit`` half 3 clauses on 3 objects, half 2 clauses on 3 objects (one kept). The default seed gives
    the chapter's fixed suites."""
    name = check_choice("name", name, SUITES)
    n = check_int("n", n, minimum=1)
    seed = check_seed("seed", seed)
    clauses, objects = _SUITE_SPECS[name]
    rng = np.random.default_rng(sub_seed(seed, STREAM_SUITE, SUITES.index(name)))
    return _sample(rng, n, clauses, objects, True, name)


def training_batch(batch_size: int, seed: int, step: int) -> EditBatch:
    """A fresh batch of **flawed** pretraining pairs for step ``step`` (stream ``sub_seed(seed, STREAM_TRAIN,
    step)``): 1-3 clauses uniform, objects uniform from the clause count to 3. Flaws (``flaw`` columns
    :data:`FLAWS`, drawn independently): with probability :data:`FLAW_PARTIAL` a multi-clause target applies
    clause 1 only; with probability :data:`FLAW_TINT` :data:`TINT` is added to one random channel of the
    target over Ω₀ (clipped to [0, 1]). Masks, target colours and instruction stay the true ones."""
    batch_size = check_int("batch_size", batch_size, minimum=1)
    seed = check_seed("seed", seed)
    step = check_int("step", step, minimum=0)
    rng = np.random.default_rng(sub_seed(seed, STREAM_TRAIN, step))
    batch = _sample(rng, batch_size, tuple(range(1, K_MAX + 1)), None, False, "train")
    n_clauses = batch.n_clauses.numpy()
    partial = (rng.random(batch_size) < FLAW_PARTIAL) & (n_clauses >= 2)
    tint = rng.random(batch_size) < FLAW_TINT
    channel = rng.integers(0, 3, size=batch_size)
    target = batch.target.numpy().copy()
    source = batch.source.numpy()
    masks = batch.masks.numpy()
    later = masks[:, 2:].sum(axis=1, keepdims=True) * partial[:, None, None, None]  # squares of clauses 2, 3
    target = target * (1.0 - later) + source * later
    shift = np.zeros((batch_size, 3), dtype=np.float32)
    shift[np.arange(batch_size), channel] = TINT
    shift *= tint[:, None]
    target = np.clip(target + shift[:, :, None, None] * masks[:, :1], 0.0, 1.0)
    return dataclasses.replace(
        batch,
        target=torch.from_numpy(target.astype(np.float32)),
        flaw=torch.from_numpy(np.stack([partial, tint], axis=1)),
    )


def palette_distance_to_box(low: float, high: float) -> float:
    """The smallest Euclidean RGB distance between a :data:`PALETTE` colour and the cube [low, high]³ (the
    background's range): the bound behind "every colour is ≥ 0.35 from any background pixel"."""
    low = check_float("low", low, minimum=0.0, maximum=1.0)
    high = check_float("high", high, minimum=low, maximum=1.0)
    gap = np.maximum(np.maximum(low - PALETTE_RGB, PALETTE_RGB - high), 0.0)
    return float(np.sqrt((gap**2).sum(axis=1)).min())
