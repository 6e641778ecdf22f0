"""What VaultStore and AsyncVaultStore share: configuration, checks and the query cache."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, Result, TTLConfig, ensure_embeddings, tokenize_path
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from langmem_vault.db._connection import AsyncDatabase, Database, Direct, Transaction
from langmem_vault.db._migrations import DEFAULT_SCHEMA, check_schema
from langmem_vault.db._online import online_plan
from langmem_vault.db._steps import Embed, Steps
from langmem_vault.store._applied import OnlineState
from langmem_vault.store._lexemes import StatsCache
from langmem_vault.store._plans import batch_plan, refresh_plan, setup_plan
from langmem_vault.store._prepare import PreparedBatch, StoreSettings, check_vectors
from langmem_vault.store._ranking import SearchRanking
from langmem_vault.store._reembed import reembed_steps
from langmem_vault.store._replicas import ReadRouting, batch_steps, mark_written
from langmem_vault.store._validation import (
    DEFAULT_MAX_VALUE_BYTES,
    InvalidValueError,
    check_field,
    check_minutes,
)
from langmem_vault.telemetry._tracing import annotate, stage_span

DEFAULT_QUERY_CACHE_SIZE = 1024


def normalize_index(index: IndexConfig | dict[str, Any] | None) -> IndexConfig | None:
    """Check an IndexConfig; raises naming the bad field."""
    if index is None:
        return None
    if not isinstance(index, dict):
        raise InvalidValueError(f"index must be a dict (IndexConfig), got {type(index).__name__}")
    dims = index.get("dims")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise InvalidValueError(f"index['dims'] must be a positive int, got {dims!r}")
    if index.get("embed") is None:
        raise InvalidValueError("index['embed'] is required: Embeddings, a function or a string")
    fields = index.get("fields") or ["$"]
    if isinstance(fields, str) or not all(isinstance(f, str) and f for f in fields):
        raise InvalidValueError(f"index['fields'] must be a list of paths, got {fields!r}")
    for path in fields:
        check_field(path, "index['fields'] path")
        if path != "$":
            tokenize_path(path)
    distance = dict(index).get("distance_type", "cosine")
    if distance != "cosine":
        raise InvalidValueError(f"only cosine distance is supported, got {distance!r}")
    return IndexConfig(dims=dims, embed=index["embed"], fields=list(fields))


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def check_ttl(ttl: TTLConfig | None) -> TTLConfig | None:
    """Check a TTLConfig at construction, so a bad setting fails there and not on every put.

    >>> try:
    ...     check_ttl({"default_ttl": 0})
    ... except InvalidValueError as error:
    ...     print(error)
    ttl['default_ttl'] must be a number of minutes > 0 or None, got 0
    """
    if ttl is None:
        return None
    if not isinstance(ttl, dict):
        raise InvalidValueError(f"ttl must be a dict (TTLConfig), got {type(ttl).__name__}")
    for name in ("default_ttl", "sweep_interval_minutes"):
        value = ttl.get(name)
        if value is not None and not _positive(value):
            raise InvalidValueError(
                f"ttl[{name!r}] must be a number of minutes > 0 or None, got {value!r}"
            )
        if value is not None:
            check_minutes(value, f"ttl[{name!r}]")  # finite, and not past Postgres' dates
    refresh = ttl.get("refresh_on_read", True)
    if not isinstance(refresh, bool):
        raise InvalidValueError(f"ttl['refresh_on_read'] must be a bool, got {refresh!r}")
    return ttl


class VaultStoreBase:
    """Configuration and helpers shared by the sync and async stores."""

    supports_ttl: bool = True
    #: ``batch`` runs MirrorSearchOp (store/_mirrors.py)
    supports_mirror_search: bool = True
    #: ``batch`` runs LinkOp and ExpandOp (store/_entities.py)
    supports_entity_links: bool = True
    #: ``batch`` runs PageOp (store/_pages.py)
    supports_pages: bool = True
    _db: Any  # Database in VaultStore, AsyncDatabase in AsyncVaultStore
    _routing: ReadRouting | None

    def __init__(
        self,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        schema: str = DEFAULT_SCHEMA,
        ranking: SearchRanking | None = None,
        max_value_bytes: int | None = None,
        query_cache_size: int = DEFAULT_QUERY_CACHE_SIZE,
    ) -> None:
        self.index_config = normalize_index(index)
        self.embeddings: Embeddings | None = (
            ensure_embeddings(self.index_config["embed"]) if self.index_config else None
        )
        self.ttl_config = check_ttl(ttl)
        if max_value_bytes is None:
            max_value_bytes = DEFAULT_MAX_VALUE_BYTES
        if not _positive(max_value_bytes) or not isinstance(max_value_bytes, int):
            raise InvalidValueError(f"max_value_bytes must be an int >= 1, got {max_value_bytes!r}")
        if not isinstance(query_cache_size, int) or query_cache_size < 0:
            raise InvalidValueError(
                f"query_cache_size must be an int >= 0, got {query_cache_size!r}"
            )
        self.settings = StoreSettings(
            schema=check_schema(schema),
            index=self.index_config,
            ranking=ranking or SearchRanking(),
            max_value_bytes=max_value_bytes,
        )
        self._stats = StatsCache()  # keyword weights, refreshed at most once a minute
        self._online = OnlineState()
        # the pools from_conn_string opened: warmed as they open and after setup() (_warm.py)
        self._own_pools: tuple[Any, ...] = ()
        self._query_cache: OrderedDict[str, list[float]] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._cache_lock = threading.Lock()

    @property
    def schema(self) -> str:
        return self.settings.schema

    @property
    def concurrent_batches(self) -> bool:
        """Whether two batches can run at the same time: on a pool each takes a connection;
        on one connection they would queue (inject overlaps its reads on a pool)."""
        return isinstance(self._db.conn, ConnectionPool | AsyncConnectionPool)

    @property
    def _vectors(self) -> bool:
        """Whether the store has a store_vectors table."""
        return self.index_config is not None

    def _docs_to_embed(self, batch: PreparedBatch) -> list[str]:
        return batch.doc_texts if self.embeddings is not None else []

    def _setup(self, partitions: int) -> Steps[None]:
        """``setup``: the migrations in one transaction; on a pool, the online ones after it,
        outside it (db/_online.py: a large table's fill and index without long locks)."""
        pooled = isinstance(self._db.conn, ConnectionPool | AsyncConnectionPool)
        yield Transaction(self._db, setup_plan(self.settings, partitions, online=not pooled))
        self._stats.routes.forget()  # the tables may be partitioned now (store/_routes.py)
        if pooled:
            online = lambda: online_plan(self.schema, "store", concurrently=True)  # noqa: E731
            yield Direct(self._db, online, session=True)
        return None

    def _reembedding(
        self, db: Database | AsyncDatabase, namespace_prefix: tuple[str, ...], page: int
    ) -> Steps[int]:
        """The steps of ``reembed`` on the store's ``db`` (see
        :mod:`langmem_vault.store._reembed`)."""
        if self.embeddings is None or self.index_config is None:
            raise ValueError("reembed needs a store with an index: VaultStore(..., index={...})")
        dims = self.index_config["dims"]
        return reembed_steps(
            db,
            self.embeddings,
            dims,
            self.schema,
            namespace_prefix,
            page=page,
            tenants=self.settings.tenants,
        )

    def _batch(self, prepared: PreparedBatch) -> Steps[list[Result]]:
        """``batch``: embed the documents and the queries not in the cache, then run the
        batch's statements (the sync and the async store drive these same steps)."""
        docs: dict[str, list[float]] = {}
        queries: dict[str, list[float]] = {}
        if self.embeddings is not None:
            if texts := self._docs_to_embed(prepared):
                docs = self._check_docs(texts, (yield Embed(self.embeddings, texts)))
            queries, missing = self._cached_queries(prepared.queries)
            if missing:
                vectors = yield Embed(self.embeddings, missing, queries=True)
                self._remember_queries(missing, vectors, queries)
        return (yield from self._batch_steps(prepared, docs, queries))

    def _batch_steps(
        self, prepared: PreparedBatch, docs: dict[str, list[float]], queries: dict[str, list[float]]
    ) -> Steps[list[Result]]:
        """A batch on the primary, or (read-only, with a replica) on the replica."""

        def make(deferred: list[Any] | None) -> Any:
            return batch_plan(
                prepared, self.settings, docs, queries, self._stats, deferred, self._online
            )

        return batch_steps(
            self._db,
            self._routing,
            prepared.read_only,
            make,
            lambda keys: refresh_plan(keys, self.settings),
        )

    def _written(self) -> Steps[None]:
        """After a write outside ``batch``: reads wait for the replica to replay it."""
        return mark_written(self._db, self._routing)

    def _check_docs(self, texts: list[str], vectors: Sequence[Sequence[float]]) -> dict[str, Any]:
        assert self.index_config is not None
        check_vectors(vectors, len(texts), self.index_config["dims"], "embeddings")
        return dict(zip(texts, (list(v) for v in vectors), strict=True))

    def _cached_queries(self, queries: list[str]) -> tuple[dict[str, list[float]], list[str]]:
        """Query vectors already in the LRU cache, and the queries still to embed."""
        found: dict[str, list[float]] = {}
        with self._cache_lock:
            for query in queries:
                if query in self._query_cache:
                    self._query_cache.move_to_end(query)
                    found[query] = self._query_cache[query]
        if queries:
            annotate(cache_hits=len(found), embedded=len(queries) - len(found))
        return found, [q for q in queries if q not in found]

    @staticmethod
    def _search_span(prepared: PreparedBatch) -> AbstractContextManager[Any]:
        """A ``langmem_vault.search`` span around a batch that searches by query."""
        return (
            stage_span("search", queries=len(prepared.queries))
            if prepared.queries
            else nullcontext()
        )

    def cached_query_vector(self, query: str) -> list[float] | None:
        """The vector of a query this store embedded recently (its LRU cache), else None.

        Lets a caller rank extra items against the query a search just ran without embedding
        it a second time (inject ranks the owner's private facts this way).
        """
        with self._cache_lock:
            found = self._query_cache.get(query)
            return list(found) if found is not None else None

    def _remember_queries(
        self, queries: list[str], vectors: Sequence[Sequence[float]], into: dict[str, list[float]]
    ) -> dict[str, list[float]]:
        assert self.index_config is not None
        check_vectors(vectors, len(queries), self.index_config["dims"], "query embeddings")
        with self._cache_lock:
            for query, vector in zip(queries, vectors, strict=True):
                into[query] = list(vector)
                self._query_cache[query] = into[query]
                self._query_cache.move_to_end(query)
            while len(self._query_cache) > self._query_cache_size:
                self._query_cache.popitem(last=False)
        return into

    def _sweep_interval(self, minutes: float | None) -> float:
        if minutes is None:
            minutes = (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if not _positive(minutes):
            raise InvalidValueError(f"sweep_interval_minutes must be > 0, got {minutes!r}")
        return float(minutes) * 60
