"""Counter increments written off the chat path, in batches.

Token and latency accounting adds a few increments per stage of every turn. Writing each
stage's inline would add a store round trip to the turn; writing each in the background
still costs a round trip per stage. :class:`CounterBuffer` instead holds the increments of
each store until its writer (a thread on a timer for sync callers, a task for async ones)
takes all that arrived meanwhile and applies them in one write
(:func:`~langmem_vault.memory._recall.usage.record_usage`: one upsert on VaultStore). Under
load, many turns share a write; an idle process writes each turn's within a quarter of a
second (:mod:`~langmem_vault.memory._recall.background_writes`).

A failed write is dropped with one warning line, never raised: bookkeeping must not fail a
turn. Closing the store writes what it holds first. ``flush``/``aflush`` write what was
added so far (tests, shutdown).

>>> from langgraph.store.memory import InMemoryStore
>>> store, buffer = InMemoryStore(), CounterBuffer()
>>> buffer.add(store, [(("counts",), "k", {"n": 1})])
>>> buffer.add(store, [(("counts",), "k", {"n": 2})])
>>> buffer.flush()
>>> store.get(("counts",), "k").value
{'n': 3}
"""

from __future__ import annotations

from langmem_vault.memory._recall.background_writes import BackgroundWrites

__all__ = ["CounterBuffer"]


class CounterBuffer(BackgroundWrites):
    """Increments per store, applied in batches by one background writer."""

    def __init__(self) -> None:
        super().__init__("token and latency accounting", "langmem-vault-metrics")
