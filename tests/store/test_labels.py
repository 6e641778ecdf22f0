"""Labels derived in Python and in SQL (store/_labels.py) agree: the memory statuses
(service/_records.STATUS_RULES) of the edge cases, each judged by ``status_of`` and by the
rule's SQL on a real Postgres, at one ``now``. The timestamps are the ones the two languages
could read differently (no offset, hour 24, a leap second, 7 fractional digits, an impossible
date, words Postgres reads as times), with every rule's other fields around them."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from langmem_vault.service._records import STATUS_RULES, status_of
from langmem_vault.store._labels import Is, Rule, Truthy, label_of, label_sql

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
#: (stored value, whether it is a timestamp at or before NOW)
TIMES: list[tuple[Any, bool]] = [
    ("2026-06-01T12:00:00+00:00", True),  # exactly now: expired
    ("2026-06-01T12:00:00.000001+00:00", False),
    ("2026-06-01T11:59:59.999999Z", True),
    ("2026-06-01T13:30:00+02:00", True),  # 11:30 UTC
    ("2026-06-01T10:30:00-02:00", False),  # 12:30 UTC
    ("2026-06-01T11:00", True),  # no offset: UTC
    ("2026-06-01T12:30", False),
    ("2026-06-01 11:00:00", True),
    ("2026-06-01", True),  # midnight UTC
    ("2026-06-02", False),
    ("2025-01-01T00:00:00+00:00", True),
    ("2099-01-01T00:00:00+00:00", False),
    ("2026-02-30T00:00:00+00:00", False),  # impossible: Python and Postgres both reject it
    ("2026-05-31T24:00:00+00:00", False),  # Postgres would read the next midnight
    ("2026-05-31T23:59:60+00:00", False),  # a leap second
    ("2026-05-31T23:00:00.1234567+00:00", False),  # Postgres rounds, Python truncates
    ("2026-05-31T23:00:00+16:00", False),  # beyond Postgres' offsets
    ("20260531T230000", False),  # ISO basic format: Python reads it
    ("yesterday", False),  # Postgres reads it
    ("epoch", False),
    ("2026-05-31t23:00:00z", False),
    ("", False),
    (None, False),
    (1748779200, False),  # a number is not a timestamp
    (["2025-01-01"], False),
    ({"at": "2025-01-01"}, False),
]
TRUTHY: list[Any] = ["k2", "", None, 0, 1, 0.0, True, False, [], ["k"], {}, {"k": 1}, "0"]
MISSING = object()


def _values() -> list[tuple[str, dict[str, Any]]]:
    """(kind, value) of every edge case: each field's values, crossed with the others'."""
    cases: list[tuple[str, dict[str, Any]]] = []
    stored_status = [MISSING, "active", "pending_confirmation", "superseded", "Superseded", 1]
    for status, by, (valid_to, _) in itertools.product(
        stored_status, [MISSING, *TRUTHY], [(MISSING, False), *TIMES[::3]]
    ):
        cases.append(("semantic", _value(status=status, superseded_by=by, valid_to=valid_to)))
    for valid_to, _ in TIMES:
        cases.append(("semantic", _value(valid_to=valid_to)))
        cases.append(("semantic", _value(valid_to=valid_to, private=True, text="sealed:x")))
    for active, (expires, _) in itertools.product(
        [MISSING, True, False, 0, "false", None], [(MISSING, False), *TIMES]
    ):
        cases.append(("instruction", _value(active=active, expires_at=expires)))
    cases += [("episode", {}), ("episode", {"status": "superseded", "valid_to": "2020-01-01"})]
    return cases


def _value(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not MISSING}


def _sql_labels(pg_uri: str, cases: list[tuple[str, dict[str, Any]]]) -> list[str | None]:
    with psycopg.connect(pg_uri) as conn:
        conn.execute("SET TimeZone = 'America/Los_Angeles'")  # naive times stay UTC anyway
        labels = []
        for kind in STATUS_RULES:
            params: dict[str, Any] = {"label_now": NOW}
            case = label_sql(STATUS_RULES[kind], "v.value", params)
            mine = [(n, json.dumps(v)) for n, (k, v) in enumerate(cases) if k == kind]
            params["values"] = [v for _, v in mine]
            rows = conn.execute(
                f"SELECT {case} AS label FROM unnest(%(values)s::jsonb[]) WITH ORDINALITY"
                " AS v(value, n) ORDER BY v.n",
                params,
            ).fetchall()
            labels += list(zip([n for n, _ in mine], [r[0] for r in rows], strict=True))
    return [label for _, label in sorted(labels)]


def test_the_status_rule_reads_alike_in_python_and_in_sql(pg_uri: str) -> None:
    cases = _values()
    in_python = [status_of(kind, value, NOW) for kind, value in cases]
    in_sql = _sql_labels(pg_uri, cases)
    differ = [(k, v, p, s) for (k, v), p, s in zip(cases, in_python, in_sql, strict=True) if p != s]
    assert not differ, differ[:5]
    # every status is reached, so no arm of the rule went untested
    assert set(in_python) == {"active", "pending", "superseded", "forgotten", "expired", "disabled"}
    semantic = STATUS_RULES["semantic"]
    for value, past in TIMES:
        expired = label_of(semantic, {"valid_to": value}, NOW) == "expired"
        assert expired == past, value


def test_truthiness_and_json_types_read_as_python_reads_them(pg_uri: str) -> None:
    rules = (
        Rule("truthy", (Truthy("x"),)),
        Rule("zero", (Is("x", 0),)),
        Rule("false", (Is("x", False),)),
        Rule("other"),
    )
    values = [{"x": v} for v in TRUTHY] + [{}, {"x": 0.0}, {"x": "false"}]
    with psycopg.connect(pg_uri) as conn:
        params: dict[str, Any] = {"label_now": NOW}
        case = label_sql(rules, "v.value", params)
        params["values"] = [json.dumps(v) for v in values]
        in_sql = [
            r[0]
            for r in conn.execute(
                f"SELECT {case} FROM unnest(%(values)s::jsonb[]) WITH ORDINALITY AS v(value, n)"
                " ORDER BY v.n",
                params,
            )
        ]
    assert in_sql == [label_of(rules, v, NOW) for v in values]
    assert (
        label_of(rules, {"x": 0}, NOW) == "zero" and label_of(rules, {"x": False}, NOW) == "false"
    )


def test_is_none_is_refused() -> None:
    with pytest.raises(ValueError, match="missing field and null"):
        label_sql((Rule("x", (Is("f", None),)),), "v.value", {})
