"""neurips26.background: a call in a spawned process gives the in-process value and its errors."""

from __future__ import annotations

import math

import pytest

from neurips26.background import BackgroundRun


def test_a_background_call_returns_the_value_and_its_seconds():
    run = BackgroundRun(math.comb, 10, 3)
    assert run.result(timeout=120) == 120 and run.done()
    assert run.seconds is not None and run.seconds >= 0.0


def test_the_child_runs_on_the_requested_torch_threads():
    import torch

    run = BackgroundRun(torch.get_num_threads, threads=1)
    assert run.result(timeout=120) == 1


def test_an_error_in_the_child_is_raised_by_result():
    run = BackgroundRun(math.sqrt, -1.0)
    with pytest.raises(ValueError, match="math domain error"):
        run.result(timeout=120)


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="fn"):
        BackgroundRun(3)
    with pytest.raises(ValueError, match="threads"):
        BackgroundRun(math.comb, 4, 2, threads=0)
