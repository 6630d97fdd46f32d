"""Shared fixtures of the chapter's tests."""

from tests.unit.one_thread import one_thread  # noqa: F401  (autouse)
