"""The plan behind ``get_delta_channel_history`` (langgraph's DeltaChannel, beta).

The base class walks the parent chain with one ``get_tuple`` per ancestor. Here one recursive
query walks the chain and reports, per requested channel, whether each ancestor stores a value
for it; a second reads the writes on the walked part of the chain, a third the seed values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import DeltaChannelHistory, PendingWrite
from langgraph.checkpoint.serde.base import SerializerProtocol

from langmem_vault.checkpointers import _codec as codec
from langmem_vault.checkpointers._compression import unpack_json
from langmem_vault.checkpointers._config import Target, render
from langmem_vault.checkpointers._pages import LOOSE_FROM, PAGES_FROM, ReadElements
from langmem_vault.db._runner import Plan, Query

CHAIN_SQL = """
WITH RECURSIVE chain AS (
    SELECT checkpoint_id, parent_checkpoint_id, channel_versions, body, 0 AS depth
    FROM {schema}.saver_checkpoints
    WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s
      AND checkpoint_ns = %(checkpoint_ns)s AND checkpoint_id = coalesce(%(checkpoint_id)s, (
          SELECT max(checkpoint_id) FROM {schema}.saver_checkpoints
          WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s
            AND checkpoint_ns = %(checkpoint_ns)s))
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.channel_versions, c.body, chain.depth + 1
    FROM chain JOIN {schema}.saver_checkpoints c
      ON c.tenant = %(tenant)s AND c.thread_id = %(thread_id)s
     AND c.checkpoint_ns = %(checkpoint_ns)s AND c.checkpoint_id = chain.parent_checkpoint_id
)
SELECT chain.checkpoint_id, chain.depth, ch.name AS channel,
       chain.channel_versions ->> ch.name AS version, chain.body, b.type AS blob_type
FROM chain CROSS JOIN unnest(%(channels)s::text[]) AS ch(name)
LEFT JOIN {schema}.saver_blobs b
  ON b.tenant = %(tenant)s AND b.thread_id = %(thread_id)s
 AND b.checkpoint_ns = %(checkpoint_ns)s AND b.channel = ch.name
 AND b.version = chain.channel_versions ->> ch.name
ORDER BY chain.depth"""

CHAIN_WRITES_SQL = """
SELECT checkpoint_id, task_id, task_path, idx, channel, type, blob
FROM {schema}.saver_writes
WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
  AND channel = ANY(%(channels)s) AND checkpoint_id = ANY(%(ids)s)"""

SEED_BLOBS_SQL = """
WITH bl AS MATERIALIZED (
    SELECT b.channel, b.type, b.blob, b.elems
    FROM unnest(%(channels)s::text[], %(versions)s::text[]) AS s(channel, version)
    JOIN {schema}.saver_blobs b
      ON b.tenant = %(tenant)s AND b.thread_id = %(thread_id)s
     AND b.checkpoint_ns = %(checkpoint_ns)s AND b.channel = s.channel AND b.version = s.version
), r AS MATERIALIZED (
    SELECT %(tenant)s::text AS tenant, %(thread_id)s::text AS thread_id,
           unnest(range_agg(int4range(bl.elems[g.i], bl.elems[g.i + 1], '[]'))) AS ids
    FROM bl CROSS JOIN LATERAL generate_series(1, cardinality(bl.elems), 2) AS g(i)
    WHERE bl.elems IS NOT NULL
)
SELECT 'b' AS kind, channel, type, blob, elems, NULL::integer AS elem_id, NULL::bytea AS hash
FROM bl
UNION ALL
SELECT 'e', NULL, e.type, e.blob, NULL, e.elem_id, NULL FROM {loose}
UNION ALL
SELECT 'p', NULL, p.type, p.blob, p.sizes, p.first_id, p.hashes FROM {pages}
""".replace("{loose}", LOOSE_FROM).replace("{pages}", PAGES_FROM)


def delta_history_plan(
    schema: str, serde: SerializerProtocol, tenant: str, where: Target, channels: Sequence[str]
) -> Plan[dict[str, DeltaChannelHistory]]:
    """Per channel: the writes on the path from the nearest stored value to the target
    (oldest first, each checkpoint's in ``writes_sort_key`` order) and that value as seed."""
    names = list(dict.fromkeys(channels))
    if not names:
        return {}
    params: dict[str, Any] = {
        "tenant": tenant,
        "thread_id": where.thread_id,
        "checkpoint_ns": where.checkpoint_ns,
        "checkpoint_id": where.checkpoint_id,
        "channels": names,
    }
    rows = yield Query(render(CHAIN_SQL, schema), params)
    path: dict[str, list[str]] = {c: [] for c in names}  # newest ancestor first
    seed_version: dict[str, str] = {}
    seed_inline: dict[str, Any] = {}
    done: set[str] = set()
    for row in rows or []:
        channel = row["channel"]
        if row["depth"] == 0 or channel in done:
            continue  # the target's own writes are pending for its next step
        path[channel].append(row["checkpoint_id"])
        if row["blob_type"] is not None and row["blob_type"] != codec.EMPTY_TYPE:
            seed_version[channel] = row["version"]
            done.add(channel)
        else:
            inline = unpack_json(row["body"]).get("channel_values") or {}
            if channel in inline:
                seed_inline[channel] = inline[channel]
                done.add(channel)
    ids = sorted({cid for cids in path.values() for cid in cids})
    writes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if ids:
        found = yield Query(render(CHAIN_WRITES_SQL, schema), {**params, "ids": ids})
        for w in found or []:
            writes.setdefault((w["channel"], w["checkpoint_id"]), []).append(w)
    seeds: dict[str, Any] = dict(seed_inline)
    if seed_version:
        found = yield Query(
            render(SEED_BLOBS_SQL, schema),
            {
                **params,
                "channels": list(seed_version),
                "versions": list(seed_version.values()),
            },
        )
        elements = ReadElements()
        for r in found or []:
            if r["kind"] in ("e", "p"):
                elements.add_row(r, "elem_id")
        for r in found or []:
            if r["kind"] == "b":
                seeds[r["channel"]] = codec.decode_value(
                    serde, r["type"], r["blob"], r["elems"], elements
                )
    result: dict[str, DeltaChannelHistory] = {}
    for channel in names:
        collected: list[PendingWrite] = []
        for cid in reversed(path[channel]):
            collected.extend(codec.load_writes(serde, writes.get((channel, cid), [])))
        entry: DeltaChannelHistory = {"writes": collected}
        if channel in seeds:
            entry["seed"] = seeds[channel]
        result[channel] = entry
    return result


# Every ancestor of one checkpoint, with the channels it has a version of and whether a
# non-empty blob holds that version (inline values are in the body).
ANCESTRY_SQL = """
WITH RECURSIVE chain AS (
    SELECT checkpoint_id, parent_checkpoint_id, channel_versions, body, 0 AS depth
    FROM {schema}.saver_checkpoints
    WHERE thread_id = %(thread_id)s AND checkpoint_ns = %(checkpoint_ns)s
      AND checkpoint_id = %(checkpoint_id)s
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.channel_versions, c.body, chain.depth + 1
    FROM chain JOIN {schema}.saver_checkpoints c
      ON c.thread_id = %(thread_id)s AND c.checkpoint_ns = %(checkpoint_ns)s
     AND c.checkpoint_id = chain.parent_checkpoint_id
)
SELECT chain.checkpoint_id, chain.depth, chain.body,
       ARRAY(SELECT v.key FROM jsonb_each_text(chain.channel_versions) AS v
             JOIN {schema}.saver_blobs b
               ON b.thread_id = %(thread_id)s AND b.checkpoint_ns = %(checkpoint_ns)s
              AND b.channel = v.key AND b.version = v.value AND b.type <> 'empty')
           AS stored,
       ARRAY(SELECT jsonb_object_keys(chain.channel_versions)) AS versioned
FROM chain ORDER BY chain.depth"""


def replay_ancestors_plan(
    schema: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str
) -> Plan[set[str]]:
    """The ancestors a checkpoint needs to rebuild its DeltaChannels: for each channel it has
    a version of but no stored value, every ancestor back to (and with) the nearest one that
    stores a value for it. Pruning keeps these, so pruned threads still load the same state.
    """
    params = {
        "thread_id": thread_id,
        "checkpoint_ns": checkpoint_ns,
        "checkpoint_id": checkpoint_id,
    }
    rows = yield Query(render(ANCESTRY_SQL, schema), params)
    chain = []
    for row in rows or []:
        inline = unpack_json(row["body"]).get("channel_values") or {}
        chain.append((row["checkpoint_id"], set(row["stored"]) | set(inline), row["versioned"]))
    if not chain:
        return set()
    _, head_stored, head_versioned = chain[0]
    keep: set[str] = set()
    for channel in set(head_versioned) - head_stored:
        for cid, stored, _ in chain[1:]:
            keep.add(cid)
            if channel in stored:
                break
    return keep
