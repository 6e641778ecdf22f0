"""Re-embedding a store's vectors with its current embeddings, in place (after a change of
embedding model: another model of the same dimensions, or the ONNX export of the torch one).

The store is read a page of vector rows at a time, in primary-key order (prefix, key, field),
each with its item's value and ``updated_at``. Each row's text is taken from the value again,
by the field the row was indexed under; the texts are embedded in one call; one statement
writes the page's vectors back, skipping rows whose item changed since the page was read (a
put has re-embedded it already). Items keep their value and ``updated_at``, so "newest
first" orders do not move, and keyword search is untouched. A re-run does the same work
again, so a crash halfway needs only a re-run.

:func:`reembed_steps` is the one body; ``VaultStore.reembed`` and
``AsyncVaultStore.reembed`` drive it (a step is a database plan or an :class:`EmbedTexts`).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langmem_vault.db.runner import Plan, Query
from langmem_vault.store.plans import Vector, _like_prefix, _texts, prefix_of
from langmem_vault.store.validation import check_namespace

__all__ = ["EmbedTexts", "ReembedSteps", "reembed_steps"]

DEFAULT_PAGE = 256


@dataclass(frozen=True, slots=True)
class EmbedTexts:
    """A step of :func:`reembed_steps`: embed these texts (``embed_documents``), send back
    the vectors."""

    texts: list[str]


ReembedSteps = Generator["Plan[Any] | EmbedTexts", Any, int]

_PAGE = """
SELECT v.prefix, v.key, v.field, i.value, i.updated_at
FROM {s}.store_vectors AS v JOIN {s}.store_items AS i USING (prefix, key)
WHERE (v.prefix, v.key, v.field) > (%(prefix)s, %(key)s, %(field)s) {scope}
ORDER BY v.prefix, v.key, v.field
LIMIT %(limit)s"""

_SCOPE = "AND (v.prefix = %(ns)s OR v.prefix LIKE %(ns_like)s)"

_WRITE = """
UPDATE {s}.store_vectors AS v SET embedding = u.embedding::vector
FROM unnest(%(prefixes)s::text[], %(keys)s::text[], %(fields)s::text[],
            %(embeddings)s::text[], %(stamps)s::timestamptz[])
    AS u(prefix, key, field, embedding, updated_at)
JOIN {s}.store_items AS i ON i.prefix = u.prefix AND i.key = u.key
WHERE v.prefix = u.prefix AND v.key = u.key AND v.field = u.field
  AND i.updated_at = u.updated_at"""

# "tags.2": the third text of a list at path "tags" (see plans._texts, which names them so).
_ELEMENT = re.compile(r"^(?P<path>.+)\.\d+$")


def _text_of(value: dict[str, Any], field: str) -> str | None:
    """The text a vector row named ``field`` was made from, read from ``value`` again."""
    match = _ELEMENT.match(field)
    paths = [field, match.group("path")] if match else [field]
    for name, text in _texts(value, paths):
        if name == field:
            return text
    return None  # the value no longer holds it: the row stays as it is


def _page_plan(schema: str, params: dict[str, Any]) -> Plan[list[dict[str, Any]]]:
    scope = _SCOPE if "ns" in params else ""
    rows = yield Query(_PAGE.format(s=schema, scope=scope), params)
    return rows or []


def _write_plan(schema: str, params: dict[str, Any]) -> Plan[int]:
    rows = yield Query(_WRITE.format(s=schema) + "\nRETURNING 1", params)
    return len(rows or [])


def reembed_steps(
    schema: str, namespace_prefix: tuple[str, ...] = (), *, page: int = DEFAULT_PAGE
) -> ReembedSteps:
    """Re-embed every vector under ``namespace_prefix`` (all when empty); returns how many
    rows were written. Sends: a plan's result for a plan, the vectors for an
    :class:`EmbedTexts`."""
    if page < 1:
        raise ValueError(f"page must be >= 1, got {page!r}")
    params: dict[str, Any] = {"prefix": "", "key": "", "field": "", "limit": page}
    if namespace_prefix:
        check_namespace(tuple(namespace_prefix))
        params["ns"] = prefix_of(tuple(namespace_prefix))
        params["ns_like"] = _like_prefix(params["ns"])
    written = 0
    while True:
        rows: list[dict[str, Any]] = yield _page_plan(schema, dict(params))
        targets: list[tuple[str, str, str, datetime, str]] = []
        for row in rows:
            text = _text_of(row["value"], row["field"])
            if text is not None:
                targets.append((row["prefix"], row["key"], row["field"], row["updated_at"], text))
        if targets:
            vectors = yield EmbedTexts([t[4] for t in targets])
            written += yield _write_plan(
                schema,
                {
                    "prefixes": [t[0] for t in targets],
                    "keys": [t[1] for t in targets],
                    "fields": [t[2] for t in targets],
                    "embeddings": [Vector(v).to_text() for v in vectors],
                    "stamps": [t[3] for t in targets],
                },
            )
        if len(rows) < page:
            return written
        last = rows[-1]
        params.update(prefix=last["prefix"], key=last["key"], field=last["field"])
