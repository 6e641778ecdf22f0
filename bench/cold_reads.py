"""Pages one user's namespace search reads from disk, cold (issue 28): counts, not timings.

For each asked user, the server restarts with its files out of the OS cache; a search of a
sacrificial user (the same every time) records the statements a search sends and warms what
every search shares (catalog, index roots); the recorded statements then run again for the
asked user (its labels in place of the sacrificial user's) under EXPLAIN (ANALYZE, BUFFERS):
the blocks each scan read from disk are that user's own cold reads.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import psycopg


def _for_user(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_for_user(v, old, new) for v in value]
    return value


def _scans(node: dict[str, Any]) -> list[dict[str, Any]]:
    # scans of a table or an index (a CTE or subquery scan counts its CTE's blocks again)
    own = [node] if "Relation Name" in node or "Index Name" in node else []
    return own + [n for child in node.get("Plans", []) for n in _scans(child)]


def reads(
    conn: psycopg.Connection[Any], statements: list[tuple[Any, Any]], old: str, new: str
) -> Counter[str]:
    """Blocks read from disk by each scan of ``statements`` for ``new`` (by index, or by
    table for its heap); the settings statements run first, in a transaction rolled back."""
    found: Counter[str] = Counter()
    settings: list[tuple[str, Any]] = []
    for query, params in statements:
        text = query if isinstance(query, str) else query.as_string(conn)
        stripped = text.lstrip()
        params = {k: _for_user(v, old, new) for k, v in (params or {}).items()}
        if "set_config" in stripped[:80] or stripped.upper().startswith("SET "):
            settings.append((text, params))
            continue
        if not stripped.upper().startswith(("SELECT", "WITH")) or "current_setting(" in text[:300]:
            continue
        with conn.transaction(force_rollback=True):
            for s_text, s_params in settings:
                conn.execute(s_text, s_params)
            row = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {text}", params).fetchone()
        assert row is not None
        plan = row[0][0] if isinstance(row[0], list) else json.loads(row[0])[0]
        for scan in _scans(plan["Plan"]):
            # a scan's blocks include its children's (a bitmap heap scan's index); leaves only
            own = scan.get("Shared Read Blocks", 0) - sum(
                c.get("Shared Read Blocks", 0) for c in scan.get("Plans", [])
            )
            if own:
                found[scan.get("Index Name") or scan["Relation Name"]] += own
        settings = []
    return found
