"""The job plans with canned rows, no database: the SQL they ask for and how rows parse."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from psycopg.types.json import Jsonb

from langmem_vault.db._runner import Query
from langmem_vault.jobs import _plans as plans
from tests.support.plans import drive

ROW = {
    "id": 7,
    "kind": "extract",
    "dedupe_key": "k",
    "thread_id": "t1",
    "payload": {"messages": []},
    "status": "running",
    "attempts": 1,
    "max_attempts": 5,
    "last_error": None,
    "result": None,
    "lease_token": "0b8f3c1e-52a4-4d7e-8d3a-2f6f1f4a9c21",
    "leased_until": datetime(2026, 1, 1, tzinfo=UTC),
    "worker_id": "w1",
    "created_at": datetime(2026, 1, 1, tzinfo=UTC),
    "finished_at": None,
}


def test_get_parses_a_row_and_a_missing_job_is_none() -> None:
    (query,), job = drive(plans.get_plan("s1", 7), [ROW])
    assert isinstance(query, Query) and query.params == (7,)
    assert job is not None and (job.id, job.thread_id, job.lease_token) == (
        7,
        "t1",
        ROW["lease_token"],
    )
    assert drive(plans.get_plan("s1", 8), [])[1] is None


def test_counts_fill_every_status() -> None:
    _, counts = drive(plans.counts_plan("s1"), [{"status": "pending", "n": 2}])
    assert counts == {"pending": 2, "running": 0, "done": 0, "failed": 0}


def test_list_refuses_an_unknown_status_before_any_query() -> None:
    with pytest.raises(ValueError, match="status must be one of"):
        drive(plans.list_plan("s1", status="stuck"))


def test_delete_user_jobs_matches_threads_and_each_namespace() -> None:
    ns = {"semantic": ["m", "u1", "semantic"], "episodes": ["m", "u1", "e"], "instructions": ["i"]}
    (query,), counted = drive(
        plans.delete_user_jobs_plan("s1", ["t1", "t2"], ns), [{"jobs": 3, "watermarks": 1}]
    )
    assert counted == (3, 1)
    assert query.params["threads"] == ["t1", "t2"]
    for kind, labels in ns.items():
        assert isinstance(query.params[kind], Jsonb) and query.params[kind].obj == labels
    assert drive(plans.delete_user_jobs_plan("s1", [], ns), [])[1] == (0, 0)


def test_a_bad_schema_name_is_refused() -> None:
    with pytest.raises(ValueError):
        drive(plans.counts_plan("bad schema; drop"))
