"""Shared fixtures of the chapter's tests."""
