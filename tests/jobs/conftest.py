"""Fixtures for the job tests: the shared store fixtures (InMemoryStore and VaultStore), and a
VaultStore with a job queue on one pool (sync and async) for the worker and dead-letter tests."""

from tests.support.jobs import aenv, env  # noqa: F401
from tests.support.stores import astore, index, store  # noqa: F401
