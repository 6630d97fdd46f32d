"""The ATISS-style baseline of chapter 18 (IOHP): an autoregressive transformer over an unordered set of
furniture, conditioned on the floor plan and trained on the procedural corpus (§4).

ATISS (Paschalidou et al., 2021) treats a room's furniture as an unordered set: it is trained on random
permutations of the objects and generates one object at a time (category, position, size, orientation)
conditioned on the floor plan and on the objects already placed. It learns from data and so inherits the
data's habits, usability flaws included: the point of comparing it with IOHP (claim C5). The stand-in here
is a small :class:`neurips26.nn.Decoder` over discrete tokens, trained with :func:`neurips26.train.fit` on
:mod:`neurips26.iohp.corpus` layouts.

**Tokens** ([our choice], :data:`GRID` = 5 cm). One layout is the sequence

    <bos> type W D notch n_x n_y door_dir door_x door_y door_w | (cat w d ori x y) x n | <end>

* room (11 tokens, fixed length): the room type; the bounding box ``W x D``; the L-shape's notch as the
  bounding-box corner it cuts (none, or 0..3 counter-clockwise from ``(x_min, y_min)``) and its extents
  ``n_x, n_y`` (0 for a rectangle); the first door as its inward direction (+x, +y, -x, -y), its centre
  relative to ``(x_min, y_min)`` and its width. Lengths are *length tokens*: ``round(l / GRID)``, 0-6 m;
* each object (6 tokens): its category, size ``w, d`` (length tokens), heading rounded to one of the four
  axis directions, then its position per axis as a *wall-anchored gap*: the footprint's axis-aligned
  extent ``[c - h, c + h]`` is measured from the nearer bounding-box side, ``low: g = c - h - x_min`` or
  ``high: g = x_max - c - h``, and the token is ``(side, round(g / GRID))`` (two ranges of 61 tokens, gaps
  0-3 m, as the nearer side is at most half the room away). Decoding inverts it with the piece's size.
* objects are in a random order, a fresh permutation each time a layout is drawn for a batch (ATISS is
  trained on permutations); the model is asked to predict every object token and ``<end>``, never the room.

Two departures from ATISS, both for the chapter's setting: the sizes come right after the category (the
evaluation gives every piece's category and size, so they are conditioning), and positions are gaps to the
nearer wall instead of centres: with 5 cm centres, rounding alone pushed 23 % of the corpus' pieces more
than 1 cm through a wall (the out-of-bounds metric's tolerance); with wall gaps a piece flush against a wall
stays flush exactly (0.6 % of pieces). Rounding still turns the planner's 2 cm gaps inside groups into
overlaps: 30 % of corpus layouts get a collision from rounding alone (a floor any model of the corpus at
this grid shares).

**Model.** :data:`ATISS_CONFIG`: width 64, 2 blocks, 4 heads, MLP ratio 3, learned absolute positions (the
room prefix has a fixed length, so a position names its field), context 128 (at most :data:`MAX_OBJECTS` =
19 objects), tied embeddings: 109,632 parameters (about 110 thousand). Training (:func:`train_atiss`):
next-token cross-entropy on the object tokens, AdamW with warm-up and cosine decay
(:func:`neurips26.train.fit`), batches of 32 layouts drawn by a seeded epoch permutation; the validation
NLL (nats per object token) is measured on held-out corpus layouts, each in one fixed seeded order.

**Generation** (:func:`atiss_layout`, constrained decoding). Given the room and the object list, the room
tokens are the prompt; for each object in list order the category and size tokens are *forced* (fed, not
sampled), and the heading, then the ``x`` gap, then the ``y`` gap are sampled from the model's next-token
distribution restricted to the tokens of that field (heading: the 4 orientations; gaps: those that keep the
piece's axis-aligned extent inside the room's bounding box; the L-shape's notch is not masked). Greedy
or temperature sampling (a seeded ``torch.Generator``). :func:`sample_atiss` lets the model choose the
categories and sizes too (unconstrained, until it emits ``<end>``); :func:`category_count_correlation`
compares the category counts of such samples with the corpus' (the sidecar's sanity number).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.iohp.corpus import CorpusLayout, split_corpus
from neurips26.iohp.layout import ROOM_TYPES, Furniture, Layout, Room
from neurips26.iohp.rooms import CATEGORIES
from neurips26.nn import Decoder, DecoderConfig, sample_next_token
from neurips26.seeding import sub_seed
from neurips26.train import choose_device, fit
from neurips26.validation import check_choice, check_float, check_int, check_seed

#: Grid (m) of every length and gap token.
GRID = 0.05
#: Longest length token (m): room sides, door positions, furniture sizes.
MAX_LENGTH = 6.0
#: Largest wall gap (m) of a position token (the nearer side is at most half a 6 m room away).
MAX_GAP = 3.0
#: The categories in token order.
CATEGORY_NAMES: tuple[str, ...] = tuple(CATEGORIES)
#: The four headings (rad) of the orientation tokens, in token order.
HEADINGS: tuple[float, ...] = (0.0, math.pi / 2.0, math.pi, -math.pi / 2.0)

N_LENGTH = round(MAX_LENGTH / GRID) + 1
N_GAP = round(MAX_GAP / GRID) + 1
PAD, BOS, END = 0, 1, 2
ROOM0 = 3
CAT0 = ROOM0 + len(ROOM_TYPES)
ORI0 = CAT0 + len(CATEGORY_NAMES)
NOTCH0 = ORI0 + len(HEADINGS)  # none, then the corners 0..3
DOOR0 = NOTCH0 + 5
LEN0 = DOOR0 + len(HEADINGS)
LOW0 = LEN0 + N_LENGTH
HIGH0 = LOW0 + N_GAP
#: Vocabulary size.
VOCAB_SIZE = HIGH0 + N_GAP
#: Tokens of the room prefix (``<bos>`` included) and of one object.
ROOM_TOKENS = 11
OBJECT_TOKENS = 6
#: The model (module docstring).
ATISS_CONFIG = DecoderConfig(
    vocab_size=VOCAB_SIZE, width=64, depth=2, heads=4, context=128, mlp_ratio=3, positions="learned"
)
#: Most objects a sequence of :data:`ATISS_CONFIG` holds.
MAX_OBJECTS = (ATISS_CONFIG.context - ROOM_TOKENS - 1) // OBJECT_TOKENS
#: Sampling strategies of the generators.
STRATEGIES: tuple[str, ...] = ("greedy", "temperature")

_IGNORE = -100


# ----------------------------------------------------------------------------------------------------------
# Tokens
# ----------------------------------------------------------------------------------------------------------


def _length(value: float) -> int:
    return LEN0 + int(np.clip(round(value / GRID), 0, N_LENGTH - 1))


def _heading_index(theta: float) -> int:
    return int(round(theta / (math.pi / 2.0))) % 4


def _extents(size: np.ndarray, heading: int) -> tuple[float, float]:
    """Half extents along x and y of a ``(w, d)`` footprint at axis heading ``heading`` (0..3)."""
    w, d = float(size[0]), float(size[1])
    return (d / 2.0, w / 2.0) if heading % 2 == 0 else (w / 2.0, d / 2.0)


def _gap_token(center: float, half: float, lo: float, hi: float) -> int:
    g_lo, g_hi = center - half - lo, hi - center - half
    if g_lo <= g_hi:
        return LOW0 + int(np.clip(round(g_lo / GRID), 0, N_GAP - 1))
    return HIGH0 + int(np.clip(round(g_hi / GRID), 0, N_GAP - 1))


def _gap_value(token: int, half: float, lo: float, hi: float) -> float:
    """The centre coordinate a position token gives a piece of half extent ``half`` in ``[lo, hi]``."""
    if LOW0 <= token < HIGH0:
        return lo + (token - LOW0) * GRID + half
    return hi - (token - HIGH0) * GRID - half


def _check_room(room: object) -> Room:
    if not isinstance(room, Room):
        raise TypeError(f"room must be a Room; got {type(room).__name__}")
    if not room.doors:
        raise ValueError("room must have a door (its position is part of the room tokens)")
    return room


def room_tokens(room: Room) -> np.ndarray:
    """The 11 room tokens (module docstring) of ``room``: int64 array (11,)."""
    room = _check_room(room)
    x0, y0, x1, y1 = room.bounds
    notch, nx, ny = NOTCH0, 0.0, 0.0
    if room.notch is not None:
        a0, b0, a1, b1 = room.notch
        notch, nx, ny = NOTCH0 + 1 + room.notch_corner, a1 - a0, b1 - b0
    door = room.doors[0]
    direction = _heading_index(math.atan2(door.inward[1], door.inward[0]))
    return np.array(
        [
            BOS,
            ROOM0 + ROOM_TYPES.index(room.room_type),
            _length(x1 - x0),
            _length(y1 - y0),
            notch,
            _length(nx),
            _length(ny),
            DOOR0 + direction,
            _length(door.center[0] - x0),
            _length(door.center[1] - y0),
            _length(door.width),
        ],
        dtype=np.int64,
    )


def _check_layout(layout: object) -> Layout:
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    if layout.n > MAX_OBJECTS:
        raise ValueError(f"layout has {layout.n} objects; the context holds at most {MAX_OBJECTS}")
    unknown = sorted(set(layout.categories) - set(CATEGORY_NAMES))
    if unknown:
        raise ValueError(f"layout has categories the vocabulary lacks: {unknown}")
    return layout


def object_tokens(layout: Layout) -> np.ndarray:
    """The object tokens of ``layout`` in list order: int64 array (n, 6) = (cat, w, d, ori, x, y)."""
    layout = _check_layout(layout)
    x0, y0, x1, y1 = layout.room.bounds
    out = np.zeros((layout.n, OBJECT_TOKENS), dtype=np.int64)
    for i, f in enumerate(layout.furniture):
        heading = _heading_index(f.theta)
        hx, hy = _extents(np.array(f.size[:2]), heading)
        out[i] = (
            CAT0 + CATEGORY_NAMES.index(f.category),
            _length(f.width),
            _length(f.depth),
            ORI0 + heading,
            _gap_token(f.pose[0], hx, x0, x1),
            _gap_token(f.pose[1], hy, y0, y1),
        )
    return out


def tokenize(layout: Layout, order: Sequence[int] | None = None) -> np.ndarray:
    """The token sequence of ``layout``: room, objects in ``order`` (default list order), ``<end>``: (T,)."""
    objects = object_tokens(layout)
    if order is not None:
        order = np.asarray(order)
        if sorted(order.tolist()) != list(range(layout.n)):
            raise ValueError(f"order must be a permutation of range({layout.n}); got {order.tolist()}")
        objects = objects[order]
    return np.concatenate([room_tokens(layout.room), objects.reshape(-1), [END]]).astype(np.int64)


@dataclass(frozen=True)
class DecodedObject:
    """One object read back from tokens: ``category``, ``size = (w, d)``, ``pose = (x, y, theta)``.

    Positions are relative to the room's bounding-box corner ``(x_min, y_min)``; the gap is converted with
    the decoded (gridded) size.
    """

    category: str
    size: tuple[float, float]
    pose: tuple[float, float, float]


@dataclass(frozen=True)
class DecodedScene:
    """A token sequence read back: room fields and objects (module docstring); lengths in metres.

    ``notch_corner`` is ``None`` for a rectangle; ``door_center`` is relative to ``(x_min, y_min)``.
    """

    room_type: str
    size: tuple[float, float]
    notch_corner: int | None
    notch_size: tuple[float, float]
    door_direction: int
    door_center: tuple[float, float]
    door_width: float
    objects: tuple[DecodedObject, ...]


def _in_range(tokens: np.ndarray, i: int, lo: int, n: int, field: str) -> int:
    t = int(tokens[i])
    if not lo <= t < lo + n:
        raise ValueError(f"tokens[{i}] must be a {field} token; got {t}")
    return t - lo


def detokenize(tokens: Sequence[int] | np.ndarray | torch.Tensor) -> DecodedScene:
    """Read a token sequence back (:func:`tokenize`'s inverse up to the grid). Stops at ``<end>``."""
    if isinstance(tokens, torch.Tensor):
        tokens = tokens.detach().cpu().numpy()
    tokens = np.asarray(tokens)
    if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
        raise ValueError(
            f"tokens must be a 1-D integer sequence; got shape {tokens.shape}, dtype {tokens.dtype}"
        )
    if len(tokens) < ROOM_TOKENS or tokens[0] != BOS:
        raise ValueError(f"tokens must start with <bos> and the {ROOM_TOKENS - 1} room tokens")

    def length(i: int) -> float:
        return _in_range(tokens, i, LEN0, N_LENGTH, "length") * GRID

    room_type = ROOM_TYPES[_in_range(tokens, 1, ROOM0, len(ROOM_TYPES), "room type")]
    W, D = length(2), length(3)
    notch = _in_range(tokens, 4, NOTCH0, 5, "notch")
    objects = []
    i = ROOM_TOKENS
    while i < len(tokens) and tokens[i] != END:
        if i + OBJECT_TOKENS > len(tokens):
            raise ValueError(f"tokens end inside an object at {i}")
        cat = CATEGORY_NAMES[_in_range(tokens, i, CAT0, len(CATEGORY_NAMES), "category")]
        size = np.array([length(i + 1), length(i + 2)])
        heading = _in_range(tokens, i + 3, ORI0, 4, "orientation")
        hx, hy = _extents(size, heading)
        for j in (i + 4, i + 5):
            if not LOW0 <= int(tokens[j]) < HIGH0 + N_GAP:
                raise ValueError(f"tokens[{j}] must be a position (gap) token; got {int(tokens[j])}")
        x = _gap_value(int(tokens[i + 4]), hx, 0.0, W)
        y = _gap_value(int(tokens[i + 5]), hy, 0.0, D)
        objects.append(DecodedObject(cat, (float(size[0]), float(size[1])), (x, y, HEADINGS[heading])))
        i += OBJECT_TOKENS
    return DecodedScene(
        room_type=room_type,
        size=(W, D),
        notch_corner=None if notch == 0 else notch - 1,
        notch_size=(length(5), length(6)),
        door_direction=_in_range(tokens, 7, DOOR0, 4, "door direction"),
        door_center=(length(8), length(9)),
        door_width=length(10),
        objects=tuple(objects),
    )


# ----------------------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------------------


def atiss_model(config: DecoderConfig = ATISS_CONFIG, *, seed: int = 0) -> Decoder:
    """A fresh :class:`neurips26.nn.Decoder` for these tokens (``config.vocab_size`` = :data:`VOCAB_SIZE`)."""
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config must be a DecoderConfig; got {type(config).__name__}")
    if config.vocab_size != VOCAB_SIZE:
        raise ValueError(
            f"config.vocab_size must be {VOCAB_SIZE} (the token vocabulary); got {config.vocab_size}"
        )
    if config.context < ROOM_TOKENS + OBJECT_TOKENS + 1:
        raise ValueError(
            f"config.context must hold a room and one object ({ROOM_TOKENS + OBJECT_TOKENS + 1})"
        )
    return Decoder(config, seed=check_seed("seed", seed))


def _layouts(corpus: object, name: str = "corpus") -> tuple[Layout, ...]:
    """The layouts of a sequence of :class:`~neurips26.iohp.corpus.CorpusLayout` or :class:`Layout`."""
    if isinstance(corpus, str) or not isinstance(corpus, Sequence):
        raise TypeError(f"{name} must be a sequence of CorpusLayout or Layout; got {type(corpus).__name__}")
    out = []
    for i, item in enumerate(corpus):
        if isinstance(item, CorpusLayout):
            item = item.layout
        if not isinstance(item, Layout):
            raise TypeError(f"{name}[{i}] must be a CorpusLayout or a Layout; got {type(item).__name__}")
        out.append(item)
    return tuple(out)


@dataclass(frozen=True)
class Encoded:
    """Layouts as tokens: ``rooms`` (N, 11) and each layout's ``objects`` (n_i, 6), list order."""

    rooms: np.ndarray
    objects: tuple[np.ndarray, ...]

    def __len__(self) -> int:
        return len(self.objects)

    def batch(self, index: Sequence[int], orders: Sequence[np.ndarray], context: int) -> torch.Tensor:
        """Layouts ``index``, objects in ``orders``, right-padded with ``<pad>``: int64 tensor (B, T)."""
        seqs = [
            np.concatenate([self.rooms[i], self.objects[i][o].reshape(-1), [END]])
            for i, o in zip(index, orders, strict=True)
        ]
        length = max(len(s) for s in seqs)
        if length > context:
            raise ValueError(f"a layout needs {length} tokens; the model's context is {context}")
        out = np.full((len(seqs), length), PAD, dtype=np.int64)
        for b, s in enumerate(seqs):
            out[b, : len(s)] = s
        return torch.from_numpy(out)


def encode(layouts: Sequence[CorpusLayout | Layout]) -> Encoded:
    """Token arrays of ``layouts`` (:func:`room_tokens`, :func:`object_tokens`)."""
    items = _layouts(layouts, "layouts")
    rooms = np.stack([room_tokens(lay.room) for lay in items]) if items else np.zeros((0, ROOM_TOKENS), int)
    return Encoded(rooms, tuple(object_tokens(lay) for lay in items))


def sequence_loss(model: nn.Module, tokens: torch.Tensor, *, reduction: str = "mean") -> torch.Tensor:
    """Next-token cross-entropy (nats) on the object tokens and ``<end>`` of ``tokens`` (B, T).

    Room tokens and padding are not predicted. ``reduction``: ``"mean"`` over predicted tokens, or
    ``"sum"``. ``model`` is the :class:`Decoder` or, under torchrun, the data-parallel wrapper around it
    (only its forward is called).
    """
    check_choice("reduction", reduction, ("mean", "sum"))
    logits = model(tokens[:, :-1]).logits
    target = tokens[:, 1:].clone()
    target[:, : ROOM_TOKENS - 1] = _IGNORE
    target[target == PAD] = _IGNORE
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=_IGNORE, reduction=reduction
    )


def _fixed_orders(encoded: Encoded, seed: int) -> list[np.ndarray]:
    return [
        np.random.default_rng(sub_seed(seed, i)).permutation(len(o)) for i, o in enumerate(encoded.objects)
    ]


@torch.no_grad()
def validation_nll(
    model: Decoder, layouts: Sequence[CorpusLayout | Layout], *, seed: int = 0, batch: int = 256
) -> float:
    """Mean NLL (nats per object token, ``<end>`` included) of ``layouts``, each in one seeded order (on
    the model's device)."""
    if not isinstance(model, Decoder):
        raise TypeError(f"model must be a Decoder; got {type(model).__name__}")
    encoded = encode(layouts)
    if len(encoded) == 0:
        raise ValueError("layouts must not be empty")
    seed = check_seed("seed", seed)
    batch = check_int("batch", batch, minimum=1)
    orders = _fixed_orders(encoded, seed)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        for start in range(0, len(encoded), batch):
            idx = list(range(start, min(start + batch, len(encoded))))
            tokens = encoded.batch(idx, [orders[i] for i in idx], model.config.context).to(device)
            total += float(sequence_loss(model, tokens, reduction="sum"))
            count += int(sum(OBJECT_TOKENS * len(encoded.objects[i]) + 1 for i in idx))
    finally:
        model.train(was_training)
    return total / count


@dataclass(frozen=True)
class AtissTraining:
    """What :func:`train_atiss` returns: the trained ``model``, the training ``loss`` per step (nats per
    token), the validation NLL ``val_nll`` measured after ``val_step`` updates, the final ``final_nll``,
    the ``train`` and ``validation`` indices into the corpus, and ``seconds_per_step``."""

    model: Decoder
    loss: tuple[float, ...]
    val_step: tuple[int, ...]
    val_nll: tuple[float, ...]
    final_nll: float
    train: tuple[int, ...]
    validation: tuple[int, ...]
    seconds_per_step: float


def _split(layouts: Sequence[Layout], validation: float | Sequence[int], seed: int) -> tuple:
    """Training and validation indices: those given, or :func:`~neurips26.iohp.corpus.split_corpus`'s."""
    n = len(layouts)
    if isinstance(validation, Sequence) and not isinstance(validation, str):
        chosen = {
            check_int(f"validation[{j}]", v, minimum=0, maximum=n - 1) for j, v in enumerate(validation)
        }
        val = tuple(sorted(chosen))
        train = tuple(i for i in range(n) if i not in chosen)
    else:
        frac = check_float("validation", validation, minimum=0.0, maximum=0.5, strict_min=True)
        train, val = split_corpus(layouts, validation=frac, seed=seed)
    if not train or not val:
        raise ValueError(f"validation must leave layouts for training and validation; got {len(val)} of {n}")
    return train, val


def train_atiss(
    corpus: Sequence[CorpusLayout | Layout],
    steps: int,
    seed: int,
    *,
    batch: int = 32,
    lr: float = 3e-3,
    warmup: int = 50,
    weight_decay: float = 0.01,
    validation: float | Sequence[int] = 0.1,
    eval_every: int = 100,
    config: DecoderConfig = ATISS_CONFIG,
    progress: bool = False,
) -> AtissTraining:
    """Train the ATISS-style decoder on ``corpus`` for ``steps`` updates (module docstring), on the device
    :func:`~neurips26.train.choose_device` picks (data-parallel under torchrun: :func:`neurips26.train.fit`
    shards each batch of layouts over the ranks).

    ``corpus``: :class:`~neurips26.iohp.corpus.CorpusLayout` or :class:`Layout` records. ``validation``: the
    held-out share (``split_corpus(corpus, validation=share, seed=seed)``, so a checkpoint's validation set
    can be rebuilt without training) or explicit held-out indices. Batch ``b`` of epoch ``e`` takes the next
    ``batch`` layouts of the epoch's seeded permutation of the training layouts, each with its objects in a
    fresh seeded order. ``seed`` fixes the weights, the split, the batches and the orders.
    """
    layouts = _layouts(corpus)
    if len(layouts) < 2:
        raise ValueError(f"corpus must hold at least 2 layouts; got {len(layouts)}")
    steps = check_int("steps", steps, minimum=1)
    seed = check_seed("seed", seed)
    batch = check_int("batch", batch, minimum=1)
    eval_every = check_int("eval_every", eval_every, minimum=1)
    train_idx, val_idx = _split(layouts, validation, seed)
    encoded = encode(layouts)
    model = atiss_model(config, seed=sub_seed(seed, 0)).to(choose_device())
    train = np.array(train_idx)
    per_epoch = max(1, len(train) // batch)

    def batches(step: int) -> torch.Tensor:
        epoch, b = divmod(step, per_epoch)
        perm = np.random.default_rng(sub_seed(seed, 2, epoch)).permutation(len(train))
        pick = train[perm[np.arange(b * batch, (b + 1) * batch) % len(train)]]  # wraps when train < batch
        orders = [
            np.random.default_rng(sub_seed(seed, 3, epoch, int(i))).permutation(len(encoded.objects[i]))
            for i in pick
        ]
        return encoded.batch(pick.tolist(), orders, config.context)

    val_layouts = [layouts[i] for i in val_idx]
    history = fit(
        model,
        lambda m, tokens: sequence_loss(m, tokens),
        batches,
        steps=steps,
        seed=sub_seed(seed, 4),
        lr=lr,
        warmup=min(warmup, steps),
        weight_decay=weight_decay,
        eval_fn=lambda m: {"val_nll": validation_nll(m, val_layouts, seed=seed)},
        eval_every=eval_every,
        progress=progress,
        desc="ATISS-style",
    )
    model.eval()
    val = tuple(history.eval["val_nll"])
    return AtissTraining(
        model=model,
        loss=tuple(history.loss),
        val_step=tuple(history.eval_step),
        val_nll=val,
        final_nll=val[-1],
        train=train_idx,
        validation=val_idx,
        seconds_per_step=history.wall_time[-1] / len(history.loss),
    )


# ----------------------------------------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------------------------------------


class _Decoding:
    """Token-by-token decoding with a key/value cache, one sequence; ``feed`` returns the last logits."""

    def __init__(self, model: Decoder, prompt: np.ndarray) -> None:
        self.model = model
        self.device = next(model.parameters()).device
        self.cache = model.make_cache()
        self.length = 0
        self.logits = self.feed(prompt)

    def feed(self, tokens: Sequence[int] | np.ndarray) -> torch.Tensor:
        """Feed ``tokens``; the logits of the last one, on the CPU (the samplers' generators live there)."""
        t = torch.as_tensor(np.asarray(tokens, dtype=np.int64)).reshape(1, -1).to(self.device)
        if self.length + t.shape[1] > self.model.config.context:
            raise ValueError(
                f"the layout needs more than the model's context of {self.model.config.context} tokens"
            )
        self.length += t.shape[1]
        self.logits = self.model(t, cache=self.cache).logits[:, -1].float().cpu()
        return self.logits


def _pick(logits: torch.Tensor, allowed: np.ndarray, strategy: str, temperature: float, generator) -> int:
    """One token among ``allowed`` (bool mask over the vocabulary)."""
    mask = torch.as_tensor(allowed, dtype=torch.bool)
    if not bool(mask.any()):
        raise RuntimeError("no token is allowed at this step")  # pragma: no cover - the masks are never empty
    masked = logits.masked_fill(~mask, float("-inf"))
    kwargs = {"generator": generator} if strategy == "temperature" else {}
    return int(sample_next_token(masked, strategy=strategy, temperature=temperature, **kwargs)[0])


def _mask(*ranges: tuple[int, int]) -> np.ndarray:
    m = np.zeros(VOCAB_SIZE, dtype=bool)
    for lo, hi in ranges:
        m[lo:hi] = True
    return m


def _gap_mask(half: float, extent: float) -> np.ndarray:
    """Position tokens that keep ``[c - half, c + half]`` inside ``[0, extent]`` (gap 0 when nothing fits)."""
    largest = max(int(math.floor((extent - 2.0 * half) / GRID + 1e-9)), 0)
    n = min(largest, N_GAP - 1) + 1
    return _mask((LOW0, LOW0 + n), (HIGH0, HIGH0 + n))


_ORI_MASK = _mask((ORI0, ORI0 + 4))


def _check_sampling(model: object, seed: object, strategy: object, temperature: object) -> tuple:
    if not isinstance(model, Decoder):
        raise TypeError(f"model must be a Decoder; got {type(model).__name__}")
    if model.config.vocab_size != VOCAB_SIZE:
        raise ValueError(f"model must have vocab_size {VOCAB_SIZE}; got {model.config.vocab_size}")
    seed = check_seed("seed", seed)
    check_choice("strategy", strategy, STRATEGIES)
    temperature = check_float("temperature", temperature, minimum=0.0, strict_min=True)
    generator = torch.Generator().manual_seed(seed) if strategy == "temperature" else None
    return seed, generator, temperature


@torch.no_grad()
def _place(
    model: Decoder,
    room: Room,
    sizes: np.ndarray,
    categories: Sequence[str],
    strategy: str,
    temperature: float,
    generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Poses (n, 3) of the listed objects by constrained decoding, and the whole token sequence (T,)."""
    x0, y0, x1, y1 = room.bounds
    was_training = model.training
    model.eval()
    try:
        prompt = room_tokens(room)
        dec = _Decoding(model, prompt)
        poses = np.zeros((len(categories), 3))
        tokens = prompt.tolist()
        pending: list[int] = []
        for i, cat in enumerate(categories):
            forced = [CAT0 + CATEGORY_NAMES.index(cat), _length(sizes[i, 0]), _length(sizes[i, 1])]
            logits = dec.feed(pending + forced)
            heading = _pick(logits, _ORI_MASK, strategy, temperature, generator) - ORI0
            hx, hy = _extents(sizes[i], heading)
            logits = dec.feed([ORI0 + heading])
            tx = _pick(logits, _gap_mask(hx, x1 - x0), strategy, temperature, generator)
            logits = dec.feed([tx])
            ty = _pick(logits, _gap_mask(hy, y1 - y0), strategy, temperature, generator)
            pending = [ty]
            tokens += [*forced, ORI0 + heading, tx, ty]
            poses[i] = (_gap_value(tx, hx, x0, x1), _gap_value(ty, hy, y0, y1), HEADINGS[heading])
    finally:
        model.train(was_training)
    return poses, np.array([*tokens, END], dtype=np.int64)


def _constrained(
    model: Decoder, layout: Layout, seed: int, strategy: str, temperature: float
) -> tuple[np.ndarray, np.ndarray]:
    layout = _check_layout(layout)
    _check_room(layout.room)
    _, generator, temperature = _check_sampling(model, seed, strategy, temperature)
    sizes = layout.sizes()[:, :2]
    return _place(model, layout.room, sizes, layout.categories, strategy, temperature, generator)


def atiss_layout(
    model: Decoder,
    layout: Layout,
    seed: int,
    *,
    strategy: str = "temperature",
    temperature: float = 1.0,
) -> Layout:
    """``layout`` with poses from the model by constrained decoding (module docstring); relations kept.

    ``layout``: the room and the furniture to place (categories, sizes, order; poses ignored).
    ``strategy``: ``"temperature"`` (seeded sampling at ``temperature``) or ``"greedy"``. Every piece's
    axis-aligned extent lies in the room's bounding box; same arguments, same layout.
    """
    poses, _ = _constrained(model, layout, seed, strategy, temperature)
    return layout.with_poses(poses)


def atiss_tokens(
    model: Decoder,
    layout: Layout,
    seed: int,
    *,
    strategy: str = "temperature",
    temperature: float = 1.0,
) -> np.ndarray:
    """The token sequence behind :func:`atiss_layout` (same arguments, same draws): room, forced category and
    size tokens, sampled heading and gaps, ``<end>``: int64 (11 + 6 n + 1,)."""
    _, tokens = _constrained(model, layout, seed, strategy, temperature)
    return tokens


@torch.no_grad()
def sample_atiss(
    model: Decoder,
    room: Room,
    seed: int,
    *,
    strategy: str = "temperature",
    temperature: float = 1.0,
    max_objects: int = MAX_OBJECTS,
) -> Layout:
    """An unconstrained sample: the model also chooses how many objects, their categories and sizes.

    Decoding stops at ``<end>`` or after ``max_objects``; sizes are masked to positive lengths, positions
    as in :func:`atiss_layout`; heights are each category's mid height. Returns a :class:`Layout` of ``room``.
    """
    room = _check_room(room)
    _, generator, temperature = _check_sampling(model, seed, strategy, temperature)
    max_objects = check_int("max_objects", max_objects, minimum=0, maximum=MAX_OBJECTS)
    x0, y0, x1, y1 = room.bounds
    cat_mask = _mask((CAT0, CAT0 + len(CATEGORY_NAMES)), (END, END + 1))
    size_mask = _mask((LEN0 + 1, LEN0 + N_LENGTH))
    was_training = model.training
    model.eval()
    furniture: list[Furniture] = []
    counts: dict[str, int] = {}
    try:
        dec = _Decoding(model, room_tokens(room))
        logits = dec.logits
        for _ in range(max_objects):
            t = _pick(logits, cat_mask, strategy, temperature, generator)
            if t == END:
                break
            cat = CATEGORY_NAMES[t - CAT0]
            w = _pick(dec.feed([t]), size_mask, strategy, temperature, generator)
            d = _pick(dec.feed([w]), size_mask, strategy, temperature, generator)
            size = np.array([(w - LEN0) * GRID, (d - LEN0) * GRID])
            heading = _pick(dec.feed([d]), _ORI_MASK, strategy, temperature, generator) - ORI0
            hx, hy = _extents(size, heading)
            tx = _pick(dec.feed([ORI0 + heading]), _gap_mask(hx, x1 - x0), strategy, temperature, generator)
            ty = _pick(dec.feed([tx]), _gap_mask(hy, y1 - y0), strategy, temperature, generator)
            pose = (_gap_value(tx, hx, x0, x1), _gap_value(ty, hy, y0, y1), HEADINGS[heading])
            counts[cat] = counts.get(cat, 0) + 1
            height = float(np.mean(CATEGORIES[cat].height))
            furniture.append(Furniture(cat, (size[0], size[1], height), pose, f"{cat}_{counts[cat]}"))
            if len(furniture) < max_objects and dec.length + OBJECT_TOKENS <= model.config.context:
                logits = dec.feed([ty])
            else:
                break
    finally:
        model.train(was_training)
    return Layout(room, tuple(furniture))


@dataclass(frozen=True)
class CountCorrelation:
    """Category counts of unconstrained samples against the corpus.

    ``generated`` and ``reference``: mean count per room of each (room type, category), shape
    (len(ROOM_TYPES), len(CATEGORY_NAMES)); ``r``: their Pearson correlation over the cells that are non-zero
    in either; ``mean_objects``: mean objects per room (generated, reference).
    """

    r: float
    generated: np.ndarray
    reference: np.ndarray
    mean_objects: tuple[float, float]


def _counts(layouts: Sequence[Layout]) -> np.ndarray:
    table = np.zeros((len(ROOM_TYPES), len(CATEGORY_NAMES)))
    rooms = np.zeros(len(ROOM_TYPES))
    for lay in layouts:
        t = ROOM_TYPES.index(lay.room.room_type)
        rooms[t] += 1
        for c in lay.categories:
            table[t, CATEGORY_NAMES.index(c)] += 1
    return table / np.maximum(rooms, 1)[:, None]


def category_count_correlation(
    model: Decoder,
    layouts: Sequence[CorpusLayout | Layout],
    seed: int,
    *,
    temperature: float = 1.0,
) -> CountCorrelation:
    """One unconstrained sample (:func:`sample_atiss`) per room of ``layouts``; counts against theirs."""
    items = _layouts(layouts, "layouts")
    if not items:
        raise ValueError("layouts must not be empty")
    seed = check_seed("seed", seed)
    samples = [
        sample_atiss(model, lay.room, sub_seed(seed, i), temperature=temperature)
        for i, lay in enumerate(items)
    ]
    gen, ref = _counts(samples), _counts(items)
    keep = (gen > 0) | (ref > 0)
    a, b = gen[keep], ref[keep]
    r = float(np.corrcoef(a, b)[0, 1]) if len(a) > 1 and a.std() > 0 and b.std() > 0 else 0.0
    return CountCorrelation(
        r=r,
        generated=gen,
        reference=ref,
        mean_objects=(float(np.mean([s.n for s in samples])), float(np.mean([lay.n for lay in items]))),
    )


__all__ = [
    "ATISS_CONFIG",
    "CATEGORY_NAMES",
    "GRID",
    "HEADINGS",
    "MAX_GAP",
    "MAX_LENGTH",
    "MAX_OBJECTS",
    "OBJECT_TOKENS",
    "ROOM_TOKENS",
    "STRATEGIES",
    "VOCAB_SIZE",
    "AtissTraining",
    "CountCorrelation",
    "DecodedObject",
    "DecodedScene",
    "Encoded",
    "atiss_layout",
    "atiss_model",
    "atiss_tokens",
    "category_count_correlation",
    "detokenize",
    "encode",
    "object_tokens",
    "room_tokens",
    "sample_atiss",
    "sequence_loss",
    "tokenize",
    "train_atiss",
    "validation_nll",
]
