"""The one canonical form of a configuration, in its two spellings (result-cache keys, checkpoint hashes).

The expected strings are fixed: they are what the cache and the committed checkpoints were keyed by before
the two canonicalisers were merged, so a change here would recompute every cached result or make every
committed checkpoint stale."""

import json
from dataclasses import dataclass

import numpy as np
import pytest

from neurips26.cache import cache_key
from neurips26.canonical import canonical
from neurips26.checkpoint_files import config_hash


@dataclass(frozen=True)
class Inner:
    width: int = 4
    rate: float = 0.5


@dataclass(frozen=True)
class Outer:
    inner: Inner = Inner()
    sizes: tuple = (16, 32)
    flag: bool = False
    note: str | None = None


VALUE = {"b": [1, 2.5, (None, True)], "a": Outer(), 3: "x"}
TAIL = ',"flag":false,"inner":{"__class__":"INNER","rate":"0.5","width":4},"note":null,"sizes":[16,32]},'


def _compact(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_checkpoint_form_names_classes_by_qualified_name_only():
    tail = TAIL.replace("INNER", "Inner")
    expected = '{"3":"x","a":{"__class__":"Outer"' + tail + '"b":[1,"2.5",[null,true]]}'
    assert _compact(canonical(VALUE)) == expected


def test_cache_form_names_classes_by_module_and_qualified_name():
    module = Outer.__module__
    tail = TAIL.replace("INNER", f"{module}.Inner")
    expected = f'{{"3":"x","a":{{"__class__":"{module}.Outer"' + tail + '"b":[1,"2.5",[null,true]]}'
    assert _compact(canonical(VALUE, module_names=True)) == expected


def test_the_hashes_use_their_form():
    assert config_hash(VALUE) == config_hash({"a": Outer(), 3: "x", "b": [1, 2.5, [None, True]]})
    assert cache_key("n", VALUE) == cache_key("n", {"a": Outer(), 3: "x", "b": [1, 2.5, [None, True]]})
    # a fixed value of the checkpoint form (chapter 05's committed hashes depend on it)
    assert config_hash({"x": 1, "y": [1.5, "a", None, True]}) == "3b6a5f6e8947e0ca"


def test_floats_are_exact_and_numpy_scalars_are_plain_values():
    assert canonical(1e-3) != canonical(1e-3 + 1e-12)
    assert canonical(0.1) == "0.1" and canonical(-0.0) == "-0.0"
    assert canonical([np.int64(3), np.bool_(True)]) == [3, True]
    assert canonical(np.float32(0.5)) == "0.5"
    assert canonical(True) is True and canonical(None) is None


@pytest.mark.parametrize("bad", [object(), {1, 2}, Outer, np.zeros(2)])
def test_anything_else_is_a_type_error_naming_config(bad):
    with pytest.raises(TypeError, match="config"):
        canonical({"x": bad})
