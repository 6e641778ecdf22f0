"""The settings a search runs under: pgvector's HNSW settings, and the planner settings that keep
a prepared search (ranked or newest-first) on the generic plan it is written for, saved and
restored around it."""

from __future__ import annotations


def hnsw_settings(ef: int) -> tuple[str, str]:
    """pgvector 0.8's settings for a search with ``ef`` candidates: keep scanning the HNSW graph
    until enough rows pass the filters (without it, a filtered search returns fewer rows than
    asked for: pgvector #216), and widen the beam to the candidates we want.

    Sent as ``SET LOCAL`` commands before the search, in its transaction (a read-only batch's
    is the implicit one of its pipeline, which ends with it: nothing stays on the pooled
    connection), not as ``set_config()`` calls: Citus carries ``SET LOCAL`` to the workers
    that run the search (``citus.propagate_set_commands = 'local'``), never a function call
    (docs/citus.md). ``ef`` is a computed int, written as a constant (SET takes no
    parameters).

    >>> hnsw_settings(50)[1]
    'SET LOCAL hnsw.ef_search = 50'
    """
    return (
        "SET LOCAL hnsw.iterative_scan = relaxed_order",
        f"SET LOCAL hnsw.ef_search = {int(ef)}",
    )


# The settings of a plain search (no filter; no scope small enough to score exactly), whose
# statement is the same for every query: run it with its generic plan, as a prepared statement,
# so it is not planned again on every search (0.7-1 ms at 100k items, 40% of its database time).
# Postgres would not choose that plan itself: without the query it guesses that the namespace
# clause keeps 1.5% of the rows, and the generic plan costs more than the custom ones it saw.
# It needs the candidate LIMITs written as constants (``literal_k``): with LIMIT $n Postgres
# assumes a tenth of the rows and sorts every vector instead (about 300 ms per search). Only
# pages whose k is the store's default candidate count take this path (k is then one number,
# so there are two such statements per store: plain, and a namespace's, whose size the
# statement counts or is told: search_ranked), so a caller paging with many sizes does
# not fill each connection with cached generic plans (about 0.5 MB each).
# The generic plan is made once per connection, from whatever statistics the tables have then,
# and kept until they change: made on a small table, or with the 1.5% guess, the cheapest plan
# sorted every vector of the scope (20k items: 20,000 distances and a hash join of every item,
# 8x PostgresStore, issue 26) or scanned the table per keyword level. So it is planned with
# sorts, sequential scans, hash and merge joins disabled (PLAIN_PLAN_SETTINGS): the only plan
# left is the one the statement is written for at any size (HNSW walk with a primary-key
# probe per candidate, keyword levels from the GIN index, probes for the exact cosines); the
# sorts it cannot do without (the candidates' DISTINCT ON, the page's ORDER BY) stay.
# The settings are local to the transaction, which later statements may share (a batch's other
# searches, in the same pipeline): the current values are saved first (the subquery runs
# before the outer set_config) and RESTORE_PLAN_MODE, sent right after the search, puts them
# back.
# No parallel workers either (NO_PARALLEL, in both plan settings): a generic plan is costed for
# no value in particular, and at 1M items in 64 partitions without the HNSW index (the bench's
# databases) it put the large namespace's vector branch, gated off by the namespace's verdict,
# under a Gather. Gather starts its workers before the gate, inside them, finds nothing to do:
# 20 ms of a 27 ms search, at every search (bench/RESULTS.md, issue 28 session 12). These
# statements read one user's rows by index; starting a worker costs more than any of them.
NO_PARALLEL = ("max_parallel_workers_per_gather", "0")
PLAIN_PLAN_SETTINGS = (
    ("plan_cache_mode", "force_generic_plan"),
    NO_PARALLEL,
    ("enable_sort", "off"),
    ("enable_seqscan", "off"),
    ("enable_hashjoin", "off"),
    ("enable_mergejoin", "off"),
)


def plan_settings(settings: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """The statement that sets the planner ``settings`` (name, value) for the rest of the
    transaction, saving the current values first (the subquery runs before the outer
    set_config), and the one that puts them back.

    >>> on, off = plan_settings((("enable_sort", "off"),))
    >>> off
    "SELECT set_config('enable_sort', current_setting('langmem_vault.enable_sort'), true)"
    """
    saved = ", ".join(
        f"set_config('langmem_vault.{name}', current_setting('{name}'), true)"
        for name, _ in settings
    )
    values = ", ".join(f"set_config('{name}', '{value}', true)" for name, value in settings)
    restore = ", ".join(
        f"set_config('{name}', current_setting('langmem_vault.{name}'), true)"
        for name, _ in settings
    )
    return f"SELECT {values} FROM (SELECT {saved}) AS saved", f"SELECT {restore}"


PLAIN_SEARCH_SETTINGS, RESTORE_PLAN_MODE = plan_settings(PLAIN_PLAN_SETTINGS)


def literal_k(statement: str, k: int) -> str:
    """``statement`` with its candidate count ``%(k)s`` written as a constant (see
    PLAIN_SEARCH_SETTINGS); k is a computed int, never user text.

    >>> literal_k("LIMIT %(k)s OFFSET %(wanted)s", 50)
    'LIMIT 50 OFFSET %(wanted)s'
    """
    return statement.replace("%(k)s", str(int(k)))


# A namespace's newest-first read (search_recent_in) runs on its generic plan, prepared: inject
# sends two or three every turn (instructions, episodes; the newest facts without a message),
# and Postgres custom-planned the instructions' and episodes' on every call (0.2-0.6 ms
# each, more than the read; dearer with the tenant conditions: bench/RESULTS.md, issue 28
# session 10): the generic plan's guesses cost more than the custom plans it saw. (The
# private read, on store_items_private_idx, settles on its generic plan by itself and is
# not run under these settings: that index's ties need a sort by key.)
# The plan wanted holds at any size: walk the namespace's rows in
# store_items_prefix_updated_idx, in the page's order, and stop at the page; the
# sub-namespaces' range is read from the prefix indexes and sorted. A generic plan is made
# once per connection from whatever statistics the table has then, and its guesses (a filter
# on an unknown value keeps almost nothing) made it walk the global updated_at index through
# every user's rows (120 buffers for 10 instructions at 12k items, 12 walking the
# namespace), AND the whole table's jsonb GIN postings with the namespace's rows, or, on a
# small table, scan it and sort. With sorts, bitmap scans (the only way to a GIN index) and
# sequential scans disabled, the ordered walk is the plan left. With partitions, the tenant
# is pruned at run time (the plan holds every partition; only the tenant's is read), and a
# connection's first run plans every partition (80 ms at 64: bench/RESULTS.md).
RECENT_PLAN_SETTINGS = (
    ("plan_cache_mode", "force_generic_plan"),
    NO_PARALLEL,
    ("enable_sort", "off"),
    ("enable_incremental_sort", "off"),
    ("enable_bitmapscan", "off"),
    ("enable_seqscan", "off"),
)
RECENT_READ_SETTINGS, RESTORE_RECENT_PLAN = plan_settings(RECENT_PLAN_SETTINGS)
