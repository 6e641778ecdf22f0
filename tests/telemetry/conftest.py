"""Fixtures for the telemetry tests: the stores (InMemoryStore and VaultStore), and one
OpenTelemetry SDK provider for the session whose in-memory exporter each test reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support.stores import astore, index, store  # noqa: F401

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="session")
def _provider() -> TracerProvider:
    # The global provider can be set once per process: the session shares it.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    return provider


@pytest.fixture
def spans(_provider: TracerProvider) -> Iterator[InMemorySpanExporter]:
    """The exporter, emptied before the test."""
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()
