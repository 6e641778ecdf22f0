"""The put plan: store a checkpoint in one statement (two on a thread this saver has not
written yet), with no transaction block.

Long lists become element ranges; ids for new elements come from :mod:`elements` (an
optimistic counter: the write applies only if no one moved it meanwhile, else the plan
asks the database and starts over).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.types.json import Jsonb

from langmem_vault.checkpointers import _codec as codec
from langmem_vault.checkpointers._compression import pack, pack_json
from langmem_vault.checkpointers._config import Target, render, user_id_of
from langmem_vault.checkpointers._elements import (
    GUARD_CTES,
    MAX_ATTEMPTS,
    ElementCache,
    Known,
    allocate,
    gave_up,
)
from langmem_vault.checkpointers._text import from_db, opt_to_db, tree_to_db
from langmem_vault.db._runner import Plan, Query

PUT_SQL = (
    "WITH"
    + GUARD_CTES
    + """, new_blobs AS (
    INSERT INTO {schema}.saver_blobs
        (tenant, thread_id, checkpoint_ns, channel, version, type, blob, elems)
    SELECT %(tenant)s, %(thread_id)s, %(checkpoint_ns)s, x.channel,
           %(versions)s::jsonb ->> x.channel, x.type, x.blob, x.elems::integer[]
    FROM unnest(%(b_channels)s::text[], %(b_types)s::text[], %(b_blobs)s::bytea[],
                %(b_elems)s::text[]) AS x(channel, type, blob, elems)
    WHERE (SELECT ok FROM ok)
    ON CONFLICT DO NOTHING
), new_checkpoint AS (
    INSERT INTO {schema}.saver_checkpoints
        (tenant, thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, v,
         channel_versions, body, metadata)
    SELECT %(tenant)s, %(thread_id)s, %(checkpoint_ns)s, %(checkpoint_id)s, %(parent_id)s, %(v)s,
           %(channel_versions)s, %(body)s, %(metadata)s
    WHERE (SELECT ok FROM ok)
    ON CONFLICT (tenant, thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET v = EXCLUDED.v, channel_versions = EXCLUDED.channel_versions,
                  body = EXCLUDED.body, metadata = EXCLUDED.metadata
)
SELECT ok, epoch FROM ok"""
)

# Checkpoint keys kept in their own columns rather than in the body.
_COLUMNS = ("id", "v", "channel_versions", "channel_values")


def _thread_fields(
    config: RunnableConfig, where: Target, values: dict[str, Any], changed: ChannelVersions
) -> dict[str, Any]:
    """The per-user index columns this put updates: user id, and title/count from messages."""
    fields: dict[str, Any] = {"user_id": user_id_of(config), "title": None, "message_count": None}
    messages = values.get("messages")
    if where.checkpoint_ns == "" and "messages" in changed and isinstance(messages, list):
        fields["title"] = opt_to_db(codec.thread_title(messages))
        fields["message_count"] = len(messages)
    return fields


def put_plan(
    schema: str,
    serde: SerializerProtocol,
    tenant: str,
    config: RunnableConfig,
    where: Target,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    cache: ElementCache | None = None,
) -> Plan[RunnableConfig]:
    """Store ``checkpoint`` in the thread of ``tenant``: changed values as blobs or element
    ranges, small ones inline."""
    values = checkpoint["channel_values"]
    inline = {k: v for k, v in values.items() if codec.is_inline(v)}
    # A changed channel with no value gets no row at all (as in langgraph's saver): reading
    # finds no blob for its version and leaves it out of channel_values.
    encoded = [
        codec.encode_value(serde, channel, values[channel])
        for channel in new_versions
        if channel in values and channel not in inline
    ]
    body = {k: v for k, v in checkpoint.items() if k not in _COLUMNS}
    body["channel_values"] = inline
    params: dict[str, Any] = {
        "tenant": tenant,
        "thread_id": where.thread_id,
        "checkpoint_ns": where.checkpoint_ns,
        "checkpoint_id": checkpoint["id"],
        "parent_id": where.checkpoint_id,
        "v": int(checkpoint.get("v", 1)),
        "channel_versions": Jsonb(checkpoint.get("channel_versions") or {}),
        "body": pack_json(body),
        "metadata": Jsonb(tree_to_db(get_serializable_checkpoint_metadata(config, metadata))),
        "versions": Jsonb(dict(new_versions)),
        "b_channels": [v.channel for v in encoded],
        **_thread_fields(config, where, values, new_versions),
    }
    elements = {e.hash: e for value in encoded for e in value.elements or ()}
    packed_blobs = [pack(v.type, v.blob) if v.blob is not None else (v.type, None) for v in encoded]
    params["b_types"] = [p[0] for p in packed_blobs]
    params["b_blobs"] = [p[1] for p in packed_blobs]
    packed: dict[bytes, tuple[str, bytes]] = {}
    known = cache.get(where.thread_id) if cache is not None and elements else None
    for _ in range(MAX_ATTEMPTS):
        alloc = yield from allocate(schema, tenant, where.thread_id, elements, packed, known)
        params.update(alloc.params, b_elems=[alloc.ranges(v.elements) for v in encoded])
        done = yield Query(render(PUT_SQL, schema), params)
        if done and done[0]["ok"]:
            if cache is not None and elements:
                # Ids learnt earlier stay valid: the guard just proved nothing changed since.
                learnt = {**known.ids, **alloc.ids} if known is not None else alloc.ids
                epoch = int(done[0]["epoch"])
                cache.put(where.thread_id, Known(epoch, alloc.next_elem, learnt, alloc.sealed))
            return {
                "configurable": {
                    "thread_id": from_db(where.thread_id),
                    "checkpoint_ns": from_db(where.checkpoint_ns),
                    "checkpoint_id": checkpoint["id"],
                }
            }
        known = None  # ask the database from now on
        if cache is not None:
            cache.drop(where.thread_id)
    raise gave_up("put", where.thread_id)
