"""Shared fixtures of the chapter's tests."""

import pytest

from neurips26.jag import prepare
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse)


@pytest.fixture(scope="session")
def jag_smoke_cache(tmp_path_factory):
    """A cache folder holding the eight smoke-scale models (trained once per session, ~15 s) and what
    :func:`~neurips26.jag.prepare.prepare` wrote; point ``NEURIPS26_CACHE_DIR`` at it to use them."""
    folder = tmp_path_factory.mktemp("jag-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = prepare.prepare("smoke", progress=False)
    return folder, written
