"""Fixtures for the graph tests."""

from memory.lmv_fixtures import astore, index, store  # noqa: F401
