"""Checkpointer plans with canned rows, no database."""

from __future__ import annotations

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langmem_vault.checkpointers._config import Target
from langmem_vault.checkpointers._queries import get_tuple_plan
from tests.support.plans import drive


def test_get_tuple_of_an_unknown_thread_is_none() -> None:
    where = Target(thread_id="t1", checkpoint_ns="", checkpoint_id=None)
    (query,), found = drive(get_tuple_plan("s1", JsonPlusSerializer(), "", where, None), [])
    assert found is None
    assert query.params == {
        "tenant": "",
        "thread_id": "t1",
        "checkpoint_ns": "",
        "checkpoint_id": None,
    }
    assert "s1." in str(query.sql)
