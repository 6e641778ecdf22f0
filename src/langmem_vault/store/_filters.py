"""Translate BaseStore search filters into SQL that compares by JSON type.

``{"score": {"$gt": 5}}`` compares numbers as numbers (langgraph's PostgresStore compares
them as text, so 10 and 100 miss: langgraph #7684) and strings as strings. A plain value means
equality; a plain dict matches when every key it lists matches (as InMemoryStore does); lists
match exactly. Field names and operands only ever travel as query parameters.
"""

from __future__ import annotations

import json
from typing import Any

from langmem_vault.store._validation import InvalidValueError, check_tree

_ORDER_OPS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_OPS = {"$eq", "$ne", *_ORDER_OPS}


class FilterBuilder:
    """Accumulates WHERE clauses and their parameters for one search."""

    def __init__(self, column: str = "i.value", *, containment: bool = True) -> None:
        self.column = column
        # False for an ordered index walk (store/_pages.py): with the containment clause a
        # generic plan may read the jsonb GIN index, every match, and sort them.
        self.containment = containment
        self.clauses: list[str] = []
        self.params: dict[str, Any] = {}

    def add(self, filter: dict[str, Any] | None) -> None:
        if filter is None:
            return
        if not isinstance(filter, dict):
            raise InvalidValueError(f"filter must be a dict, got {type(filter).__name__}")
        # Field names and operands travel as text or jsonb: no NUL, no lone surrogate, no
        # nesting deep enough to exhaust the recursion of _match.
        check_tree(filter, "filter")
        for key, condition in filter.items():
            if not isinstance(key, str) or not key:
                raise InvalidValueError(f"filter keys must be non-empty strings, got {key!r}")
            self._match([key], condition)

    def sql(self) -> str:
        return " AND ".join(self.clauses) if self.clauses else "TRUE"

    def _param(self, value: Any) -> str:
        name = f"f{len(self.params)}"
        self.params[name] = value
        return f"%({name})s"

    def _at(self, path: list[str]) -> str:
        return f"({self.column} #> {self._param(path)}::text[])"

    def _match(self, path: list[str], condition: Any) -> None:
        if isinstance(condition, dict) and any(str(k).startswith("$") for k in condition):
            for op, operand in condition.items():
                self._operator(path, op, operand)
        elif isinstance(condition, dict):
            # Every listed key must match; the item's value must be an object.
            self.clauses.append(f"jsonb_typeof{self._at(path)} = 'object'")
            for k, v in condition.items():
                self._match([*path, str(k)], v)
        else:
            self._equal(path, condition)

    def _equal(self, path: list[str], operand: Any) -> None:
        self.clauses.append(self._equality_sql(path, operand))
        if self.containment and isinstance(operand, str | int | float):
            # Implied by the equality (booleans too: inject's {"private": True} read of a
            # user's facts); lets Postgres use the jsonb_path_ops GIN index.
            doc: Any = operand
            for label in reversed(path):
                doc = {label: doc}
            self.clauses.append(f"{self.column} @> {self._param(json.dumps(doc))}::jsonb")

    def _equality_sql(self, path: list[str], operand: Any) -> str:
        if operand is None:  # a missing key equals None, as dict.get() gives in InMemoryStore
            return f"coalesce({self._at(path)}, 'null'::jsonb) = 'null'::jsonb"
        return f"{self._at(path)} = {self._param(_json(operand))}::jsonb"

    def _operator(self, path: list[str], op: str, operand: Any) -> None:
        if op not in _OPS:
            raise InvalidValueError(
                f"unsupported filter operator {op!r}; use one of {sorted(_OPS)}"
            )
        if op == "$eq":
            self.clauses.append(self._equality_sql(path, operand))
        elif op == "$ne":
            self.clauses.append(f"NOT coalesce({self._equality_sql(path, operand)}, false)")
        elif isinstance(operand, bool) or not isinstance(operand, int | float | str):
            raise InvalidValueError(
                f"filter operator {op} needs a number or a string, got {operand!r}"
            )
        else:
            at, cmp, value = self._at(path), _ORDER_OPS[op], self._param(operand)
            if isinstance(operand, str):
                self.clauses.append(
                    f"CASE WHEN jsonb_typeof{at} = 'string' "
                    f"THEN ({at} #>> '{{}}') COLLATE \"C\" {cmp} {value}::text END"
                )
            else:
                self.clauses.append(
                    f"CASE WHEN jsonb_typeof{at} = 'number' THEN {at}::numeric {cmp} {value} END"
                )


def _json(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"filter value {value!r} is not JSON: {exc}") from exc
