"""Fixtures for the offline stand-in tests."""

from tests.support.stores import index  # noqa: F401
