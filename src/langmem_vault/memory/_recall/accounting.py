"""Tokens, cost and latency of memory, per user, per day and per operation, kept in the store.

Each memory stage of a turn (inject, extract, reconcile, compact) and each background job
(extraction, consolidation) runs inside :func:`observe`: a span
(:mod:`langmem_vault.telemetry._tracing`), a ledger of its model calls' tokens
(:mod:`langmem_vault.telemetry._metering`) and a timer. When it ends, its tokens and its
duration become counter increments, batched off the turn (:class:`CounterBuffer`), in
records of their own at ``accounting_namespace(user_id)``::

    ("langmem_vault", "accounting", "u1"), "2026-11-27|tokens|extract|gpt-4o-mini"
    {"input_tokens": 5120, "output_tokens": 830, "calls": 12}
    ("langmem_vault", "accounting", "u1"), "2026-11-27|latency|inject"
    {"count": 40, "sum_ms": 612.5, "b14": 31, "b15": 9}

Latency is a histogram (bucket ``bN`` counts durations up to ``LATENCY_BOUNDS_MS[N]``, about
25% apart), so processes add to it without coordination and p50/p95 are read back to within
a bucket. Erasing a user takes their records (``privacy.subject_rights.erase``).

A price table (model name -> :class:`ModelPrice`, US dollars per million tokens) turns
tokens into cost where the app gives one; a model missing from it shows tokens only.

>>> from langgraph.store.memory import InMemoryStore
>>> from langmem_vault.db._steps import run_steps
>>> from langmem_vault.telemetry import _metering as metering
>>> store, buffer = InMemoryStore(), CounterBuffer()
>>> with observe("extract", store, "u1", buffer=buffer):
...     metering._ledger.get().add("extract", "gpt-4o-mini", 1000, 200)
>>> buffer.flush()
>>> report = run_steps(accounting_plan("u1", days=1), store)
>>> day = report.tokens[0]
>>> day.operation, day.input_tokens, day.output_tokens, day.calls
('extract', 1000, 200, 1)
>>> with_cost(report, {"gpt-4o-mini": (0.15, 0.60)}).cost
0.00027
"""

from __future__ import annotations

import bisect
import logging
import os
import time
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from datetime import date, timedelta
from typing import Any

from langgraph.store.base import BaseStore
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langmem_vault.db._store_plans import StorePlan
from langmem_vault.memory._models import utcnow
from langmem_vault.memory._namespaces import encode_label
from langmem_vault.memory._recall.counter_buffer import CounterBuffer
from langmem_vault.memory._recall.retrieval import scan_plan
from langmem_vault.telemetry._metering import Ledger, collecting
from langmem_vault.telemetry._runs import report_stage
from langmem_vault.telemetry._tracing import Span, stage_span

__all__ = [
    "ACCOUNTING_ROOT",
    "LATENCY_BOUNDS_MS",
    "METRICS",
    "PRICES_ENV",
    "Accounting",
    "CounterBuffer",
    "ModelPrice",
    "PriceTable",
    "TokenDay",
    "accounting_namespace",
    "accounting_plan",
    "aobserve",
    "default_prices",
    "load_prices",
    "observe",
    "with_cost",
]

logger = logging.getLogger("langmem_vault.accounting")

ACCOUNTING_ROOT = ("langmem_vault", "accounting")
#: upper bounds (ms) of the latency buckets: 0.1 ms to about a minute, each 25% above the last
LATENCY_BOUNDS_MS: tuple[float, ...] = tuple(round(0.1 * 1.25**i, 4) for i in range(60))
#: the process's buffer of accounting writes (``METRICS.flush()`` waits for them)
METRICS = CounterBuffer()
_SEP = "|"
#: a TOML price table the service reads when it is given none (see :func:`load_prices`)
PRICES_ENV = "LANGMEM_VAULT_PRICES"


def accounting_namespace(user_id: str) -> tuple[str, ...]:
    """Where ``user_id``'s token and latency records live.

    >>> accounting_namespace("ana.g@example.com")
    ('langmem_vault', 'accounting', 'ana%2Eg@example%2Ecom')
    """
    return (*ACCOUNTING_ROOT, encode_label(user_id))


def _increments(
    user_id: str, stage: str, ledger: Ledger, seconds: float, day: date
) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    ns = accounting_namespace(user_id)
    out: list[tuple[tuple[str, ...], str, dict[str, Any]]] = []
    for (operation, model), (tokens_in, tokens_out, calls) in ledger.entries.items():
        key = _SEP.join((day.isoformat(), "tokens", operation, model))
        out.append(
            (ns, key, {"input_tokens": tokens_in, "output_tokens": tokens_out, "calls": calls})
        )
    ms = seconds * 1000.0
    bucket = bisect.bisect_left(LATENCY_BOUNDS_MS, ms)
    key = _SEP.join((day.isoformat(), "latency", stage))
    out.append((ns, key, {"count": 1, "sum_ms": round(ms, 3), f"b{bucket:02d}": 1}))
    return out


@contextmanager
def _measured(stage: str, user_id: str | None) -> Iterator[tuple[Span, Ledger, list[float]]]:
    start = time.perf_counter()
    elapsed: list[float] = []
    with stage_span(stage, user_id=user_id) as span, collecting() as ledger:
        try:
            yield span, ledger, elapsed
        finally:
            elapsed.append(time.perf_counter() - start)
    try:
        report_stage(stage, span.counts, elapsed[0] * 1000.0)
    except Exception:  # a callback handler's failure must not fail the turn
        logger.warning("could not report memory %s to the run's callbacks", stage, exc_info=True)


def _settle(
    stage: str, user_id: str | None, ledger: Ledger, elapsed: list[float]
) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    if user_id is None or not elapsed:
        return []
    try:
        return _increments(user_id, stage, ledger, elapsed[0], utcnow().date())
    except Exception:  # bookkeeping must never fail a turn
        logger.warning("could not account memory %s", stage, exc_info=True)
        return []


@contextmanager
def observe(
    stage: str, store: BaseStore | None, user_id: str | None, *, buffer: CounterBuffer = METRICS
) -> Iterator[Span]:
    """Trace, time and account one memory stage of ``user_id`` (sync callers). Without a
    store or a user id (a run that cannot have memory) only the span is kept."""
    with _measured(stage, user_id) as (span, ledger, elapsed):
        yield span
    if store is not None:
        buffer.add(store, _settle(stage, user_id, ledger, elapsed))


@asynccontextmanager
async def aobserve(
    stage: str, store: BaseStore | None, user_id: str | None, *, buffer: CounterBuffer = METRICS
) -> Any:
    """Async :func:`observe` (the write is a task on the running loop)."""
    with _measured(stage, user_id) as (span, ledger, elapsed):
        yield span
    if store is not None:
        await buffer.aadd(store, _settle(stage, user_id, ledger, elapsed))


# -- reading: tokens per day and operation, latency percentiles, cost ------------------------


class ModelPrice(BaseModel):
    """US dollars per million input and output tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


#: model name -> price (a ModelPrice or an ``(input, output)`` pair)
PriceTable = Mapping[str, "ModelPrice | tuple[float, float]"]


class TokenDay(BaseModel):
    """The tokens one operation's calls to one model used on one day (UTC)."""

    day: date
    operation: str
    model: str
    input_tokens: int
    output_tokens: int
    calls: int
    #: US dollars, when the price table has the model
    cost: float | None = None


class Accounting(BaseModel):
    """Tokens per day and operation, their cost where priced, and stage latency."""

    tokens: list[TokenDay]
    #: the priced rows' total (None: no row is priced)
    cost: float | None = None
    #: ``{stage: {"count", "p50", "p95"}}`` in milliseconds, from the stages' histograms
    latency_ms: dict[str, dict[str, float | int | None]] = {}


def _percentile(buckets: Mapping[int, int], count: int, share: float) -> float:
    rank = max(1, round(share * count))
    seen = 0
    for index in sorted(buckets):
        seen += buckets[index]
        if seen >= rank:
            return LATENCY_BOUNDS_MS[min(index, len(LATENCY_BOUNDS_MS) - 1)]
    return LATENCY_BOUNDS_MS[-1]


def accounting_plan(user_id: str | None, *, days: int = 30) -> StorePlan[Accounting]:
    """The last ``days`` days of ``user_id``'s accounting (None: every user's, summed)."""
    first = (utcnow() - timedelta(days=days - 1)).date().isoformat()
    prefix = ACCOUNTING_ROOT if user_id is None else accounting_namespace(user_id)
    items = yield from scan_plan(prefix)
    tokens: dict[tuple[str, str, str], list[int]] = {}
    latency: dict[str, tuple[dict[int, int], list[int]]] = {}
    for item in items:
        parts = item.key.split(_SEP, 3)
        if len(parts) < 3 or parts[0] < first:
            continue
        value = item.value
        if parts[1] == "tokens" and len(parts) == 4:
            row = tokens.setdefault((parts[0], parts[2], parts[3]), [0, 0, 0])
            for i, name in enumerate(("input_tokens", "output_tokens", "calls")):
                row[i] += int(value.get(name, 0))
        elif parts[1] == "latency":
            buckets, count = latency.setdefault(parts[2], ({}, [0]))
            count[0] += int(value.get("count", 0))
            for name, amount in value.items():
                if name.startswith("b") and name[1:].isdigit():
                    buckets[int(name[1:])] = buckets.get(int(name[1:]), 0) + int(amount)
    rows = [
        TokenDay(
            day=date.fromisoformat(day),
            operation=op,
            model=model,
            input_tokens=n[0],
            output_tokens=n[1],
            calls=n[2],
        )
        for (day, op, model), n in sorted(tokens.items())
    ]
    summary: dict[str, dict[str, float | int | None]] = {
        stage: {
            "count": count[0],
            "p50": _percentile(buckets, count[0], 0.5),
            "p95": _percentile(buckets, count[0], 0.95),
        }
        for stage, (buckets, count) in sorted(latency.items())
        if count[0]
    }
    return Accounting(tokens=rows, latency_ms=summary)


def load_prices(path: str | os.PathLike[str]) -> dict[str, ModelPrice]:
    """A price table from a TOML file: one table per model, US dollars per million tokens::

    ["gpt-4o-mini"]
    input = 0.15
    output = 0.60
    """
    with open(path, "rb") as file:
        raw = tomllib.load(file)
    table: dict[str, ModelPrice] = {}
    for model, entry in raw.items():
        try:
            table[model] = ModelPrice.model_validate(entry)
        except ValidationError as exc:
            raise ValueError(f"prices[{model!r}] in {path}: {exc.errors()[0]['msg']}") from None
    return table


def default_prices() -> dict[str, ModelPrice]:
    """The price table named by ``$LANGMEM_VAULT_PRICES`` (a TOML file), else none."""
    path = os.environ.get(PRICES_ENV)
    return load_prices(path) if path else {}


def _price(entry: ModelPrice | tuple[float, float]) -> ModelPrice:
    if isinstance(entry, ModelPrice):
        return entry
    tokens_in, tokens_out = entry
    return ModelPrice(input=tokens_in, output=tokens_out)


def with_cost(report: Accounting, prices: PriceTable | None) -> Accounting:
    """``report`` with the cost of each priced row and their total."""
    if not prices:
        return report
    table = {name: _price(entry) for name, entry in prices.items()}
    rows: list[TokenDay] = []
    total: float | None = None
    for row in report.tokens:
        price = table.get(row.model)
        if price is None:
            rows.append(row)
            continue
        cost = (row.input_tokens * price.input + row.output_tokens * price.output) / 1e6
        rows.append(row.model_copy(update={"cost": round(cost, 6)}))
        total = (total or 0.0) + cost
    return report.model_copy(
        update={"tokens": rows, "cost": None if total is None else round(total, 6)}
    )
