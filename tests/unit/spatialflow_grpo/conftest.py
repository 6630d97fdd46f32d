"""Shared fixtures of the chapter's tests."""

import pytest

from neurips26.spatialflow_grpo import prepare
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse)


@pytest.fixture(scope="session")
def sfg_smoke_cache(tmp_path_factory):
    """A cache folder with the smoke-scale base editor and RL adapters (trained once per session, ~25 s) and
    what :func:`~neurips26.spatialflow_grpo.prepare.prepare` wrote; point ``NEURIPS26_CACHE_DIR`` at it."""
    folder = tmp_path_factory.mktemp("sfg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = prepare.prepare("smoke", progress=False)
    return folder, written
