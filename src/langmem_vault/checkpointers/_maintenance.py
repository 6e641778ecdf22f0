"""Plans that remove or copy whole threads and runs, and prune old checkpoints.

Every plan first locks the thread rows it touches (in thread id order, so two plans cannot
deadlock) and then reads in a fresh statement: a put holds the same lock, so pruning never
deletes an element a concurrent put has just decided to reuse, and a put that committed while
we waited is seen and handled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from langmem_vault._tenants import SHARED_TENANT
from langmem_vault.checkpointers._config import render
from langmem_vault.checkpointers._delta import replay_ancestors_plan
from langmem_vault.checkpointers._tenancy import new_tenant
from langmem_vault.checkpointers._text import from_db, opt_from_db, to_db
from langmem_vault.db._runner import Plan, Query

LOCK_THREADS_SQL = """
SELECT tenant, thread_id FROM {schema}.saver_threads
WHERE {tenants}thread_id = ANY(%(ids)s) ORDER BY thread_id FOR UPDATE"""

# {tenants}: "tenant = ANY(%(tenants)s) AND " when the threads' tenants are known (the delete
# reads their partitions only), else "" (every partition: rows of a thread with no thread row).
DELETE_THREADS_SQL = """
WITH t AS (DELETE FROM {schema}.saver_threads WHERE {tenants}thread_id = ANY(%(ids)s)),
c AS (
    DELETE FROM {schema}.saver_checkpoints WHERE {tenants}thread_id = ANY(%(ids)s) RETURNING 1
),
w AS (DELETE FROM {schema}.saver_writes WHERE {tenants}thread_id = ANY(%(ids)s) RETURNING 1),
b AS (DELETE FROM {schema}.saver_blobs WHERE {tenants}thread_id = ANY(%(ids)s) RETURNING 1),
e AS (DELETE FROM {schema}.saver_elements WHERE {tenants}thread_id = ANY(%(ids)s) RETURNING 1),
p AS (
    DELETE FROM {schema}.saver_pages WHERE {tenants}thread_id = ANY(%(ids)s)
    RETURNING last_id - first_id + 1 AS n
)
SELECT (SELECT count(*) FROM c) AS checkpoints, (SELECT count(*) FROM w) AS writes,
       (SELECT count(*) FROM b) AS blobs,
       (SELECT count(*) FROM e) + (SELECT coalesce(sum(n), 0) FROM p) AS elements"""

# A user's threads: those created under the user (the user's tenant) and those created with no
# user that the user has since written to (adopted: the owner is set, the tenant stays '', as
# a tenant never changes). So a user's listing and erase read the user's partition and the
# shared one (an index probe there), never the others.
USER_THREADS = "tenant = ANY(%(tenants)s) AND user_id = %(user_id)s"

USER_THREADS_LOCK_SQL = f"""
SELECT tenant, thread_id FROM {{schema}}.saver_threads
WHERE {USER_THREADS} ORDER BY thread_id FOR UPDATE"""

LIST_THREADS_SQL = f"""
SELECT thread_id, user_id, title, message_count, started_at, last_activity
FROM {{schema}}.saver_threads WHERE {USER_THREADS}
ORDER BY last_activity DESC, thread_id LIMIT %(limit)s"""

RUN_THREADS_SQL = """
SELECT DISTINCT thread_id FROM {schema}.saver_checkpoints
WHERE metadata ? 'run_id' AND metadata ->> 'run_id' = ANY(%(runs)s)"""

DELETE_RUNS_SQL = """
WITH d AS (
    DELETE FROM {schema}.saver_checkpoints
    WHERE thread_id = ANY(%(ids)s) AND metadata ? 'run_id' AND metadata ->> 'run_id' = ANY(%(runs)s)
    RETURNING thread_id, checkpoint_ns, checkpoint_id
)
DELETE FROM {schema}.saver_writes w USING d
WHERE w.thread_id = d.thread_id AND w.checkpoint_ns = d.checkpoint_ns
  AND w.checkpoint_id = d.checkpoint_id"""

# Blobs no checkpoint of their thread and namespace refers to any more (the reference set
# is materialised once and anti-joined).
GC_BLOBS_SQL = """
WITH refs AS MATERIALIZED (
    SELECT c.thread_id, c.checkpoint_ns, v.key AS channel, v.value AS version
    FROM {schema}.saver_checkpoints c
    CROSS JOIN LATERAL jsonb_each_text(c.channel_versions) AS v
    WHERE c.thread_id = ANY(%(ids)s)
), d AS (
    DELETE FROM {schema}.saver_blobs b
    WHERE b.thread_id = ANY(%(ids)s) AND NOT EXISTS (
        SELECT 1 FROM refs r
        WHERE r.thread_id = b.thread_id AND r.checkpoint_ns = b.checkpoint_ns
          AND r.channel = b.channel AND r.version = b.version)
    RETURNING 1
)
SELECT count(*) AS n FROM d"""

# Then elements no blob refers to, by id range; a page goes when none of its elements is
# used (it is never rewritten, so a partly used page stays whole).
GC_ELEMENTS_SQL = """
WITH refs AS MATERIALIZED (
    SELECT b.thread_id,
           range_agg(int4range(b.elems[g.i], b.elems[g.i + 1], '[]')) AS ids
    FROM {schema}.saver_blobs b
    CROSS JOIN LATERAL generate_series(1, cardinality(b.elems), 2) AS g(i)
    WHERE b.thread_id = ANY(%(ids)s) AND b.elems IS NOT NULL
    GROUP BY b.thread_id
), d AS (
    DELETE FROM {schema}.saver_elements e
    WHERE e.thread_id = ANY(%(ids)s) AND NOT EXISTS (
        SELECT 1 FROM refs r WHERE r.thread_id = e.thread_id AND e.elem_id <@ r.ids)
    RETURNING 1
), dp AS (
    DELETE FROM {schema}.saver_pages p
    WHERE p.thread_id = ANY(%(ids)s) AND NOT EXISTS (
        SELECT 1 FROM refs r WHERE r.thread_id = p.thread_id
          AND r.ids && int4range(p.first_id, p.last_id, '[]'))
    RETURNING last_id - first_id + 1 AS n
)
SELECT (SELECT count(*) FROM d) + (SELECT coalesce(sum(n), 0) FROM dp) AS n"""

COPY_THREAD_SQL = """
WITH t AS (
    INSERT INTO {schema}.saver_threads AS t
        (tenant, thread_id, user_id, title, message_count, next_elem)
    SELECT tenant, %(dst)s, user_id, title, message_count, next_elem
    FROM {schema}.saver_threads WHERE thread_id = %(src)s
    ON CONFLICT (tenant, thread_id) DO UPDATE SET
        next_elem = EXCLUDED.next_elem, epoch = EXCLUDED.epoch, title = EXCLUDED.title,
        message_count = EXCLUDED.message_count, last_activity = now()
), c AS (
    INSERT INTO {schema}.saver_checkpoints
        (tenant, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, v,
         channel_versions, body, metadata)
    SELECT tenant, %(dst)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, v, channel_versions,
           body, metadata
    FROM {schema}.saver_checkpoints WHERE thread_id = %(src)s
), b AS (
    INSERT INTO {schema}.saver_blobs
        (tenant, thread_id, checkpoint_ns, channel, version, type, blob, elems)
    SELECT tenant, %(dst)s, checkpoint_ns, channel, version, type, blob, elems
    FROM {schema}.saver_blobs WHERE thread_id = %(src)s
), e AS (
    INSERT INTO {schema}.saver_elements (tenant, thread_id, elem_id, hash, type, blob)
    SELECT tenant, %(dst)s, elem_id, hash, type, blob
    FROM {schema}.saver_elements WHERE thread_id = %(src)s
), p AS (
    INSERT INTO {schema}.saver_pages
        (tenant, thread_id, first_id, last_id, type, hashes, sizes, blob)
    SELECT tenant, %(dst)s, first_id, last_id, type, hashes, sizes, blob
    FROM {schema}.saver_pages WHERE thread_id = %(src)s
)
INSERT INTO {schema}.saver_writes
    (tenant, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type,
     blob)
SELECT tenant, %(dst)s, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob
FROM {schema}.saver_writes WHERE thread_id = %(src)s"""

HAS_CHECKPOINTS_SQL = """
SELECT EXISTS (SELECT 1 FROM {schema}.saver_checkpoints WHERE thread_id = %(id)s) AS found"""

# The newest `keep` checkpoints of each namespace of a thread.
NEWEST_SQL = """
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id AS parent_id,
       v, metadata -> 'parents' ->> '' AS root,
       metadata ? 'counters_since_delta_snapshot' AS delta
FROM (
    SELECT *, row_number() OVER (PARTITION BY checkpoint_ns ORDER BY checkpoint_id DESC) AS rn
    FROM {schema}.saver_checkpoints WHERE thread_id = %(id)s
) AS ranked
WHERE rn <= %(keep)s"""

SENDS_PARENTS_SQL = """
SELECT DISTINCT checkpoint_ns, checkpoint_id FROM {schema}.saver_writes
WHERE thread_id = %(id)s AND channel = '__pregel_tasks' AND checkpoint_id = ANY(%(ids)s)"""

SAVED_ROOTS_SQL = """
SELECT checkpoint_id FROM {schema}.saver_checkpoints
WHERE thread_id = %(id)s AND checkpoint_ns = '' AND checkpoint_id = ANY(%(ids)s)"""

DELETE_NAMESPACES_SQL = """
WITH c AS (DELETE FROM {schema}.saver_checkpoints
           WHERE thread_id = %(id)s AND checkpoint_ns = ANY(%(ns)s) RETURNING 1),
w AS (DELETE FROM {schema}.saver_writes WHERE thread_id = %(id)s AND checkpoint_ns = ANY(%(ns)s))
SELECT count(*) AS n FROM c"""

TRIM_SQL = """
WITH kept AS (
    SELECT * FROM unnest(%(kept_ns)s::text[], %(kept_ids)s::text[]) AS k(ns, id)
), d AS (
    DELETE FROM {schema}.saver_checkpoints c
    WHERE c.thread_id = %(id)s AND c.checkpoint_ns <> ALL(%(dropped_ns)s)
      AND NOT EXISTS (
          SELECT 1 FROM kept WHERE kept.ns = c.checkpoint_ns AND kept.id = c.checkpoint_id)
    RETURNING c.checkpoint_ns, c.checkpoint_id
), w AS (
    -- By the checkpoints deleted: a running graph may save writes before their checkpoint.
    DELETE FROM {schema}.saver_writes w USING d
    WHERE w.thread_id = %(id)s AND w.checkpoint_ns = d.checkpoint_ns
      AND w.checkpoint_id = d.checkpoint_id
), p AS (
    -- A kept checkpoint whose parent is gone becomes a root, as in langgraph's prune.
    UPDATE {schema}.saver_checkpoints c SET parent_checkpoint_id = NULL
    FROM d, kept WHERE c.thread_id = %(id)s AND c.checkpoint_ns = d.checkpoint_ns
      AND c.parent_checkpoint_id = d.checkpoint_id
      AND kept.ns = c.checkpoint_ns AND kept.id = c.checkpoint_id
)
SELECT count(*) AS n FROM d"""

IDLE_THREADS_SQL = """
SELECT thread_id FROM {schema}.saver_threads
WHERE last_activity < now() - %(idle)s ORDER BY thread_id FOR UPDATE SKIP LOCKED"""

LONG_THREADS_SQL = """
SELECT DISTINCT thread_id FROM {schema}.saver_checkpoints
GROUP BY thread_id, checkpoint_ns HAVING count(*) > %(keep)s"""


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One row of the per-user thread index.

    >>> [t.title for t in saver.list_threads("alice")]  # doctest: +SKIP
    ['Plan my trip to Lyon']
    """

    thread_id: str
    user_id: str | None
    title: str | None
    message_count: int
    started_at: datetime
    last_activity: datetime


@dataclass(frozen=True, slots=True)
class DeletedThreads:
    """What a delete removed: the threads, and how many rows of each kind.

    >>> saver.delete_user_threads("alice").thread_ids  # doctest: +SKIP
    ['chat-1', 'chat-2']
    """

    thread_ids: list[str] = field(default_factory=list)
    checkpoints: int = 0
    writes: int = 0
    blobs: int = 0
    elements: int = 0


@dataclass(frozen=True, slots=True)
class RetentionReport:
    """What :meth:`VaultSaver.apply_retention` removed.

    >>> saver.apply_retention(keep_last=20).checkpoints_deleted  # doctest: +SKIP
    380
    """

    idle_threads_deleted: list[str] = field(default_factory=list)
    checkpoints_deleted: int = 0
    threads_trimmed: list[str] = field(default_factory=list)


def _ids(thread_ids: Sequence[str], what: str) -> list[str]:
    if isinstance(thread_ids, str | bytes):
        raise TypeError(f"{what}: thread_ids must be a list of thread ids, not one string")
    return sorted({str(t) for t in thread_ids})


def by_tenants(template: str, schema: str, ids: list[str], tenants: list[str] | None) -> Query:
    """``template`` (:data:`LOCK_THREADS_SQL`, :data:`DELETE_THREADS_SQL`) about the threads
    ``ids``, of ``tenants`` when known (it then reads their partitions only)."""
    where = "tenant = ANY(%(tenants)s) AND " if tenants is not None else ""
    sql = render(template, schema).replace("{tenants}", where)
    return Query(sql, {"ids": ids, "tenants": tenants})


def delete_threads_plan(
    schema: str, thread_ids: Sequence[str], tenants: Sequence[str] | None = None
) -> Plan[DeletedThreads]:
    """Remove the threads with every checkpoint, blob, element, write and index row.

    ``tenants``: the threads' tenants, when the caller knows them; else their thread rows tell
    (every partition is read only for a thread with no thread row)."""
    ids = _ids(thread_ids, "delete")
    if not ids:
        return DeletedThreads()
    known = None if tenants is None else sorted(set(tenants))
    locked = yield by_tenants(LOCK_THREADS_SQL, schema, ids, known)
    if known is None and {r["thread_id"] for r in locked or ()} == set(ids):
        known = sorted({r["tenant"] for r in locked or ()})
    rows = yield by_tenants(DELETE_THREADS_SQL, schema, ids, known)
    counts = (rows or [{}])[0]
    return DeletedThreads(
        thread_ids=[from_db(i) for i in ids],
        checkpoints=int(counts.get("checkpoints", 0)),
        writes=int(counts.get("writes", 0)),
        blobs=int(counts.get("blobs", 0)),
        elements=int(counts.get("elements", 0)),
    )


def _user_threads(user_id: str) -> dict[str, object]:
    """The parameters of :data:`USER_THREADS`."""
    stored = to_db(user_id)
    return {"user_id": stored, "tenants": [new_tenant(stored), SHARED_TENANT]}


def delete_user_threads_plan(schema: str, user_id: str) -> Plan[DeletedThreads]:
    """Remove every thread indexed under ``user_id``."""
    if not isinstance(user_id, str) or not user_id:
        raise ValueError("delete_user_threads: user_id must be a non-empty string")
    rows = yield Query(render(USER_THREADS_LOCK_SQL, schema), _user_threads(user_id))
    ids = [r["thread_id"] for r in rows or []]
    if not ids:
        return DeletedThreads()
    return (yield from delete_threads_plan(schema, ids, [r["tenant"] for r in rows or []]))


def list_threads_plan(schema: str, user_id: str, limit: int) -> Plan[list[ThreadInfo]]:
    """The user's threads, most recently active first."""
    if not isinstance(user_id, str) or not user_id:
        raise ValueError("list_threads: user_id must be a non-empty string")
    if limit < 1:
        raise ValueError(f"list_threads: limit must be at least 1, got {limit}")
    params = {**_user_threads(user_id), "limit": limit}
    rows = yield Query(render(LIST_THREADS_SQL, schema), params)
    return [
        ThreadInfo(
            **row
            | {
                "thread_id": from_db(row["thread_id"]),
                "user_id": opt_from_db(row["user_id"]),
                "title": opt_from_db(row["title"]),
            }
        )
        for row in rows or []
    ]


BUMP_COUNTER_SQL = """
UPDATE {schema}.saver_threads SET next_elem = next_elem + 1 WHERE thread_id = ANY(%(ids)s)"""


def gc_plan(schema: str, ids: list[str]) -> Plan[None]:
    """Delete blobs and elements of ``ids`` that nothing refers to any more.

    Moving the threads' element counter makes a put that read the elements before this
    deletion start over instead of pointing at an element deleted here (see put.py).
    """
    yield Query(render(BUMP_COUNTER_SQL, schema), {"ids": ids})
    yield Query(render(GC_BLOBS_SQL, schema), {"ids": ids})
    yield Query(render(GC_ELEMENTS_SQL, schema), {"ids": ids})
    return None


def delete_for_runs_plan(schema: str, run_ids: Sequence[str]) -> Plan[None]:
    """Remove the checkpoints (and their writes) that the given runs created."""
    runs = [to_db(r) for r in _ids(run_ids, "delete_for_runs")]
    if not runs:
        return None
    rows = yield Query(render(RUN_THREADS_SQL, schema), {"runs": runs})
    ids = sorted(r["thread_id"] for r in rows or [])
    if not ids:
        return None
    yield by_tenants(LOCK_THREADS_SQL, schema, ids, None)
    yield Query(render(DELETE_RUNS_SQL, schema), {"ids": ids, "runs": runs})
    yield from gc_plan(schema, ids)
    return None


def copy_thread_plan(schema: str, source: str, target: str) -> Plan[None]:
    """Copy every checkpoint, blob, element and write of ``source`` to the empty ``target``."""
    if source == target:
        raise ValueError("copy_thread: source_thread_id and target_thread_id are the same")
    source, target = to_db(source), to_db(target)
    yield by_tenants(LOCK_THREADS_SQL, schema, sorted([source, target]), None)
    rows = yield Query(render(HAS_CHECKPOINTS_SQL, schema), {"id": target})
    if rows and rows[0]["found"]:
        raise ValueError(
            f"copy_thread: target thread {target!r} already has checkpoints; "
            "delete_thread() it first or pick a new target_thread_id"
        )
    # Leftover writes of a target that never got a checkpoint would collide with the copy.
    yield by_tenants(DELETE_THREADS_SQL, schema, [target], None)
    yield Query(render(COPY_THREAD_SQL, schema), {"src": source, "dst": target})
    return None


def trim_thread_plan(schema: str, thread_id: str, keep: int) -> Plan[int]:
    """Keep the newest ``keep`` checkpoints of each namespace of one thread.

    Also kept: the parent a pre-v4 checkpoint reads its pending sends from. A subgraph call's
    namespace (``node:task_id``) goes with the root checkpoint it started from, once that one
    is saved and deleted. A checkpoint whose DeltaChannel value is rebuilt from older
    checkpoints keeps those (back to the nearest stored value), so it loads the same state.
    Returns the number of checkpoints deleted.
    """
    yield by_tenants(LOCK_THREADS_SQL, schema, [thread_id], None)
    newest = yield Query(render(NEWEST_SQL, schema), {"id": thread_id, "keep": keep})
    newest = newest or []
    kept = {(r["checkpoint_ns"], r["checkpoint_id"]) for r in newest}
    for r in newest:
        if r["delta"]:  # a DeltaChannel: keep what rebuilding its value reads
            ns, cid = r["checkpoint_ns"], r["checkpoint_id"]
            extra = yield from replay_ancestors_plan(schema, thread_id, ns, cid)
            kept |= {(ns, a) for a in extra}
    old = [r for r in newest if r["v"] < 4 and r["parent_id"]]
    old = [r for r in old if (r["checkpoint_ns"], r["parent_id"]) not in kept]
    if old:
        found = yield Query(
            render(SENDS_PARENTS_SQL, schema),
            {"id": thread_id, "ids": [r["parent_id"] for r in old]},
        )
        kept |= {(r["checkpoint_ns"], r["checkpoint_id"]) for r in found or []}
    calls = [r for r in newest if ":" in r["checkpoint_ns"] and r["root"]]
    dropped: set[str] = set()
    deleted = 0
    if calls:
        saved = yield Query(
            render(SAVED_ROOTS_SQL, schema), {"id": thread_id, "ids": [r["root"] for r in calls]}
        )
        saved_ids = {r["checkpoint_id"] for r in saved or []}
        kept_roots = {cid for ns, cid in kept if ns == ""}
        by_ns: dict[str, set[str]] = {}
        for r in calls:
            by_ns.setdefault(r["checkpoint_ns"], set()).add(r["root"])
        dropped = {
            ns for ns, roots in by_ns.items() if roots <= saved_ids and not roots & kept_roots
        }
        if dropped:
            rows = yield Query(
                render(DELETE_NAMESPACES_SQL, schema), {"id": thread_id, "ns": sorted(dropped)}
            )
            deleted += int((rows or [{"n": 0}])[0]["n"])
    pairs = sorted(kept)
    rows = yield Query(
        render(TRIM_SQL, schema),
        {
            "id": thread_id,
            "kept_ns": [p[0] for p in pairs],
            "kept_ids": [p[1] for p in pairs],
            "dropped_ns": sorted(dropped),
        },
    )
    deleted += int((rows or [{"n": 0}])[0]["n"])
    if deleted:
        yield from gc_plan(schema, [thread_id])
    return deleted


def idle_threads_plan(schema: str, idle: timedelta) -> Plan[DeletedThreads]:
    """Delete the threads with no put for longer than ``idle``."""
    rows = yield Query(render(IDLE_THREADS_SQL, schema), {"idle": idle})
    ids = [r["thread_id"] for r in rows or []]
    if not ids:
        return DeletedThreads()
    return (yield from delete_threads_plan(schema, ids))


def long_threads_plan(schema: str, keep: int) -> Plan[list[str]]:
    """Threads with a namespace holding more than ``keep`` checkpoints."""
    rows = yield Query(render(LONG_THREADS_SQL, schema), {"keep": keep})
    return sorted(r["thread_id"] for r in rows or [])


def check_retention(keep_last: int | None, idle_longer_than: timedelta | None) -> None:
    """Validate apply_retention's arguments before anything is deleted."""
    if keep_last is None and idle_longer_than is None:
        raise ValueError("apply_retention: pass keep_last, idle_longer_than, or both")
    if keep_last is not None and (not isinstance(keep_last, int) or keep_last < 1):
        raise ValueError(f"apply_retention: keep_last must be an int >= 1, got {keep_last!r}")
    if idle_longer_than is not None and (
        not isinstance(idle_longer_than, timedelta) or idle_longer_than <= timedelta(0)
    ):
        raise ValueError(
            "apply_retention: idle_longer_than must be a positive timedelta, "
            f"got {idle_longer_than!r}"
        )
