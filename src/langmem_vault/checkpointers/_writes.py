"""The put_writes plan: a task's writes against a checkpoint, in one statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP
from langgraph.checkpoint.serde.base import SerializerProtocol

from langmem_vault.checkpointers import _codec as codec
from langmem_vault.checkpointers._config import Target, render
from langmem_vault.db._runner import Plan, Query

WRITES_SQL = """
INSERT INTO {schema}.saver_writes
    (tenant, thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type,
     blob)
SELECT %(tenant)s, %(thread_id)s, %(checkpoint_ns)s, %(checkpoint_id)s, %(task_id)s, %(task_path)s,
       x.idx, x.channel, x.type, x.blob
FROM unnest(%(idx)s::integer[], %(channels)s::text[], %(types)s::text[], %(blobs)s::bytea[])
    AS x(idx, channel, type, blob)
ON CONFLICT (tenant, thread_id, checkpoint_ns, checkpoint_id, task_id, idx) """
INSERT_WRITES_SQL = WRITES_SQL + "DO NOTHING"
UPSERT_WRITES_SQL = (
    WRITES_SQL
    + "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"
)


def put_writes_plan(
    schema: str,
    serde: SerializerProtocol,
    tenant: str,
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
            "tenant": tenant,
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
