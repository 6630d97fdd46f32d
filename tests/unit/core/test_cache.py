from dataclasses import dataclass

import numpy as np
import pytest

from neurips26 import cache


@dataclass(frozen=True)
class Cfg:
    n: int
    eta: float


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(cache.NO_CACHE_ENV, raising=False)
    return tmp_path


def _counter():
    calls = []

    def compute():
        calls.append(1)
        return {"value": np.arange(5.0), "n": len(calls)}

    return calls, compute


def test_second_call_loads_without_recomputing():
    calls, compute = _counter()
    a = cache.cached("exp", Cfg(3, 0.5), compute, verbose=False)
    b = cache.cached("exp", Cfg(3, 0.5), compute, verbose=False)
    assert len(calls) == 1
    np.testing.assert_array_equal(a["value"], b["value"])


def test_different_config_recomputes():
    calls, compute = _counter()
    cache.cached("exp", Cfg(3, 0.5), compute, verbose=False)
    cache.cached("exp", Cfg(3, 0.25), compute, verbose=False)
    assert len(calls) == 2


def test_key_depends_on_version_and_source(monkeypatch):
    k1 = cache.cache_key("exp", Cfg(1, 1.0))
    monkeypatch.setattr(cache.neurips26, "__version__", "999")
    assert cache.cache_key("exp", Cfg(1, 1.0)) != k1
    assert cache.cache_key("exp", Cfg(1, 1.0), package="neurips26") != cache.cache_key("exp", Cfg(1, 1.0))


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_corrupt_file_is_detected_and_recomputed(tmp_cache, damage):
    calls, compute = _counter()
    cache.cached("exp", Cfg(2, 0.1), compute, verbose=False)
    (path,) = tmp_cache.glob("exp-*.pkl")
    blob = bytearray(path.read_bytes())
    if damage == "flip":
        blob[-3] ^= 0xFF
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    else:
        blob = bytearray(b"not a cache file")
    path.write_bytes(bytes(blob))
    with pytest.warns(cache.CorruptCacheWarning):
        out = cache.cached("exp", Cfg(2, 0.1), compute, verbose=False)
    assert len(calls) == 2 and out["n"] == 2
    # the recomputed entry is valid again
    assert cache.cached("exp", Cfg(2, 0.1), compute, verbose=False)["n"] == 2


def test_disabled_cache_always_computes(monkeypatch, tmp_cache):
    monkeypatch.setenv(cache.NO_CACHE_ENV, "1")
    calls, compute = _counter()
    cache.cached("exp", Cfg(1, 1.0), compute, verbose=False)
    cache.cached("exp", Cfg(1, 1.0), compute, verbose=False)
    assert len(calls) == 2 and not list(tmp_cache.glob("*.pkl"))


def test_clear_removes_entries(tmp_cache):
    _, compute = _counter()
    cache.cached("a", Cfg(1, 1.0), compute, verbose=False)
    cache.cached("b", Cfg(1, 1.0), compute, verbose=False)
    assert cache.clear("a") == 1
    assert cache.clear() == 1


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="name"):
        cache.cached("a/b", Cfg(1, 1.0), lambda: 1)
    with pytest.raises(TypeError, match="compute"):
        cache.cached("a", Cfg(1, 1.0), 3)
    with pytest.raises(TypeError, match="config"):
        cache.cache_key("a", object())


def test_threads_computing_the_same_entry_do_not_collide(tmp_cache):
    import threading
    import time

    barrier = threading.Barrier(4)

    def compute():
        barrier.wait()  # every thread computes before any writes: their writes race
        time.sleep(0.01)
        return list(range(1000))

    errors = []

    def one():
        try:
            assert cache.cached("race", Cfg(1, 0.0), compute, verbose=False) == list(range(1000))
        except Exception as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [p.name for p in tmp_cache.iterdir()] == [next(tmp_cache.glob("race-*.pkl")).name]  # no leftovers


def test_only_rank_0_of_a_torchrun_group_stores_results(tmp_cache, monkeypatch):
    calls, compute = _counter()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert cache.cached("exp", Cfg(1, 0.1), compute, verbose=False)["n"] == 1  # rank 1 computes
    assert not list(tmp_cache.rglob("*.pkl"))  # and writes nothing
    monkeypatch.setenv("RANK", "0")
    cache.cached("exp", Cfg(1, 0.1), compute, verbose=False)
    assert calls == [1, 1] and len(list(tmp_cache.rglob("*.pkl"))) == 1
