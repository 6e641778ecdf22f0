"""Fixtures for the memory tests (shared with tests/nodes and tests/graphs)."""

from tests.support.stores import astore, index, store  # noqa: F401
