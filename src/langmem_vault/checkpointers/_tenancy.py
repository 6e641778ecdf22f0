"""A thread's tenant: the user it belongs to, the column that leads every key of the saver's
tables (see :mod:`langmem_vault._tenants`), so that with the tables hash-partitioned
(``setup(partitions=N)``) or distributed on Citus a call about one thread reads one partition.

The tenant of a thread is its owner: the user id of the config that created it (the
``user_id`` the memory namespaces use, by :func:`~langmem_vault._run_config.config_value`'s
rule, so a user's threads sit beside their memories), or ``''``
(:data:`~langmem_vault._tenants.SHARED_TENANT`) for a thread created with no user. It never
changes, so a call finds it once per process:

- a thread this saver has seen: the tenant it learnt (:class:`TenantCache`);
- a read of a thread it has not seen: first under the caller's own user id (or ``''``), the
  tenant of every thread a user reads of their own; only when that finds nothing, one lookup
  by thread id (:data:`RESOLVE_SQL`), then the read again under the tenant found (a thread of
  another user is then refused by the owner check, one with no owner read);
- a write or a delta read of a thread it has not seen: that lookup first (a thread no one has
  created yet gets the caller's user id, or ``''``).

The lookup by thread id is the saver's one statement that does not name a tenant: it probes
every partition's ``saver_threads_thread_idx`` (on Citus, every shard). Thread ids are
taken as unique across users, as before (langgraph's own saver has them unique); a thread
deleted by another process and made again under another user is seen by this process under
its old tenant until it deletes the thread itself.

>>> cache = TenantCache()
>>> cache.put("t1", "alice"); cache.get("t1"), cache.get("t2")
('alice', None)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from langmem_vault._tenants import SHARED_TENANT
from langmem_vault.checkpointers._config import render
from langmem_vault.checkpointers._lru import ThreadLRU
from langmem_vault.db._runner import Plan, Query

T = TypeVar("T")

RESOLVE_SQL = "SELECT tenant FROM {schema}.saver_threads WHERE thread_id = %(thread_id)s LIMIT 1"


class TenantCache(ThreadLRU[str]):
    """The tenant of each thread this saver learnt (of the 4,096 it used last)."""

    def __init__(self, max_threads: int = 4096) -> None:
        super().__init__(max_threads)


def new_tenant(user_id: str | None) -> str:
    """The tenant a thread created by ``user_id`` (stored form; None: no user) gets."""
    return user_id or SHARED_TENANT


def resolve_plan(schema: str, cache: TenantCache, thread_id: str, default: str) -> Plan[str]:
    """The tenant of ``thread_id``, from the cache or the lookup; ``default`` when the thread
    does not exist yet (the one it will be created under)."""
    tenant = cache.get(thread_id)
    if tenant is None:
        rows = yield Query(render(RESOLVE_SQL, schema), {"thread_id": thread_id})
        tenant = rows[0]["tenant"] if rows else default
        cache.put(thread_id, tenant)
    return tenant


def read_plan(
    schema: str,
    cache: TenantCache,
    thread_id: str,
    default: str,
    make: Callable[[str], Plan[T]],
    found: Callable[[T], bool],
) -> Plan[T]:
    """``make(tenant)``'s read under the thread's tenant: the cached one, else ``default``
    first and, when that ``found`` nothing, the one the lookup finds."""
    known = cache.get(thread_id)
    result = yield from make(default if known is None else known)
    if known is not None:
        return result
    if found(result):
        cache.put(thread_id, default)
        return result
    tenant = yield from resolve_plan(schema, cache, thread_id, default)
    if tenant == default:
        return result
    return (yield from make(tenant))
