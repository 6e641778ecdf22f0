"""Fixtures for the integration tests."""

from tests.support.stores import astore, index, store  # noqa: F401
