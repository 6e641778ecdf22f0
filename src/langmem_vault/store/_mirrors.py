"""Searches whose results come with their mirror items, read in the search's own statement.

A *mirror* of an item at ``(namespace, key)`` is the item at ``(*root, *namespace)``, same
key: records kept beside items under a namespace that mirrors theirs (memory usage records,
``memory.usage``). Reading them with a batch of gets after the search costs a second round
trip; a :class:`MirrorSearchOp` instead returns each result with its mirror (None when
absent or expired), joined in the search's statement. The results are the search's own: the
same items, scores and order as the ``SearchOp`` alone. Mirrors are read as a
``GetOp(refresh_ttl=False)`` reads them; the search's ``refresh_ttl`` applies to its results.

VaultStore and AsyncVaultStore run it in ``batch``, beside any other ops; other stores do not
know it (check with :func:`runs_mirror_search`).

>>> from langgraph.store.base import SearchOp
>>> op = MirrorSearchOp(SearchOp(("memories", "u1")), mirror=("usage",))
>>> op.search.namespace_prefix, op.mirror
(('memories', 'u1'), ('usage',))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from langgraph.store.base import Item, SearchItem, SearchOp

from langmem_vault.store._sql import tenant_of
from langmem_vault.store._validation import InvalidValueError, check_namespace

__all__ = ["MirrorSearchOp", "Mirrored", "mirrored_sql", "runs_mirror_search"]

NOT_EXPIRED = "(m.expires_at IS NULL OR m.expires_at > now())"


class MirrorSearchOp(NamedTuple):
    """``search``, each result with the item at ``(*mirror, *result.namespace)``, same key.

    Its result in ``batch`` is a list of :class:`Mirrored`, in the search's order.
    """

    search: SearchOp
    mirror: tuple[str, ...]


class Mirrored(NamedTuple):
    """One result of a :class:`MirrorSearchOp`: the search's item and its mirror, or None;
    with a query, the two parts of the item's score (``store.ranking``): ``vector``, the
    cosine similarity (None on a keyword-only store), and ``keyword``, the query's weighted
    keyword coverage, so a caller can rank by each on its own (rank fusion)."""

    item: SearchItem
    mirror: Item | None
    vector: float | None = None
    keyword: float | None = None


def runs_mirror_search(store: object) -> bool:
    """Whether ``store.batch`` runs :class:`MirrorSearchOp` (VaultStore, AsyncVaultStore).

    Read from the class, not the instance: a wrapper that forwards attributes to the store it
    wraps (``AuditedStore``) does not pass the op on, nor log it, so it must opt in itself.

    >>> from langgraph.store.memory import InMemoryStore
    >>> runs_mirror_search(InMemoryStore())
    False
    """
    return getattr(type(store), "supports_mirror_search", False) is True


def check_mirror(op: MirrorSearchOp) -> None:
    """The op's own checks (its search is checked as any search is)."""
    if not isinstance(op.search, SearchOp):
        raise InvalidValueError(f"MirrorSearchOp.search must be a SearchOp, got {op.search!r}")
    if not isinstance(op.mirror, tuple) or not op.mirror:
        # an empty root would make every item its own mirror
        raise InvalidValueError(
            f"MirrorSearchOp.mirror must be a non-empty namespace tuple, got {op.mirror!r}"
        )
    check_namespace(op.mirror)


def mirror_params(root: tuple[str, ...], tenants: Iterable[str | None]) -> dict[str, str]:
    """The parameters of :func:`mirrored_sql`: the mirror root's prefix, with its dot, and
    ``mirror_tenant`` when ``tenants`` (the tenants of the mirrors' namespaces, None where the
    caller cannot tell) name one tenant only."""
    params = {"mirror_root": ".".join(root) + "."}
    found = set(tenants)
    if len(found) == 1 and None not in found:
        params["mirror_tenant"] = str(found.pop())
    return params


def mirrored_sql(s: str, search: str, params: Mapping[str, Any]) -> str:
    """A search statement's rows, each with its mirror's columns (``mirror_*``, NULL when
    there is none), in the statement's order; ``params`` are :func:`mirror_params`'.

    The search stays a subquery with its own ORDER BY and LIMIT (every search statement has
    them, so the planner keeps it whole: its plan is unchanged), and each row probes the
    primary key once. LIMIT 1 keeps the lateral from being flattened into a join the planner
    could run as a hash join, which need not keep the rows' order; a nested loop over the
    subquery does.

    The probe names its tenant (the key leads with it): the constant ``mirror_tenant`` when
    every mirror has the same one, as in one user's search. Otherwise each row's is computed
    by the schema's ``tenant_of``, a CASE over the tenant templates that costs planning time
    and about 5 us a row (inject's read of 50 facts without a message: 0.25 ms of execution
    with the constant, 0.55 with the CASE; bench/RESULTS.md, issue 24 session 9).
    """
    if "mirror_tenant" in params:
        tenant = "%(mirror_tenant)s"
    else:
        tenant = tenant_of(s, "%(mirror_root)s::text || array_to_string(r.namespace, '.')")
    return f"""
SELECT r.*, m.value AS mirror_value, m.created_at AS mirror_created_at,
       m.updated_at AS mirror_updated_at
FROM ({search}) AS r
LEFT JOIN LATERAL (
    SELECT m.value, m.created_at, m.updated_at FROM {s}.store_items AS m
    WHERE m.tenant = {tenant}
      AND m.prefix = %(mirror_root)s::text || array_to_string(r.namespace, '.')
      AND m.key = r.key AND {NOT_EXPIRED}
    LIMIT 1
) AS m ON true"""


def score_parts_of(row: dict[str, Any]) -> tuple[float | None, float | None]:
    """The cosine and keyword coverage of a search row (None where it has none: a search
    without a query, an un-indexed item)."""
    if row.get("score") is None:
        return None, None
    cos, coverage = row.get("cos"), row.get("coverage")
    return (None if cos is None else float(cos)), (None if coverage is None else float(coverage))


def mirror_of(row: dict[str, Any], mirror: tuple[str, ...]) -> Item | None:
    """The mirror item in a row of :func:`mirrored_sql`."""
    if row["mirror_created_at"] is None:
        return None
    return Item(
        value=row["mirror_value"],
        key=row["key"],
        namespace=(*mirror, *row["namespace"]),
        created_at=row["mirror_created_at"],
        updated_at=row["mirror_updated_at"],
    )
