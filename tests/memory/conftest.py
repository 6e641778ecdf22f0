"""Fixtures for the memory tests (shared with tests/nodes and tests/graphs)."""

from memory.lmv_fixtures import astore, index, store  # noqa: F401
