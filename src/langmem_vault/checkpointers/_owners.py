"""Threads belong to users: the user_id a thread was created under owns it.

Thread ids are global, so without a check anyone who learns (or guesses) another user's
thread id reads that conversation. When a config carries a ``user_id`` and the thread has an
owner, every read and write of the thread first checks they match; a config without a
``user_id`` (service code, migrations, the conformance suite) is not a user and passes. Apps
whose users share threads turn the check off with ``shared_threads=True``.

The check costs one indexed lookup (a primary-key read) per call that carries a user_id. For
reads it travels with the read's first statement (one round trip, see :func:`owned_read_plan`);
``get_tuple`` and ``list`` carry it inside their one statement (``queries.load_sql``), which
then sends no rows of a thread the user may not read.
"""

from __future__ import annotations

from typing import TypeVar

from langmem_vault.checkpointers._config import render
from langmem_vault.checkpointers._text import from_db
from langmem_vault.db._runner import Pipelined, Plan, Query, Rows

T = TypeVar("T")

OWNER_SQL = """
SELECT user_id FROM {schema}.saver_threads
WHERE tenant = %(tenant)s AND thread_id = %(thread_id)s"""


class ThreadAccessError(PermissionError):
    """A user_id asked for a thread another user owns; nothing was read or written."""


def check_owner(thread_id: str, user_id: str, rows: Rows) -> None:
    """Raise :class:`ThreadAccessError` unless ``rows`` (of :data:`OWNER_SQL`) name
    ``user_id`` or no owner."""
    owner = rows[0]["user_id"] if rows else None
    if owner is not None and owner != user_id:
        raise ThreadAccessError(
            f"thread {from_db(thread_id)!r} belongs to another user than "
            f"{from_db(user_id)!r}; open the saver with shared_threads=True if your "
            "users share threads"
        )


def owned_plan(
    schema: str, tenant: str, thread_id: str, user_id: str | None, plan: Plan[T]
) -> Plan[T]:
    """``plan``, once ``user_id`` (stored form) is known to own ``thread_id`` (of ``tenant``),
    or no one does."""
    if user_id is not None:
        rows = yield Query(render(OWNER_SQL, schema), {"tenant": tenant, "thread_id": thread_id})
        check_owner(thread_id, user_id, rows)
    return (yield from plan)


def owned_read_plan(
    schema: str, tenant: str, thread_id: str, user_id: str | None, plan: Plan[T]
) -> Plan[T]:
    """:func:`owned_plan` for a plan that only reads: the owner lookup and the plan's first
    statement travel together (one round trip, not two), and the plan only sees that
    statement's rows once the owner check passed; otherwise they are dropped unread."""
    if user_id is None:
        return (yield from plan)
    owner = Query(render(OWNER_SQL, schema), {"tenant": tenant, "thread_id": thread_id})
    try:
        step = next(plan)
    except StopIteration as done:  # nothing to read
        check_owner(thread_id, user_id, (yield owner))
        return done.value  # type: ignore[no-any-return]
    if isinstance(step, Pipelined):
        answers = yield Pipelined((owner, *step.queries))
        check_owner(thread_id, user_id, answers[0])
        result = answers[1:]
    elif isinstance(step, Query) and not step.many:
        owner_rows, result = yield Pipelined((owner, step))
        check_owner(thread_id, user_id, owner_rows)
    else:  # executemany cannot join a pipeline (nor can a step that is not a statement)
        check_owner(thread_id, user_id, (yield owner))
        result = yield step
    while True:
        try:
            step = plan.send(result)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        result = yield step
