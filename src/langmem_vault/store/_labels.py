"""Labels derived from an item's value by ordered rules: one definition, read in Python and SQL.

A :data:`Labeling` is a tuple of :class:`Rule`: the first rule whose conditions all hold names
the item's label (a rule without conditions always holds). The conditions are few and typed,
so each has one meaning in both languages:

- ``Is(field, v)``: the field holds the JSON value ``v``, of its JSON type (``false`` is not
  ``0``; a missing field is nothing);
- ``Truthy(field)``: the field holds a value Python finds true (not null, false, 0, "", [],
  {}); a missing field is not truthy;
- ``Past(field)``: the field holds a timestamp written as :data:`ISO_TIME` allows (no offset
  means UTC) at or before ``now``; anything else is not past.

:func:`label_of` reads a labeling in Python, :func:`label_sql` writes it as one SQL ``CASE``
over a jsonb column (every field, value and label a parameter), so a filter or a count by
label runs in the statement, and a page is cut on it. ``now`` is the caller's, passed to both,
so a label does not depend on which side read it. :func:`candidates_sql` writes what every
rule but the default needs of a value whatever the time (a field's JSON value, a timestamp's
type), its fields and values written out, not bound, so that a partial index on it
(store/0010) serves a count: every value it leaves out has :func:`default_label`.
:func:`fixed_sql` writes, for each rule that holds or not whatever the time (the leading
rules without ``Past``), the condition of exactly its values, and :func:`judged_sql` the
candidates none of them takes: partial indexes on these (store/0011) count the former
index-only, so only the latter are read and labelled at the time asked.
:data:`ISO_TIME` is one regular expression for both: it admits only the timestamps that
Python's ``datetime.fromisoformat`` and Postgres' ``timestamptz`` read alike (no hour 24, no
leap second, at most 6 fractional digits, offsets Postgres takes), and ``pg_input_is_valid`` /
``fromisoformat`` then reject the same impossible dates.

>>> from datetime import UTC, datetime
>>> rules = (Rule("old", (Past("valid_to"),)), Rule("live"))
>>> label_of(rules, {"valid_to": "2020-01-01T00:00:00+00:00"}, datetime.now(UTC))
'old'
>>> label_of(rules, {"valid_to": "next week"}, datetime.now(UTC))
'live'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple

from langmem_vault.db._iso_time import HAS_OFFSET, ISO_TIME

__all__ = [
    "ISO_TIME",
    "Is",
    "Labeling",
    "Past",
    "Rule",
    "Truthy",
    "candidates_sql",
    "default_label",
    "fixed_sql",
    "judged_sql",
    "label_of",
    "label_sql",
    "past_sql",
    "time_sql",
]

_ISO = re.compile(ISO_TIME)


class Is(NamedTuple):
    """The field holds this JSON value (not None: a missing field and null differ)."""

    field: str
    value: Any


class Truthy(NamedTuple):
    """The field holds a value Python finds true."""

    field: str


class Past(NamedTuple):
    """The field holds an :data:`ISO_TIME` timestamp at or before ``now``."""

    field: str


Condition = Is | Truthy | Past


class Rule(NamedTuple):
    """``label`` when every condition holds (always, without conditions)."""

    label: str
    when: tuple[Condition, ...] = ()


#: the rules of one kind of item, the first that holds wins
Labeling = tuple[Rule, ...]


def label_of(rules: Labeling, value: Mapping[str, Any], now: datetime) -> str | None:
    """The label of ``value`` (None when no rule holds)."""
    for rule in rules:
        if all(_holds(c, value, now) for c in rule.when):
            return rule.label
    return None


def _holds(cond: Condition, value: Mapping[str, Any], now: datetime) -> bool:
    if cond.field not in value:
        return False
    found = value[cond.field]
    if isinstance(cond, Is):
        return _json_type(found) == _json_type(cond.value) and found == cond.value
    if isinstance(cond, Truthy):
        return bool(found)
    return (at := _timestamp(found)) is not None and at <= now


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    return "number" if isinstance(v, int | float) else type(v).__name__


def _timestamp(found: Any) -> datetime | None:
    if isinstance(found, datetime):  # a value not yet stored (other stores keep objects)
        return found if found.tzinfo else found.replace(tzinfo=UTC)
    if not isinstance(found, str) or not _ISO.match(found):
        return None
    try:
        at = datetime.fromisoformat(found)
    except ValueError:  # an impossible date: 2026-02-30
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def label_sql(
    rules: Labeling, column: str, params: dict[str, Any], *, now: str = "%(label_now)s"
) -> str:
    """The labeling as one SQL CASE over the jsonb ``column`` (NULL when no rule holds); the
    fields, values and labels are added to ``params`` (``now``: the placeholder of the time
    rules compare with, a timestamptz the caller binds)."""

    def param(v: Any) -> str:
        name = f"l{len(params)}"
        params[name] = v
        return f"%({name})s"

    def cond_sql(cond: Condition) -> str:
        at = f"({column} -> {param(cond.field)}::text)"
        if isinstance(cond, Is):
            if cond.value is None:
                raise ValueError(f"Is({cond.field!r}, None): a missing field and null differ")
            return f"{at} = {param(json.dumps(cond.value))}::jsonb"
        if isinstance(cond, Truthy):
            return _truthy_sql(at)
        valid, cast = time_sql(at, param)
        return f"CASE WHEN {valid} THEN {cast} <= {now}::timestamptz ELSE false END"

    arms: list[str] = []
    for rule in rules:
        label = f"{param(rule.label)}::text"
        if not rule.when:
            if not arms:  # CASE needs a WHEN
                return label
            arms.append(f"ELSE {label}")
            break
        arms.append(f"WHEN {' AND '.join(cond_sql(c) for c in rule.when)} THEN {label}")
    return f"CASE {' '.join(arms)} END"


def time_sql(at: str, param: Callable[[Any], str]) -> tuple[str, str]:
    """Whether the jsonb expression ``at`` holds an :data:`ISO_TIME` timestamp, and its
    timestamptz (valid only where the first holds: the cast of an impossible date would
    raise, so the regex comes first); ``param`` binds a value and returns its placeholder."""
    text = f"({at} #>> '{{}}')"
    valid = (
        f"jsonb_typeof{at} = 'string' AND {text} ~ {param(ISO_TIME)} "
        f"AND pg_input_is_valid({text}, 'timestamptz')"
    )
    cast = (
        f"CASE WHEN {text} ~ {param(HAS_OFFSET)} THEN {text}::timestamptz "
        f"ELSE {text}::timestamp AT TIME ZONE 'UTC' END"
    )
    return valid, cast


def default_label(rules: Labeling) -> str | None:
    """The label of a value no conditional rule before the first unconditional one holds for.

    >>> default_label((Rule("old", (Past("valid_to"),)), Rule("live")))
    'live'
    """
    return next((rule.label for rule in rules if not rule.when), None)


def candidates_sql(rules: Labeling, column: str) -> str | None:
    """A condition every value whose label is not :func:`default_label` meets at any time
    (None: every value has the default label), its fields and values written as literals:
    a partial index whose predicate it implies (the same clauses, in any order) lists the
    values whose label must be judged.

    >>> print(candidates_sql((Rule("old", (Is("status", "closed"),)), Rule("live")), "v"))
    ((v -> 'status') = '"closed"'::jsonb)
    """
    arms: list[str] = []
    for rule in rules:
        if not rule.when:
            break
        # What the conditions need whatever the time (a rule holds only if all hold); a
        # Truthy field's presence only when nothing else narrows the rule (fewer arms).
        needs = [_need(c, column) for c in rule.when if not isinstance(c, Truthy)]
        needs = needs or [_need(c, column) for c in rule.when]
        arm = f"({' AND '.join(needs)})" if len(needs) > 1 else needs[0]
        if arm not in arms:
            arms.append(arm)
    return f"({' OR '.join(arms)})" if arms else None


def fixed_sql(rules: Labeling, column: str) -> list[tuple[str, str]]:
    """Each leading rule whose label does not depend on the time (no ``Past`` in it or in a
    rule before it) and the condition of exactly the values it labels (it holds, no rule
    before it does), as literals (see :func:`candidates_sql`).

    >>> rules = (Rule("closed", (Is("status", "closed"),)), Rule("old", (Past("t"),)), Rule("live"))
    >>> for label, where in fixed_sql(rules, "v"): print(label, where)
    closed ((v -> 'status') = '"closed"'::jsonb)
    """
    fixed: list[tuple[str, str]] = []
    before: list[str] = []
    for label, holds in _fixed_holds(rules, column):
        fixed.append((label, f"({' AND '.join([holds, *before])})"))
        before.append(f"({holds}) IS NOT TRUE")
    return fixed


def judged_sql(rules: Labeling, column: str) -> str | None:
    """The :func:`candidates_sql` values no rule of :func:`fixed_sql` labels: the ones whose
    label may depend on the time (None: there are none)."""
    candidates = candidates_sql(rules, column)
    fixed = _fixed_holds(rules, column)
    if candidates is None or len(fixed) == sum(1 for r in rules if r.when):
        return None
    return f"({' AND '.join([candidates, *(f'({h}) IS NOT TRUE' for _, h in fixed)])})"


def past_sql(rules: Labeling, column: str) -> tuple[str, str] | None:
    """When the rule after :func:`fixed_sql`'s is one ``Past`` and the default follows it:
    its label and its field's JSON value (a literal), so the values of :func:`judged_sql`
    have that label exactly when the value is a timestamp at or before the time asked.

    >>> past_sql((Rule("off", (Is("on", False),)), Rule("old", (Past("t"),)), Rule("ok")), "v")
    ('old', "(v -> 't')")
    """
    rest = rules[len(_fixed_holds(rules, column)) :]
    if len(rest) < 2 or len(rest[0].when) != 1 or rest[1].when:
        return None
    (cond,) = rest[0].when
    return (
        (rest[0].label, f"({column} -> {_literal(cond.field)})") if isinstance(cond, Past) else None
    )


def _fixed_holds(rules: Labeling, column: str) -> list[tuple[str, str]]:
    """The leading rules without ``Past``: each label and the condition that it holds."""
    out = []
    for rule in rules:
        if not rule.when or any(isinstance(c, Past) for c in rule.when):
            break
        out.append((rule.label, " AND ".join(_exact(c, column) for c in rule.when)))
    return out


def _exact(cond: Condition, column: str) -> str:
    """An ``Is`` or ``Truthy`` condition as :func:`label_sql` writes it, with literals."""
    at = f"({column} -> {_literal(cond.field)})"
    if isinstance(cond, Is):
        return f"{at} = {_literal(json.dumps(cond.value))}::jsonb"
    return _truthy_sql(at)


def _truthy_sql(at: str) -> str:
    """Python's truth of the jsonb ``at`` (a missing field or null is false)."""
    return (
        f"CASE jsonb_typeof{at} WHEN 'string' THEN {at} <> '\"\"'::jsonb "
        f"WHEN 'boolean' THEN {at} = 'true'::jsonb "
        f"WHEN 'number' THEN {at} <> '0'::jsonb "
        f"WHEN 'array' THEN {at} <> '[]'::jsonb "
        f"WHEN 'object' THEN {at} <> '{{}}'::jsonb ELSE false END"
    )


def _need(cond: Condition, column: str) -> str:
    at = f"{column} -> {_literal(cond.field)}"
    if isinstance(cond, Is):
        return f"({at}) = {_literal(json.dumps(cond.value))}::jsonb"
    if isinstance(cond, Past):
        return f"jsonb_typeof({at}) = 'string'"
    return f"({at}) IS NOT NULL"


def _literal(text: str) -> str:
    """``text`` as an SQL string literal (standard_conforming_strings; ``%`` doubled for the
    driver's placeholders)."""
    return "'" + text.replace("'", "''").replace("%", "%%") + "'"
