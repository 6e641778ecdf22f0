"""Re-embedding a store's vectors with its current embeddings, in place (after a change of
embedding model: another model of the same dimensions, or the ONNX export of the torch one).

The store is read a page of vector rows at a time, in primary-key order (tenant, prefix, key,
field), each with its item's value: each page is one range of the key's index (of each
partition, on a partitioned store), and under a namespace prefix that names a user, of that
user's tenant only. Each row's text is taken from the value again, by the field the
row was indexed under; the texts are embedded in one call; one statement writes the page's
vectors back, but only where the item's value is still the one read: a put that changed it
meanwhile (a new text, or a counter-only rewrite that kept the old vector) sends its rows
round again, read afresh, up to :data:`ATTEMPTS` times. Items keep their value and
``updated_at``, so "newest first" orders do not move, and keyword search is untouched. A
re-run does the same work again, so a crash halfway needs only a re-run.

:func:`reembed_steps` is the one body, a generator of the runtime's steps
(:mod:`langmem_vault.db._steps`: a page's plan in a :class:`Transaction` of its own, an
:class:`Embed` call); ``VaultStore.reembed`` and ``AsyncVaultStore.reembed`` run it with
``run_steps`` and ``arun_steps``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from langmem_vault._tenants import DEFAULT_RULE, TenantRule
from langmem_vault.db._connection import AsyncDatabase, Database, Transaction
from langmem_vault.db._runner import Plan, Query
from langmem_vault.db._steps import Embed, Embedder, Steps
from langmem_vault.store._plans import Vector
from langmem_vault.store._prepare import check_vectors, index_texts
from langmem_vault.store._search_plan import namespace_params
from langmem_vault.store._validation import check_namespace

__all__ = ["ATTEMPTS", "DEFAULT_PAGE", "reembed_steps"]

logger = logging.getLogger(__name__)

DEFAULT_PAGE = 256
#: how many times a row whose item keeps changing is read and embedded again
ATTEMPTS = 3


Row = tuple[str, str, str, str]  # tenant, prefix, key, field: a store_vectors primary key

_COLUMNS = "v.tenant, v.prefix, v.key, v.field, i.value, i.value::text AS value_text"

# {scope}: nothing (every row), or a namespace prefix's clause.
_PAGE = f"""
SELECT {_COLUMNS}
FROM {{s}}.store_vectors AS v JOIN {{s}}.store_items AS i USING (tenant, prefix, key)
WHERE (v.tenant, v.prefix, v.key, v.field) > (%(tenant)s, %(prefix)s, %(key)s, %(field)s)
  {{scope}}
ORDER BY v.tenant, v.prefix, v.key, v.field
LIMIT %(limit)s"""

# Under a namespace prefix: its rows' prefixes (within each tenant, the key's range from ns to
# ns_end)...
_SCOPE = "AND v.prefix < %(ns_end)s AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s)"
# ...and, when the prefix names a user, that user's tenant only (one partition, one range).
_TENANT = "AND v.tenant = %(tenant)s "

_AGAIN = f"""
SELECT {_COLUMNS}
FROM unnest(%(tenants)s::text[], %(prefixes)s::text[], %(keys)s::text[], %(fields)s::text[])
    AS u(tenant, prefix, key, field)
JOIN {{s}}.store_vectors AS v
  ON v.tenant = u.tenant AND v.prefix = u.prefix AND v.key = u.key AND v.field = u.field
JOIN {{s}}.store_items AS i ON i.tenant = v.tenant AND i.prefix = v.prefix AND i.key = v.key"""

_WRITE = """
UPDATE {s}.store_vectors AS v SET embedding = u.embedding::vector
FROM unnest(%(tenants)s::text[], %(prefixes)s::text[], %(keys)s::text[], %(fields)s::text[],
            %(embeddings)s::text[], %(values)s::text[])
    AS u(tenant, prefix, key, field, embedding, value_text)
JOIN {s}.store_items AS i ON i.tenant = u.tenant AND i.prefix = u.prefix AND i.key = u.key
WHERE v.tenant = u.tenant AND v.prefix = u.prefix AND v.key = u.key AND v.field = u.field
  AND i.value::text = u.value_text
RETURNING v.tenant, v.prefix, v.key, v.field"""

# "tags.2": the third text of a list at path "tags" (see plans.index_texts, which names them).
_ELEMENT = re.compile(r"^(?P<path>.+)\.\d+$")


def _text_of(value: dict[str, Any], field: str) -> str | None:
    """The text a vector row named ``field`` was made from, read from ``value`` again."""
    match = _ELEMENT.match(field)
    paths = [field, match.group("path")] if match else [field]
    for name, text in index_texts(value, paths):
        if name == field:
            return text
    return None  # the value no longer holds it: the row stays as it is


def _rows_plan(sql: str, params: dict[str, Any]) -> Plan[list[dict[str, Any]]]:
    rows = yield Query(sql, params)
    return rows or []


def _rows(db: Database | AsyncDatabase, sql: str, params: dict[str, Any]) -> Transaction:
    """The rows of one statement, in a transaction of its own."""
    return Transaction(db, _rows_plan(sql, params))


def _columns(rows: list[Row]) -> dict[str, list[str]]:
    return {
        "tenants": [r[0] for r in rows],
        "prefixes": [r[1] for r in rows],
        "keys": [r[2] for r in rows],
        "fields": [r[3] for r in rows],
    }


def _embed_rows(
    db: Database | AsyncDatabase,
    embeddings: Embedder,
    dims: int,
    schema: str,
    rows: list[dict[str, Any]],
) -> Steps[int]:
    """Embed and write ``rows``; a row whose item changed is read again and retried."""
    written = 0
    for _ in range(ATTEMPTS):
        targets = [(r, _text_of(r["value"], r["field"])) for r in rows]
        found = [(r, text) for r, text in targets if text is not None]
        if not found:
            return written
        texts = [text for _, text in found]
        vectors = yield Embed(embeddings, texts)
        check_vectors(vectors, len(texts), dims, "embeddings")
        keys: list[Row] = [_key(r) for r, _ in found]
        params = {
            **_columns(keys),
            "embeddings": [Vector(v).to_text() for v in vectors],
            "values": [r["value_text"] for r, _ in found],
        }
        done = yield _rows(db, _WRITE.format(s=schema), params)
        written += len(done)
        missed = sorted(set(keys) - {_key(d) for d in done})
        if not missed:
            return written
        rows = yield _rows(db, _AGAIN.format(s=schema), _columns(missed))
    if rows:
        logger.warning("reembed: %d vectors kept changing and were left as they were", len(rows))
    return written


def _key(row: dict[str, Any]) -> Row:
    return (row["tenant"], row["prefix"], row["key"], row["field"])


def reembed_steps(
    db: Database | AsyncDatabase,
    embeddings: Embedder,
    dims: int,
    schema: str,
    namespace_prefix: tuple[str, ...] = (),
    *,
    page: int = DEFAULT_PAGE,
    tenants: TenantRule = DEFAULT_RULE,
) -> Steps[int]:
    """Re-embed every vector (of ``dims`` numbers) under ``namespace_prefix`` (all when
    empty) with ``embeddings``; returns how many rows were written. ``tenants``: the store's
    rule, which says whether the prefix names one user."""
    if page < 1:
        raise ValueError(f"page must be >= 1, got {page!r}")
    # ("", "", "", "") precedes every row: prefixes and keys are never empty.
    params: dict[str, Any] = {"tenant": "", "prefix": "", "key": "", "field": "", "limit": page}
    scope = ""
    if namespace_prefix:
        check_namespace(tuple(namespace_prefix))
        params.update(namespace_params(tuple(namespace_prefix)))
        scope = _SCOPE
        tenant = tenants.scope_tenant(tuple(namespace_prefix))
        if tenant is not None:
            # keys are never empty: (tenant, ns, "", "") precedes the scope's rows
            params.update(tenant=tenant, prefix=params["ns"])
            scope = _TENANT + _SCOPE
    sql = _PAGE.format(s=schema, scope=scope)
    written = 0
    while True:
        rows: list[dict[str, Any]] = yield _rows(db, sql, dict(params))
        written += yield from _embed_rows(db, embeddings, dims, schema, rows)
        if len(rows) < page:
            return written
        last = rows[-1]
        params.update(tenant=last["tenant"], prefix=last["prefix"], key=last["key"])
        params["field"] = last["field"]
