"""The instruction vocabulary: exact encode/decode round trips, padding, the derived length cap (re-derived
here by exhaustive search, and met exactly by the worst route), and named errors for bad words."""

import numpy as np
import pytest

from neurips26.sparsevideonav import instructions as I
from neurips26.sparsevideonav.tasks import ifn_words

_STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1))


def _most_runs(n: int) -> tuple[int, list[tuple[int, int]]]:
    """Branch and bound over self-avoiding walks of an n x n grid: the most straight runs, and a walk."""
    best = [0, []]

    def dfs(path, direction, runs, seen, left):
        if runs > best[0]:
            best[0], best[1] = runs, list(path)
        if runs + left <= best[0]:  # each further move adds at most one run
            return
        for d, (dr, dc) in enumerate(_STEPS):
            nxt = (path[-1][0] + dr, path[-1][1] + dc)
            if 0 <= nxt[0] < n and 0 <= nxt[1] < n and nxt not in seen:
                seen.add(nxt)
                path.append(nxt)
                dfs(path, d, runs + (d != direction), seen, left - 1)
                path.pop()
                seen.discard(nxt)

    for start in [(r, c) for r in range(n) for c in range(r, n) if r <= n // 2 and c <= n - 1 - r]:
        dfs([start], -1, 0, {start}, n * n - 1)
    return best[0], best[1]


def test_vocab_has_pad_first_and_no_repeats():
    assert I.VOCAB[0] == "<pad>" and I.PAD == 0
    assert len(set(I.VOCAB)) == len(I.VOCAB)
    for word in (
        "find",
        "the",
        "object",
        "go",
        "straight",
        "turn",
        "right",
        "left",
        "around",
        "stop",
        "at",
        ",",
    ):
        assert word in I.VOCAB
    assert set(I.COLOURS) <= set(I.VOCAB)


def test_encode_decode_round_trip_and_padding():
    words = ("go", "straight", ",", "turn", "left", ",", "stop", "at", "the", "red", "object")
    ids = I.encode(words)
    assert ids.dtype == np.int64 and ids.shape == (I.MAX_WORDS,)
    assert (ids[len(words) :] == 0).all() and (ids[: len(words)] > 0).all()
    assert I.decode(ids) == words
    every = I.VOCAB[1:]
    assert I.decode(I.encode(every)) == every
    assert [I.VOCAB[i] for i in I.encode(every)[: len(every)]] == list(every)
    assert I.decode(I.encode([])) == ()
    assert I.decode(I.encode(list(words))) == words  # lists work as well as tuples


def test_max_words_is_the_exact_worst_case():
    runs, walk = _most_runs(5)
    assert runs == I.MAX_RUNS == 20
    # a start heading that differs from the first move forces a turn before every run: the cap is met
    first = (walk[1][0] - walk[0][0], walk[1][1] - walk[0][1])
    yaw = {(1, 0): 180.0, (0, 1): 270.0, (-1, 0): 0.0, (0, -1): 90.0}[first]
    words = ifn_words(tuple(walk), yaw, "yellow")
    assert len(words) == I.MAX_WORDS
    assert I.decode(I.encode(words)) == words


def test_bad_instructions_name_the_argument():
    with pytest.raises(ValueError, match="instruction"):
        I.encode(("find", "the", "purple", "object"))
    with pytest.raises(ValueError, match="instruction"):
        I.encode(("<pad>",))
    with pytest.raises(ValueError, match="instruction"):
        I.encode(("go",) * (I.MAX_WORDS + 1))
    with pytest.raises(TypeError, match="instruction"):
        I.encode("find the red object")
    with pytest.raises(TypeError, match="instruction"):
        I.encode(("find", 3))
    with pytest.raises(ValueError, match="ids"):
        I.decode(np.array([1, len(I.VOCAB)]))
    with pytest.raises(ValueError, match="ids"):
        I.decode(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="ids"):
        I.decode(np.array([-1]))
