"""The statements of a search without a query: the newest matching items first. ``{s}`` is the
(validated) schema name; every value travels as a query parameter."""

from __future__ import annotations

from langmem_vault.store._sql import ITEM_COLUMNS


def search_recent(s: str, where: str) -> str:
    """Every namespace's matching items, newest first (a search without a namespace)."""
    return f"""
SELECT {ITEM_COLUMNS} FROM {s}.store_items AS i
WHERE {where}
ORDER BY i.updated_at DESC, i.prefix, i.key
LIMIT %(limit)s OFFSET %(offset)s"""


def search_recent_in(s: str, where: str) -> str:
    """A namespace's matching items (``%(ns)s`` and the namespaces under it), newest first.

    Two branches, each an ordered walk of ``store_items_prefix_updated_idx`` cut at
    offset + limit: the namespace itself (``prefix = ns``: the index's order is the search's
    order) and its sub-namespaces (a range of prefixes, merged and cut). One ``prefix = ns OR
    prefix LIKE ...`` clause could use neither walk: it read the global ``updated_at`` index
    and skipped every newer row of other namespaces (store/0003)."""

    def branch(scope: str) -> str:
        return f"""(SELECT {ITEM_COLUMNS}, i.prefix FROM {s}.store_items AS i
    WHERE {scope} AND {where}
    ORDER BY i.updated_at DESC, i.prefix, i.key
    LIMIT %(limit)s + %(offset)s)"""

    below = "i.prefix > %(ns)s AND i.prefix < %(ns_end)s AND i.prefix LIKE %(ns_like)s"
    return f"""
SELECT * FROM (
    {branch("i.prefix = %(ns)s")}
    UNION ALL
    {branch(below)}
) AS i
ORDER BY i.updated_at DESC, i.prefix, i.key
LIMIT %(limit)s OFFSET %(offset)s"""
