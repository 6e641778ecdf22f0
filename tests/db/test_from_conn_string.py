"""Every Postgres class opens its pool the same way: one signature, one meaning, one helper."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any, Unpack

import pytest
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore

from langmem_vault import AsyncVaultSaver, AsyncVaultStore, VaultSaver, VaultStore
from langmem_vault.db._embedded import resolve_dsn
from langmem_vault.db._migrations import DEFAULT_SCHEMA
from langmem_vault.db._pools import PoolOptions
from langmem_vault.jobs import AsyncJobQueue, JobQueue
from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditEvent, AuditLog

SYNC = [VaultStore, VaultSaver, JobQueue, AuditLog]
ASYNC = [AsyncVaultStore, AsyncVaultSaver, AsyncJobQueue, AsyncAuditLog]
CONFIG = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


def _work(obj: Any) -> None:
    """Run one statement of each class more often than psycopg's default threshold of 5."""
    for i in range(7):
        if isinstance(obj, VaultStore):
            obj.put(("p",), f"k{i}", {"v": i})
            assert obj.get(("p",), f"k{i}") is not None
        elif isinstance(obj, VaultSaver):
            assert obj.get_tuple(CONFIG) is None  # type: ignore[arg-type]
        elif isinstance(obj, JobQueue):
            assert sum(obj.counts().values()) == 0
        else:
            obj.record(AuditEvent("u1", "cite", "test"))


async def _awork(obj: Any) -> None:
    for i in range(7):
        if isinstance(obj, AsyncVaultStore):
            await obj.aput(("p",), f"k{i}", {"v": i})
            assert await obj.aget(("p",), f"k{i}") is not None
        elif isinstance(obj, AsyncVaultSaver):
            assert await obj.aget_tuple(CONFIG) is None  # type: ignore[arg-type]
        elif isinstance(obj, AsyncJobQueue):
            assert sum((await obj.counts()).values()) == 0
        else:
            await obj.record(AuditEvent("u1", "cite", "test"))


def _prepared(pool: Any) -> int:
    with pool.connection() as conn:
        (count,) = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
    return int(count)


async def _aprepared(pool: Any) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) FROM pg_prepared_statements")
        (count,) = await cur.fetchone()
    return int(count)


# One connection (pool_size=1), so the count below sees every statement the object ran.
@pytest.mark.parametrize("cls", SYNC, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("threshold", "prepared"), [(None, False), (5, True), (0, True)])
def test_prepare_threshold_reaches_every_class(
    pg_uri: str, schema: str, cls: Any, threshold: int | None, prepared: bool
) -> None:
    with cls.from_conn_string(
        pg_uri, pool_size=1, prepare_threshold=threshold, schema=schema
    ) as obj:
        obj.setup()
        _work(obj)
        assert (_prepared(obj.conn) > 0) is prepared


@pytest.mark.parametrize("cls", ASYNC, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("threshold", "prepared"), [(None, False), (5, True)])
async def test_prepare_threshold_reaches_every_async_class(
    pg_uri: str, schema: str, cls: Any, threshold: int | None, prepared: bool
) -> None:
    async with cls.from_conn_string(
        pg_uri, pool_size=1, prepare_threshold=threshold, schema=schema
    ) as obj:
        await obj.setup()
        await _awork(obj)
        assert (await _aprepared(obj.conn) > 0) is prepared


def _keywords(cls: Any) -> set[str]:
    """Every keyword ``cls.from_conn_string`` accepts, its ``**pool_options`` included."""
    params = inspect.signature(cls.from_conn_string).parameters
    named = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    return named | set(PoolOptions.__annotations__)


def test_every_class_has_the_same_from_conn_string() -> None:
    for cls in SYNC + ASYNC:
        params = inspect.signature(cls.from_conn_string).parameters
        assert next(iter(params)) == "conn_string", cls.__name__
        assert params["conn_string"].default is None
        assert params["schema"].default == DEFAULT_SCHEMA, cls.__name__
        pool = params["pool_options"]  # one shared, typed set of pool keywords
        assert pool.kind is inspect.Parameter.VAR_KEYWORD, cls.__name__
        assert pool.annotation in ("Unpack[PoolOptions]", Unpack[PoolOptions]), cls.__name__
    assert set(PoolOptions.__annotations__) == {
        "pool_size",
        "prepare_threshold",
        "pipeline",
        "pool_config",
    }


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (VaultStore, PostgresStore),
        (AsyncVaultStore, AsyncPostgresStore),
        (VaultSaver, PostgresSaver),
        (AsyncVaultSaver, AsyncPostgresSaver),
    ],
    ids=lambda c: c.__name__,
)
def test_switching_is_a_change_of_import(ours: Any, theirs: Any) -> None:
    """Every keyword langgraph's class takes, ours takes too."""
    theirs_keywords = set(inspect.signature(theirs.from_conn_string).parameters) - {"cls"}
    assert theirs_keywords - _keywords(ours) == set()


def test_a_misspelt_pool_keyword_is_refused() -> None:
    with (
        pytest.raises(TypeError, match="pool_sise"),
        VaultStore.from_conn_string(
            "postgresql://nobody@127.0.0.1:1/none",
            pool_sise=3,  # type: ignore[call-arg]
        ),
    ):
        pass


@pytest.mark.parametrize("cls", SYNC, ids=lambda c: c.__name__)
def test_pool_config_sizes_the_pool_and_reaches_connections(
    pg_uri: str, schema: str, cls: Any
) -> None:
    config = {"min_size": 2, "max_size": 3, "kwargs": {"application_name": "lmv-test"}}
    with cls.from_conn_string(pg_uri, schema=schema, pipeline=True, pool_config=config) as obj:
        obj.setup()
        _work(obj)
        assert (obj.conn.min_size, obj.conn.max_size) == (2, 3)
        with obj.conn.connection() as conn:
            assert conn.execute("SHOW application_name").fetchone() == ("lmv-test",)
            assert conn.autocommit  # kept, whatever kwargs say


async def test_pool_config_on_an_async_store(pg_uri: str, schema: str) -> None:
    config = {"max_size": 2, "kwargs": {"prepare_threshold": None}, "timeout": 5.0}
    async with AsyncVaultStore.from_conn_string(
        pg_uri, schema=schema, pool_size=1, pool_config=config
    ) as store:
        await store.setup()
        await _awork(store)
        assert store.conn.max_size == 2
        assert store.conn.timeout == 5.0
        assert await _aprepared(store.conn) == 0  # prepare_threshold from kwargs wins


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"pool_size": 0}, "pool_size must be an int >= 1, got 0"),
        ({"pool_size": True}, "pool_size"),
        ({"prepare_threshold": -1}, "prepare_threshold must be None"),
        ({"pool_config": {"check": None}}, r"pool_config may not set \['check'\]"),
        ({"pool_config": {"min_size": 4, "max_size": 2}}, "min_size=4, max_size=2"),
        ({"pool_config": {"kwargs": {"autocommit": False}}}, "autocommit must be True"),
    ],
)
@pytest.mark.parametrize("cls", SYNC, ids=lambda c: c.__name__)
def test_bad_pool_settings_are_refused_before_connecting(
    cls: Any, options: dict[str, Any], match: str
) -> None:
    # An unreachable DSN: the error must come from the settings, not from connecting.
    with (
        pytest.raises(ValueError, match=match),
        cls.from_conn_string("postgresql://nobody@127.0.0.1:1/none", **options),
    ):
        pass


@pytest.mark.parametrize("cls", ASYNC, ids=lambda c: c.__name__)
async def test_bad_pool_settings_are_refused_by_async_classes(cls: Any) -> None:
    with pytest.raises(ValueError, match="pool_size must be an int >= 1"):
        async with cls.from_conn_string("postgresql://nobody@127.0.0.1:1/none", pool_size=-2):
            pass


@pytest.mark.parametrize("dsn", ["", "   "])
def test_an_empty_dsn_is_an_error_not_the_embedded_server(dsn: str) -> None:
    with pytest.raises(ValueError, match="conn_string must be a non-empty DSN or None"):
        resolve_dsn(dsn)
    for cls in SYNC:
        with pytest.raises(ValueError, match="non-empty DSN"), cls.from_conn_string(dsn):
            pass


@pytest.mark.parametrize(
    "opener",
    [
        lambda uri, s: JobQueue.from_conn_string(uri, schema=s, max_size=2),
        lambda uri, s: AuditLog.from_conn_string(uri, schema=s, max_size=2),
    ],
)
def test_max_size_still_works_with_a_deprecation_warning(
    pg_uri: str, schema: str, opener: Callable[[str, str], Any]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with opener(pg_uri, schema) as obj:
            assert obj.conn.max_size == 2
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "pool_size" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller's line


async def test_async_max_size_deprecation(pg_uri: str, schema: str) -> None:
    with pytest.warns(DeprecationWarning, match="pool_size"):
        async with AsyncJobQueue.from_conn_string(pg_uri, schema=schema, max_size=2) as queue:
            assert queue.conn.max_size == 2
