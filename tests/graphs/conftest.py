"""Fixtures for the graph tests."""

from tests.support.stores import astore, index, store  # noqa: F401
