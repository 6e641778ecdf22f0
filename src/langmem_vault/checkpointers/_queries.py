"""Plans for reading checkpoints: get_tuple and list.

Each plan is a generator of :class:`~langmem_vault.db._runner.Query` (see ``db/_runner.py``), so
``VaultSaver`` and ``AsyncVaultSaver`` run the very same SQL and row parsing. A read is one
statement: the checkpoints, their blobs, pending writes, pending sends of pre-v4 parents and
the list elements they use come back as rows of one ``UNION ALL``, told apart by ``kind``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import TASKS
from psycopg.types.json import Jsonb

from langmem_vault.checkpointers import _codec as codec
from langmem_vault.checkpointers._compression import unpack_json
from langmem_vault.checkpointers._config import Scope, Target, render
from langmem_vault.checkpointers._decoded import DecodedCache
from langmem_vault.checkpointers._owners import OWNER_SQL, check_owner
from langmem_vault.checkpointers._pages import LOOSE_FROM, PAGES_FROM, ReadElements
from langmem_vault.checkpointers._text import from_db, tree_from_db, tree_to_db
from langmem_vault.db._runner import Plan, Query, Rows

# {select} is the statement choosing checkpoint rows; everything else hangs off it.
LOAD_SQL = """
WITH {checkpoints},
bl AS MATERIALIZED (
    SELECT c.tenant, c.thread_id, c.checkpoint_ns, c.checkpoint_id, b.channel, b.type, b.blob,
           b.elems
    FROM c
    CROSS JOIN LATERAL jsonb_each_text(c.channel_versions) AS v(channel, version)
    CROSS JOIN LATERAL (
        -- One index lookup per channel: joined flat, the planner hashed every blob of the
        -- thread (600 at turn 200: 0.3 ms, growing with the thread).
        SELECT b.channel, b.type, b.blob, b.elems FROM {schema}.saver_blobs b
        WHERE b.tenant = c.tenant AND b.thread_id = c.thread_id
          AND b.checkpoint_ns = c.checkpoint_ns
          AND b.channel = v.channel AND b.version = v.version
        OFFSET 0
    ) AS b
),
wr AS MATERIALIZED (
    -- Pending writes ('w'), and pending sends of pre-v4 checkpoints, kept by their parent.
    SELECT 'w'::text AS kind, w.thread_id, w.checkpoint_ns, w.checkpoint_id, w.channel,
           w.type, w.blob, w.task_id, w.task_path, w.idx
    FROM c JOIN {schema}.saver_writes w
      ON w.tenant = {tenant} AND w.thread_id = c.thread_id
     AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
    UNION ALL
    SELECT 's', c.thread_id, c.checkpoint_ns, c.checkpoint_id, w.channel,
           w.type, w.blob, w.task_id, w.task_path, w.idx
    FROM c JOIN {schema}.saver_writes w
      ON w.tenant = {tenant} AND w.thread_id = c.thread_id
     AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.parent_checkpoint_id
     AND w.channel = '__pregel_tasks'
    WHERE c.v < 4
),
r AS MATERIALIZED (
    -- The id ranges of all lists read, merged per thread, so an element shared by many
    -- checkpoints (get_state_history) is read once.
    SELECT bl.tenant, bl.thread_id,
           unnest(range_agg(int4range(bl.elems[g.i], bl.elems[g.i + 1], '[]'))) AS ids
    FROM bl CROSS JOIN LATERAL generate_series(1, cardinality(bl.elems), 2) AS g(i)
    WHERE bl.elems IS NOT NULL
    GROUP BY bl.tenant, bl.thread_id
)
SELECT 'c' AS kind, c.thread_id, c.checkpoint_ns, c.checkpoint_id,
       c.parent_checkpoint_id AS parent_id, c.v, c.channel_versions, c.body, c.metadata,
       NULL::text AS channel, NULL::text AS type, NULL::bytea AS blob, NULL::integer[] AS elems,
       NULL::text AS task_id, NULL::text AS task_path, NULL::integer AS idx,
       NULL::bytea AS hash
FROM c
UNION ALL
SELECT 'b', bl.thread_id, bl.checkpoint_ns, bl.checkpoint_id, NULL, NULL, NULL, NULL, NULL,
       bl.channel, bl.type, bl.blob, bl.elems, NULL, NULL, NULL, NULL
FROM bl
UNION ALL
SELECT wr.kind, wr.thread_id, wr.checkpoint_ns, wr.checkpoint_id, NULL, NULL, NULL, NULL, NULL,
       wr.channel, wr.type, wr.blob, NULL, wr.task_id, wr.task_path, wr.idx, NULL
FROM wr
UNION ALL
-- Loose elements: idx is the element id.
SELECT 'e', r.thread_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, e.type, e.blob, NULL, NULL, NULL, e.elem_id, e.hash
FROM {loose}
UNION ALL
-- Pages (see pages.py): idx is the first id, elems the sizes, hash the hashes.
SELECT 'p', r.thread_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, p.type, p.blob, p.sizes, NULL, NULL, p.first_id, p.hashes
FROM {pages}{owner_row}
""".replace("{loose}", LOOSE_FROM).replace("{pages}", PAGES_FROM)

# The checkpoints of a read that checks no owner...
CHECKPOINTS = "c AS MATERIALIZED ({select})"
# ...and of one that does (owners.py): the thread's owner, and the checkpoints only if
# %(user_id)s may read them (the owner or no one), so another user's read sends no rows of
# the thread; the owner comes back as one row of kind 'o' (in task_id) for the check to raise.
OWNED_CHECKPOINTS = (
    ("o AS MATERIALIZED (" + OWNER_SQL + "),")
    + """
c AS MATERIALIZED (
    SELECT * FROM ({select}) AS s
    WHERE NOT EXISTS (SELECT 1 FROM o WHERE o.user_id <> %(user_id)s)
)"""
)
OWNER_ROW = """
UNION ALL
SELECT 'o', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, o.user_id, NULL, NULL, NULL
FROM o"""


# Reads run LOAD_SQL prepared from their first use on a connection (not psycopg's fifth): a
# fresh connection (after a restart, or a pool growing) otherwise parses and plans this long
# statement again for each of its first reads, 4-5 ms of server time each at turn 200.
# Pools opened with prepare_threshold=None (PgBouncer) still prepare nothing.


@functools.lru_cache(maxsize=64)
def load_sql(select: str, schema: str, owned: bool) -> str:
    """LOAD_SQL for the checkpoints ``select`` chooses; ``owned``: with the owner check."""
    checkpoints = OWNED_CHECKPOINTS if owned else CHECKPOINTS
    sql = LOAD_SQL.replace("{checkpoints}", checkpoints).replace("{select}", select)
    # A select of one tenant's checkpoints names it in the writes' joins too: the planner may
    # hash those, and only a tenant it is given reads one partition of saver_writes.
    named = "tenant = %(tenant)s" in select
    sql = sql.replace("{tenant}", "%(tenant)s" if named else "c.tenant")
    return render(sql.replace("{owner_row}", OWNER_ROW if owned else ""), schema)


SELECT_ONE_SQL = """
SELECT * FROM {schema}.saver_checkpoints
WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND checkpoint_id = %(checkpoint_id)s"""

SELECT_LATEST_SQL = """
SELECT * FROM {schema}.saver_checkpoints
WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
ORDER BY checkpoint_id DESC LIMIT 1"""

# ---------------------------------------------------------------------------------- reads


def _assemble(
    serde: SerializerProtocol,
    rows: Sequence[Mapping[str, Any]],
    get_next: Any,
    cache: DecodedCache | None = None,
) -> list[CheckpointTuple]:
    """Group the rows of LOAD_SQL into checkpoint tuples, newest checkpoint first."""
    heads: list[Mapping[str, Any]] = []
    by_key: dict[tuple[str, str, str], dict[str, list[Mapping[str, Any]]]] = {}
    elements: dict[str, ReadElements] = {}
    for row in rows:
        kind = row["kind"]
        if kind == "o":  # the owner check's row (see _owner_checked)
            continue
        if kind == "e" or kind == "p":
            found = elements.get(row["thread_id"])
            if found is None:
                found = elements[row["thread_id"]] = ReadElements()
            found.add_row(row, "idx")
            continue
        key = (row["thread_id"], row["checkpoint_ns"], row["checkpoint_id"])
        if kind == "c":
            heads.append(row)
        by_key.setdefault(key, {}).setdefault(kind, []).append(row)
    heads.sort(key=lambda r: r["checkpoint_id"], reverse=True)
    out = []
    for head in heads:
        thread_id, ns = head["thread_id"], head["checkpoint_ns"]
        checkpoint_id = head["checkpoint_id"]
        parts = by_key[(thread_id, ns, checkpoint_id)]
        stored: dict[str, Any] = unpack_json(head["body"])
        values = dict(stored.get("channel_values") or {})
        thread_elements = elements.get(thread_id) or ReadElements()
        for blob in parts.get("b", []):
            if blob["type"] != codec.EMPTY_TYPE:
                values[blob["channel"]] = codec.decode_value(
                    serde,
                    blob["type"],
                    blob["blob"],
                    blob["elems"],
                    thread_elements,
                    cache,
                )
        checkpoint: dict[str, Any] = {
            **stored,
            "v": head["v"],
            "id": checkpoint_id,
            "channel_versions": head["channel_versions"],
            "channel_values": values,
        }
        if sends := parts.get("s"):
            # Checkpoints before format v4 kept Send packets as writes of their parent.
            versions = dict(checkpoint["channel_versions"])
            sent = codec.load_writes(serde, sends)
            values[TASKS] = [write[2] for write in sent]
            versions[TASKS] = max(versions.values()) if versions else get_next(None, None)
            checkpoint["channel_versions"] = versions
        config: RunnableConfig = {
            "configurable": {
                "thread_id": from_db(thread_id),
                "checkpoint_ns": from_db(ns),
                "checkpoint_id": from_db(checkpoint_id),
            }
        }
        parent: RunnableConfig | None = None
        if head["parent_id"]:
            parent = {
                "configurable": {
                    "thread_id": from_db(thread_id),
                    "checkpoint_ns": from_db(ns),
                    "checkpoint_id": from_db(head["parent_id"]),
                }
            }
        out.append(
            CheckpointTuple(
                config=config,
                checkpoint=checkpoint,  # type: ignore[arg-type]
                metadata=tree_from_db(head["metadata"]),
                parent_config=parent,
                pending_writes=codec.load_writes(serde, parts.get("w", [])),
            )
        )
    return out


def _owner_checked(thread_id: str | None, user_id: str | None, rows: Rows) -> Rows:
    """``rows`` of a read, once the owner check its statement carried passed (see
    :func:`~.owners.check_owner`; raises otherwise)."""
    if user_id is not None and thread_id is not None:
        owners = [{"user_id": r["task_id"]} for r in rows or () if r["kind"] == "o"]
        check_owner(thread_id, user_id, owners)
    return rows


def get_tuple_plan(
    schema: str,
    serde: SerializerProtocol,
    tenant: str,
    where: Target,
    get_next: Any,
    cache: DecodedCache | None = None,
    user_id: str | None = None,
) -> Plan[CheckpointTuple | None]:
    """The checkpoint ``where`` names, or the thread's latest in its namespace.

    ``user_id`` (stored form): the read is refused unless that user owns the thread or no
    one does; the check travels inside the read's statement.
    """
    select = SELECT_ONE_SQL if where.checkpoint_id else SELECT_LATEST_SQL
    params = {
        "tenant": tenant,
        "thread_id": where.thread_id,
        "checkpoint_ns": where.checkpoint_ns,
        "checkpoint_id": where.checkpoint_id,
    }
    if user_id is not None:
        params["user_id"] = user_id
    rows = yield Query(load_sql(select, schema, user_id is not None), params, prepare=True)
    rows = _owner_checked(where.thread_id, user_id, rows)
    found = _assemble(serde, rows or [], get_next, cache)
    return found[0] if found else None


def list_plan(
    schema: str,
    serde: SerializerProtocol,
    tenant: str | None,
    where: Scope | None,
    *,
    filter: dict[str, Any] | None,
    before: str | None,
    limit: int | None,
    get_next: Any,
    cache: DecodedCache | None = None,
    user_id: str | None = None,
) -> Plan[list[CheckpointTuple]]:
    """Checkpoints matching the thread/namespace/id of ``where``, ``filter`` and ``before``;
    ``tenant``: the thread's (when ``where`` names one); ``user_id`` as in
    :func:`get_tuple_plan` (when ``where`` names a thread)."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if where is None:
        user_id = None
    if where is not None:
        clauses.append("tenant = %(tenant)s AND thread_id = %(thread_id)s")
        params["tenant"] = tenant
        params["thread_id"] = where.thread_id
        if where.checkpoint_ns is not None:
            clauses.append("checkpoint_ns = %(checkpoint_ns)s")
            params["checkpoint_ns"] = where.checkpoint_ns
        if where.checkpoint_id:
            clauses.append("checkpoint_id = %(checkpoint_id)s")
            params["checkpoint_id"] = where.checkpoint_id
    if filter:
        clauses.append("metadata @> %(filter)s")
        params["filter"] = Jsonb(tree_to_db(filter))
    if before:
        clauses.append("checkpoint_id < %(before)s")
        params["before"] = before
    select = "SELECT * FROM {schema}.saver_checkpoints"
    if clauses:
        select += " WHERE " + " AND ".join(clauses)
    select += " ORDER BY checkpoint_id DESC"
    if limit is not None:
        select += " LIMIT %(limit)s"
        params["limit"] = int(limit)
    if user_id is not None:
        params["user_id"] = user_id
    rows = yield Query(load_sql(select, schema, user_id is not None), params, prepare=True)
    rows = _owner_checked(where.thread_id if where else None, user_id, rows)
    return _assemble(serde, rows or [], get_next, cache)


# --------------------------------------------------------------------------------- writes


__all__ = ["get_tuple_plan", "list_plan"]
