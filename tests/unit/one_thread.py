"""An autouse fixture for chapters whose tests run small batches: one torch thread per test.

A chapter opts in from its ``conftest.py`` with ``from tests.unit.one_thread import one_thread``."""

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    """Small batches run fastest on one torch thread; the previous count is restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
