"""Plans for reading and writing checkpoints: get_tuple, list, put and put_writes.

Each plan is a generator of :class:`~langmem_vault.db.runner.Query` (see ``db/runner.py``), so
``VaultSaver`` and ``AsyncVaultSaver`` run the very same SQL and row parsing. A read is one
statement: the checkpoints, their blobs, pending writes, pending sends of pre-v4 parents and
the list elements they use come back as rows of one ``UNION ALL``, told apart by ``kind``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import TASKS
from psycopg.types.json import Jsonb

from langmem_vault.checkpointers import codec
from langmem_vault.checkpointers.compression import pack, pack_json, unpack_json
from langmem_vault.checkpointers.config import Scope, Target, next_version, render, user_id_of
from langmem_vault.db.runner import Plan, Query

# {select} is the statement choosing checkpoint rows; everything else hangs off it.
LOAD_SQL = """
WITH c AS MATERIALIZED ({select}),
bl AS MATERIALIZED (
    SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, b.channel, b.type, b.blob, b.elems
    FROM c
    CROSS JOIN LATERAL jsonb_each_text(c.channel_versions) AS v(channel, version)
    JOIN {schema}.saver_blobs b
      ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
     AND b.channel = v.channel AND b.version = v.version
)
SELECT 'c' AS kind, c.thread_id, c.checkpoint_ns, c.checkpoint_id,
       c.parent_checkpoint_id AS parent_id, c.v, c.channel_versions, c.body, c.metadata,
       NULL::text AS channel, NULL::text AS type, NULL::bytea AS blob, NULL::integer[] AS elems,
       NULL::text AS task_id, NULL::text AS task_path, NULL::integer AS idx
FROM c
UNION ALL
SELECT 'b', bl.thread_id, bl.checkpoint_ns, bl.checkpoint_id, NULL, NULL, NULL, NULL, NULL,
       bl.channel, bl.type, bl.blob, bl.elems, NULL, NULL, NULL
FROM bl
UNION ALL
SELECT 'w', w.thread_id, w.checkpoint_ns, w.checkpoint_id, NULL, NULL, NULL, NULL, NULL,
       w.channel, w.type, w.blob, NULL, w.task_id, w.task_path, w.idx
FROM c JOIN {schema}.saver_writes w
  ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
 AND w.checkpoint_id = c.checkpoint_id
UNION ALL
SELECT 's', c.thread_id, c.checkpoint_ns, c.checkpoint_id, NULL, NULL, NULL, NULL, NULL,
       w.channel, w.type, w.blob, NULL, w.task_id, w.task_path, w.idx
FROM c JOIN {schema}.saver_writes w
  ON w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
 AND w.checkpoint_id = c.parent_checkpoint_id AND w.channel = '__pregel_tasks'
WHERE c.v < 4
UNION ALL
SELECT 'e', e.thread_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, e.type, e.blob, NULL, NULL, NULL, e.elem_id
FROM {schema}.saver_elements e
WHERE (e.thread_id, e.elem_id) IN (
    SELECT bl.thread_id, generate_series(bl.elems[g.i], bl.elems[g.i + 1])
    FROM bl CROSS JOIN LATERAL generate_series(1, cardinality(bl.elems), 2) AS g(i)
    WHERE bl.elems IS NOT NULL
)
"""

SELECT_ONE_SQL = """
SELECT * FROM {schema}.saver_checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND checkpoint_id = %(checkpoint_id)s"""

SELECT_LATEST_SQL = """
SELECT * FROM {schema}.saver_checkpoints
WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
ORDER BY checkpoint_id DESC LIMIT 1"""

# The thread row is upserted first: its lock orders concurrent puts of one thread, so the
# element ids a put hands out are never handed out twice.
THREAD_UPSERT = """
INSERT INTO {schema}.saver_threads AS t (thread_id, user_id, title, message_count)
VALUES (%(thread_id)s, %(user_id)s, %(title)s, coalesce(%(message_count)s, 0))
ON CONFLICT (thread_id) DO UPDATE SET
    last_activity = now(),
    user_id = coalesce(t.user_id, EXCLUDED.user_id),
    title = coalesce(t.title, EXCLUDED.title),
    message_count = coalesce(%(message_count)s, t.message_count)"""

LOCK_THREAD_SQL = THREAD_UPSERT + "\nRETURNING t.next_elem"

EXISTING_ELEMENTS_SQL = """
SELECT hash, elem_id FROM {schema}.saver_elements
WHERE thread_id = %(thread_id)s AND hash = ANY(%(hashes)s)"""

# {thread} is either the thread upsert (no elements: one round trip in all) or, after
# LOCK_THREAD_SQL, the bump of the thread's element counter.
PUT_SQL = """
WITH thread AS ({thread}),
new_elements AS (
    INSERT INTO {schema}.saver_elements (thread_id, elem_id, hash, type, blob)
    SELECT %(thread_id)s, x.elem_id, x.hash, x.type, x.blob
    FROM unnest(%(e_ids)s::integer[], %(e_hashes)s::bytea[], %(e_types)s::text[],
                %(e_blobs)s::bytea[]) AS x(elem_id, hash, type, blob)
),
new_blobs AS (
    INSERT INTO {schema}.saver_blobs
        (thread_id, checkpoint_ns, channel, version, type, blob, elems)
    SELECT %(thread_id)s, %(checkpoint_ns)s, x.channel, %(versions)s::jsonb ->> x.channel,
           x.type, x.blob, x.elems::integer[]
    FROM unnest(%(b_channels)s::text[], %(b_types)s::text[], %(b_blobs)s::bytea[],
                %(b_elems)s::text[]) AS x(channel, type, blob, elems)
    ON CONFLICT DO NOTHING
)
INSERT INTO {schema}.saver_checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, v, channel_versions, body,
     metadata)
VALUES (%(thread_id)s, %(checkpoint_ns)s, %(checkpoint_id)s, %(parent_id)s, %(v)s,
        %(channel_versions)s, %(body)s, %(metadata)s)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET v = EXCLUDED.v, channel_versions = EXCLUDED.channel_versions,
              body = EXCLUDED.body, metadata = EXCLUDED.metadata"""

BUMP_ELEMENTS = """
UPDATE {schema}.saver_threads SET next_elem = %(next_elem)s
WHERE thread_id = %(thread_id)s AND next_elem < %(next_elem)s"""

PUT_PLAIN_SQL = PUT_SQL.replace("{thread}", THREAD_UPSERT)
PUT_WITH_ELEMENTS_SQL = PUT_SQL.replace("{thread}", BUMP_ELEMENTS)

WRITES_SQL = """
INSERT INTO {schema}.saver_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT %(thread_id)s, %(checkpoint_ns)s, %(checkpoint_id)s, %(task_id)s, %(task_path)s,
       x.idx, x.channel, x.type, x.blob
FROM unnest(%(idx)s::integer[], %(channels)s::text[], %(types)s::text[], %(blobs)s::bytea[])
    AS x(idx, channel, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) """
INSERT_WRITES_SQL = WRITES_SQL + "DO NOTHING"
UPSERT_WRITES_SQL = (
    WRITES_SQL
    + "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
)


# Checkpoint keys kept in their own columns rather than in the body.
_COLUMNS = ("id", "v", "channel_versions", "channel_values")

# ---------------------------------------------------------------------------------- reads


def _assemble(
    serde: SerializerProtocol, rows: Sequence[Mapping[str, Any]], get_next: Any
) -> list[CheckpointTuple]:
    """Group the rows of LOAD_SQL into checkpoint tuples, newest checkpoint first."""
    heads: list[Mapping[str, Any]] = []
    by_key: dict[tuple[str, str, str], dict[str, list[Mapping[str, Any]]]] = {}
    elements: dict[str, dict[int, tuple[str, bytes]]] = {}
    for row in rows:
        kind = row["kind"]
        if kind == "e":
            elements.setdefault(row["thread_id"], {})[row["idx"]] = (row["type"], row["blob"])
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
        thread_elements = elements.get(thread_id, {})
        for blob in parts.get("b", []):
            if blob["type"] != codec.EMPTY_TYPE:
                values[blob["channel"]] = codec.decode_value(
                    serde, blob["type"], blob["blob"], blob["elems"], thread_elements
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
            values[TASKS] = [write[2] for write in codec.load_writes(serde, sends)]
            versions[TASKS] = max(versions.values()) if versions else get_next(None, None)
            checkpoint["channel_versions"] = versions
        config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        parent: RunnableConfig | None = None
        if head["parent_id"]:
            parent = {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": head["parent_id"],
                }
            }
        out.append(
            CheckpointTuple(
                config=config,
                checkpoint=checkpoint,  # type: ignore[arg-type]
                metadata=head["metadata"],
                parent_config=parent,
                pending_writes=codec.load_writes(serde, parts.get("w", [])),
            )
        )
    return out


def get_tuple_plan(
    schema: str, serde: SerializerProtocol, where: Target, get_next: Any
) -> Plan[CheckpointTuple | None]:
    """The checkpoint ``where`` names, or the thread's latest in its namespace."""
    select = SELECT_ONE_SQL if where.checkpoint_id else SELECT_LATEST_SQL
    sql = render(LOAD_SQL.replace("{select}", select), schema)
    params = {
        "thread_id": where.thread_id,
        "checkpoint_ns": where.checkpoint_ns,
        "checkpoint_id": where.checkpoint_id,
    }
    rows = yield Query(sql, params)
    found = _assemble(serde, rows or [], get_next)
    return found[0] if found else None


def list_plan(
    schema: str,
    serde: SerializerProtocol,
    where: Scope | None,
    *,
    filter: dict[str, Any] | None,
    before: str | None,
    limit: int | None,
    get_next: Any,
) -> Plan[list[CheckpointTuple]]:
    """Checkpoints matching the thread/namespace/id of ``where``, ``filter`` and ``before``."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if where is not None:
        clauses.append("thread_id = %(thread_id)s")
        params["thread_id"] = where.thread_id
        if where.checkpoint_ns is not None:
            clauses.append("checkpoint_ns = %(checkpoint_ns)s")
            params["checkpoint_ns"] = where.checkpoint_ns
        if where.checkpoint_id:
            clauses.append("checkpoint_id = %(checkpoint_id)s")
            params["checkpoint_id"] = where.checkpoint_id
    if filter:
        clauses.append("metadata @> %(filter)s")
        params["filter"] = Jsonb(filter)
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
    rows = yield Query(render(LOAD_SQL.replace("{select}", select), schema), params)
    return _assemble(serde, rows or [], get_next)


# --------------------------------------------------------------------------------- writes


def _thread_fields(
    config: RunnableConfig, where: Target, values: Mapping[str, Any], changed: ChannelVersions
) -> dict[str, Any]:
    """The per-user index columns this put updates: user id, and title/count from messages."""
    fields: dict[str, Any] = {"user_id": user_id_of(config), "title": None, "message_count": None}
    messages = values.get("messages")
    if where.checkpoint_ns == "" and "messages" in changed and isinstance(messages, list):
        fields["title"] = codec.thread_title(messages)
        fields["message_count"] = len(messages)
    return fields


def put_plan(
    schema: str,
    serde: SerializerProtocol,
    config: RunnableConfig,
    where: Target,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
) -> Plan[RunnableConfig]:
    """Store ``checkpoint``: changed channel values as blobs or element ranges, the rest inline."""
    values = checkpoint["channel_values"]
    inline = {k: v for k, v in values.items() if codec.is_inline(v)}
    # A changed channel with no value gets no row at all (as in langgraph's saver): reading
    # finds no blob for its version and leaves it out of channel_values.
    encoded = [
        codec.encode_value(serde, channel, values[channel])
        for channel in new_versions
        if channel in values and channel not in inline
    ]
    # The body keeps whatever else the checkpoint carries (ts, versions_seen, ...).
    body = {k: v for k, v in checkpoint.items() if k not in _COLUMNS}
    body["channel_values"] = inline
    params: dict[str, Any] = {
        "thread_id": where.thread_id,
        "checkpoint_ns": where.checkpoint_ns,
        "checkpoint_id": checkpoint["id"],
        "parent_id": where.checkpoint_id,
        "v": int(checkpoint.get("v", 1)),
        "channel_versions": Jsonb(checkpoint.get("channel_versions") or {}),
        "body": pack_json(body),
        "metadata": Jsonb(get_serializable_checkpoint_metadata(config, metadata)),
        "versions": Jsonb({k: v for k, v in new_versions.items()}),
        **_thread_fields(config, where, values, new_versions),
    }
    elements = {e.hash: e for value in encoded for e in value.elements or ()}
    ids: dict[bytes, int] = {}
    new: list[codec.Element] = []
    if elements:
        locked = yield Query(render(LOCK_THREAD_SQL, schema), params)
        next_elem = int(locked[0]["next_elem"]) if locked else 1
        existing = yield Query(
            render(EXISTING_ELEMENTS_SQL, schema),
            {"thread_id": where.thread_id, "hashes": list(elements)},
        )
        ids = {bytes(row["hash"]): row["elem_id"] for row in existing or []}
        for digest, element in elements.items():
            if digest not in ids:
                ids[digest] = next_elem
                next_elem += 1
                new.append(element)
        params["next_elem"] = next_elem
    params.update(
        e_ids=[ids[e.hash] for e in new],
        e_hashes=[e.hash for e in new],
        b_channels=[v.channel for v in encoded],
        b_elems=[
            codec.ranges_literal(codec.encode_ranges([ids[e.hash] for e in v.elements]))
            if v.elements is not None
            else None
            for v in encoded
        ],
    )
    packed_elements = [pack(e.type, e.blob) for e in new]
    packed_blobs = [pack(v.type, v.blob) if v.blob is not None else (v.type, None) for v in encoded]
    params.update(
        e_types=[p[0] for p in packed_elements],
        e_blobs=[p[1] for p in packed_elements],
        b_types=[p[0] for p in packed_blobs],
        b_blobs=[p[1] for p in packed_blobs],
    )
    yield Query(render(PUT_WITH_ELEMENTS_SQL if elements else PUT_PLAIN_SQL, schema), params)
    return {
        "configurable": {
            "thread_id": where.thread_id,
            "checkpoint_ns": where.checkpoint_ns,
            "checkpoint_id": checkpoint["id"],
        }
    }


def put_writes_plan(
    schema: str,
    serde: SerializerProtocol,
    where: Target,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Plan[None]:
    """Store a task's writes. Special channels (errors, interrupts...) replace what was there;
    ordinary writes are kept as first written, so a retried task cannot duplicate them."""
    if not where.checkpoint_id:
        raise ValueError(
            "put_writes: config['configurable']['checkpoint_id'] is required (the checkpoint "
            "the writes belong to)"
        )
    if not writes:
        return None
    rows = codec.dump_writes(serde, writes)
    upsert = all(channel in WRITES_IDX_MAP for channel, _ in writes)
    if upsert:
        # One statement cannot update a row twice; the last write of a channel wins.
        rows = list({row[0]: row for row in rows}.values())
    yield Query(
        render(UPSERT_WRITES_SQL if upsert else INSERT_WRITES_SQL, schema),
        {
            "thread_id": where.thread_id,
            "checkpoint_ns": where.checkpoint_ns,
            "checkpoint_id": where.checkpoint_id,
            "task_id": task_id,
            "task_path": task_path,
            "idx": [r[0] for r in rows],
            "channels": [r[1] for r in rows],
            "types": [r[2] for r in rows],
            "blobs": [r[3] for r in rows],
        },
    )
    return None


__all__ = ["get_tuple_plan", "list_plan", "next_version", "put_plan", "put_writes_plan"]
