"""Fixtures for the job tests: the shared store fixtures (InMemoryStore and VaultStore)."""

from tests.support.stores import astore, index, store  # noqa: F401
