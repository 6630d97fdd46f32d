"""map_in_processes: the same list as a loop, in order, from spawned processes or from this one."""

import math

import pytest

from neurips26.process_pool import map_in_processes


def test_processes_give_the_loops_list_in_order():
    items = list(range(37))
    loop = [math.factorial(i) for i in items]
    assert map_in_processes(math.factorial, items, workers=2) == loop
    assert map_in_processes(math.factorial, items, workers=2, chunksize=5) == loop


def test_one_worker_or_one_item_computes_here():
    seen = []  # a closure cannot be pickled: these must not leave this process
    assert map_in_processes(lambda x: seen.append(x) or 2 * x, range(4), workers=1) == [0, 2, 4, 6]
    assert map_in_processes(lambda x: seen.append(x) or 2 * x, [5], workers=0) == [10]
    assert seen == [0, 1, 2, 3, 5]
    assert map_in_processes(math.factorial, [], workers=2) == []


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="fn"):
        map_in_processes(3, [1, 2], workers=2)
    with pytest.raises(ValueError, match="workers"):
        map_in_processes(math.factorial, [1, 2], workers=-1)
    with pytest.raises(ValueError, match="chunksize"):
        map_in_processes(math.factorial, [1, 2], workers=2, chunksize=0)
