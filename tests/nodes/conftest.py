"""Fixtures for the node tests: each runs on InMemoryStore and on VaultStore."""

from tests.support.stores import astore, index, store  # noqa: F401
