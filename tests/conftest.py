"""Every test leaves the process environment as it found it.

Code under test may set environment variables itself (``prepare_main(["--trial"])`` sets
``NEURIPS26_TRIAL=1`` for the chapter's plan to read, ``seed_everything`` sets ``PYTHONHASHSEED``).
Under pytest-xdist the next test on the same worker would inherit them: a leaked trial flag turns every
later default plan into a one-update trial plan and every committed checkpoint "stale".
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _restore_environment():
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)
