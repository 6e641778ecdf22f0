"""The vector side of the ranked search statement (``_search_sql.search_ranked``): each
retriever's vector candidates with their cosines (the HNSW walk, the filtered walk, the exact
scans of a filter's items and of a namespace's vectors) and the namespace's size counted for
its verdict. ``{s}`` is the (validated) schema name; alias ``v`` is store_vectors, ``i``
store_items."""

from __future__ import annotations

# Each vector branch returns its rows' cosine (column ``vcos``), computed from the vector it
# read: the scoring step then probes store_vectors again only for keyword candidates (3 buffer
# hits and a subplan per candidate, 150 of a namespace search's 505 buffers at 20k items).
# An item with several vectors keeps its best one (``cand``); the exact branches see all of
# an item's vectors nearer than its farthest candidate, so that is the item's best; a walk of
# the HNSW index may miss a nearer field of an item it found, as it may miss an item.
DISTANCE = "v.embedding <=> %(qv)s::vector"


def _with_cos(columns: str, distance: str) -> str:
    return f"{columns}, 1 - ({distance}) AS vcos"


def vectors_ann(s: str, columns: str, where: str) -> str:
    # The ORDER BY repeats the parameter so the planner can use the HNSW index.
    return f"""SELECT {_with_cos(columns, DISTANCE)} FROM {s}.store_vectors AS v
    JOIN {s}.store_items AS i ON i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key
    WHERE {where}
    ORDER BY v.embedding <=> %(qv)s::vector
    LIMIT %(k)s"""


# How many nearest vectors a filtered HNSW scan may walk: pgvector's default
# hnsw.max_scan_tuples, where its iterative scan stops anyway. A walk that finds fewer than k
# matches is redone exactly (_search_plan.search_plan).
FILTERED_SCAN_ROWS = 20000


def vectors_ann_filtered(s: str, columns: str, where: str, gate: str = "TRUE") -> str:
    # A large filtered scope: the nearest vectors from the HNSW index (iterative scan), each
    # checked against the filter by one primary-key probe of its item, until k match. Written
    # as a lateral probe under a LIMIT so the planner cannot turn it into the exact plan: for
    # a filter it misjudges the matches (tens for ~5,000 at 100k) and scored every match,
    # one vector probe each (36 ms at 100k, 5%; bench/RESULTS.md, issue 14 search).
    # ``gate`` is a one-time filter that keeps the index scan from starting at all. Naming the
    # tenant here made the planner sort all its vectors (3x the CPU, bench/RESULTS.md issue 28).
    return f"""SELECT {_with_cos(columns, "v.d")} FROM (
        SELECT v.tenant, v.prefix, v.key, {DISTANCE} AS d FROM {s}.store_vectors AS v
        WHERE {gate}
        ORDER BY v.embedding <=> %(qv)s::vector
        LIMIT {FILTERED_SCAN_ROWS}
    ) AS v
    JOIN LATERAL (SELECT * FROM {s}.store_items AS i
                  WHERE i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key
                    AND {where} LIMIT 1) AS i ON true
    LIMIT %(k)s"""


def vectors_of_items(s: str, columns: str, where: str) -> str:
    # Exact: the matching items first, then their vectors. "+ 0" keeps the planner off the
    # HNSW index (an HNSW scan would walk past most of the graph to find a few items).
    return f"""SELECT {_with_cos(columns, DISTANCE)} FROM {s}.store_vectors AS v
    JOIN {s}.store_items AS i ON i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key
    WHERE {where}
    ORDER BY ({DISTANCE}) + 0
    LIMIT %(k)s"""


def vectors_of_namespace(s: str, columns: str, where: str) -> str:
    # Exact, for a small namespace: its vectors' distances first (the CTE ``nv``: one
    # index-only scan of store_vectors_namespace_idx, (tenant, prefix, key, field) carrying the
    # embedding: a user's vectors lie together in its leaves, about four to a page, where the
    # heap holds them one per page as users' items arrive interleaved; store_vectors/0004. A
    # namespace names its tenant, or the scan walks each tenant's range; narrow rows, sorted),
    # then the items of the nearest, in that order, until k match. Same rows and order as
    # vectors_of_items.
    # LIMIT 1 (one item per key anyway) keeps the planner from flattening the lateral into a
    # hash join of every item of the namespace (4.5 ms at 1,000 items): one primary-key probe
    # per nearest vector, stopping at k.
    return f"""SELECT {_with_cos(columns, "nv.d")} FROM nv
    JOIN LATERAL (SELECT * FROM {s}.store_items AS i
                  WHERE i.tenant = nv.tenant AND i.prefix = nv.prefix AND i.key = nv.key
                    AND {where} LIMIT 1) AS i ON true
    ORDER BY nv.d
    LIMIT %(k)s"""


# Written for a generic plan too (_search_plan.search_plan): the range of prefixes is spelled out
# (LIKE with a parameter cannot bound an index scan), and the distances are sorted outside an
# unflattened subquery (OFFSET 0), so the sort cannot be served by the HNSW index: with sorts
# disabled that plan walked the store's whole graph for the namespace's vectors (29,470
# buffers at 20k items instead of 205).
# Gated by the namespace's verdict (``small``), so a large namespace's vectors are not all
# read and sorted for the exact branch it gates off (20,000 vectors, 930 buffers for
# ("mem",) at 20k items, at every first search of the minute; issue 26).
# Two branches when the store has store_vectors_namespace_idx (namespace_key_bytes): the rows
# whose key fits beside the vector in a B-tree entry, from that index (index-only), and the
# rest, from the small index of long keys (store_vectors/0004); their conditions are the
# indexes' own predicates, written out, so the planner can use each.
_NAMESPACE_VECTORS = """
nv AS MATERIALIZED (
    SELECT * FROM ({branches}
        OFFSET 0) AS v
    ORDER BY d
),"""
_NAMESPACE_BRANCH = """
        SELECT v.tenant, v.prefix, v.key, v.embedding <=> %(qv)s::vector AS d
        FROM {s}.store_vectors AS v
        WHERE (SELECT yes FROM small) AND {tenant}v.prefix >= %(ns)s AND v.prefix < %(ns_end)s
          AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s){fits}"""

# A B-tree entry holds at most 2,704 bytes (BTMaxItemSize, 8 kB pages): the vector (4 bytes a
# dimension and 8 of header), the four key columns' headers, the entry's header and alignment
# (48 bytes, rounded up) leave this many for the key columns' text. Below 256 bytes (vectors of
# about 600 dimensions and more) the store has no namespace index. The bound is written into
# the indexes' predicates by store_vectors/0004: a new bound needs a migration that remakes
# them (with another, the search stays right, its branches cover every row, but slow).
_BTREE_MAX_ENTRY = 2704
_ENTRY_OVERHEAD = 48
_MIN_KEY_BYTES = 256
_KEY_LENGTH = (
    "octet_length(v.tenant) + octet_length(v.prefix) + octet_length(v.key) + octet_length(v.field)"
)


def namespace_key_bytes(dims: int) -> int:
    """Bytes of key text (tenant, prefix, key, field together) a vector of ``dims`` leaves in
    an entry of store_vectors_namespace_idx; 0 when too few to have the index (store_vectors/0004
    is rendered with it: rows with longer keys go to the index of long keys instead).

    >>> namespace_key_bytes(384), namespace_key_bytes(1536)
    (1112, 0)
    """
    room = _BTREE_MAX_ENTRY - _ENTRY_OVERHEAD - 4 * dims - 8
    return room if room >= _MIN_KEY_BYTES else 0


def namespace_branches(branch: str, s: str, tenant: str, key_bytes: int, covered: str = "") -> str:
    """``branch`` once per index holding the namespace's vectors (see _NAMESPACE_BRANCH);
    ``covered``: a condition more on the rows of store_vectors_namespace_idx."""
    if not key_bytes:
        return branch.format(s=s, tenant=tenant, fits="")
    fits = f"\n          AND {_KEY_LENGTH} <= {int(key_bytes)}{covered}"
    long = f"\n          AND {_KEY_LENGTH} > {int(key_bytes)}"
    return (
        branch.format(s=s, tenant=tenant, fits=fits)
        + "\n        UNION ALL"
        + branch.format(s=s, tenant=tenant, fits=long)
    )


def namespace_vectors(s: str, tenant: str, key_bytes: int) -> str:
    return _NAMESPACE_VECTORS.format(
        branches=namespace_branches(_NAMESPACE_BRANCH, s, tenant, key_bytes)
    )


# A namespace's vectors, counted for its verdict before its items (search_ranked): from the
# leaves the exact branch then reads (a cold search reads them once), so a namespace with
# few enough vectors is known small without store_items. Counting its items alone (as
# before) read the primary key's range, 11-25 scattered leaves at 1M items, and a heap page
# per item on pages not marked all-visible (every page of store_items after store/0007
# rewrote it, or beside an erased user's rows: up to 1,000 blocks, 20-33 ms of a cold
# search; bench/RESULTS.md, issue 28 session 12). The embedding named keeps the count
# on the index that holds it (the primary key is narrower, and the planner took it).
NAMESPACE_VECTOR_ROWS = """
        SELECT 1 FROM {s}.store_vectors AS v
        WHERE {tenant}v.prefix >= %(ns)s AND v.prefix < %(ns_end)s
          AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s){fits}"""
COVERED = "\n          AND vector_dims(v.embedding) > 0"


# Items in a namespace, by a range of the primary key (tenant, prefix, key) when the namespace
# names its tenant (index-only once vacuumed).
NAMESPACE_ITEMS = """SELECT 1 FROM {s}.store_items AS i
    WHERE {tenant}i.prefix >= %(ns)s AND i.prefix < %(ns_end)s
      AND (i.prefix = %(ns)s OR i.prefix LIKE %(ns_like)s)"""
