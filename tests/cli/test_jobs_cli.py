"""``langmem-vault jobs failed|retry`` on a real Postgres: a job that failed every attempt is
shown (table and JSON), retried once (a second retry says it is not failed), bad input is
exit 2, and a working worker then learns the job's facts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langmem_vault.db._connection import open_pool
from langmem_vault.jobs import ExtractionWorker, JobQueue
from langmem_vault.memory._namespaces import MemoryNamespaces
from tests.cli.conftest import Cli, user
from tests.cli.test_memories_cli import as_json, bad_input
from tests.jobs.test_extraction_worker import lives_in
from tests.support.jobs import ERROR, failed_job
from tests.support.models import ScriptedModel


@pytest.fixture
def queue(cli: Cli) -> Iterator[JobQueue]:
    with open_pool(cli.uri, max_size=2) as pool:
        jobs = JobQueue(pool, schema=cli.schema)
        jobs.setup()
        yield jobs


def test_failed_jobs_shown_retried_and_learned(cli: Cli, queue: JobQueue) -> None:
    u, other = user(), user()
    job, theirs = failed_job(queue, u, "Oslo"), failed_job(queue, other, "Lima")

    listed = cli("jobs", "failed")
    assert listed.exit_code == 0, listed.output
    [line] = [row for row in listed.stdout.splitlines() if f" {u} " in row]
    assert str(job) in line and ERROR in line and "1/1" in line and "extract" in line
    mine = as_json(cli("jobs", "failed", "--user", u, "--json"))
    assert isinstance(mine, dict) and mine["total"] == 1
    [shown] = mine["jobs"]
    assert (shown["id"], shown["user_id"], shown["last_error"]) == (job, u, ERROR)

    bad_input(cli("jobs", "retry"), "job_ids")
    bad_input(cli("jobs", "retry", str(job), "--all"), "job_ids")
    bad_input(cli("jobs", "retry", "424242"), "job_id", "424242")
    bad_input(cli("jobs", "retry", str(theirs), "--user", u), "job_id")  # not u's job
    assert queue.statuses([job, theirs]) == {job: "failed", theirs: "failed"}

    retried = cli("jobs", "retry", str(job))
    assert retried.exit_code == 0 and f"retried 1 job(s): {job}" in retried.stdout
    again = as_json(cli("jobs", "retry", str(job), "--json"))
    assert again == {"retried": [], "unchanged": [{"id": job, "status": "pending"}]}
    assert as_json(cli("jobs", "failed", "--user", u, "--json")) == {"total": 0, "jobs": []}

    worker = ExtractionWorker(queue, cli.service.store, ScriptedModel(default=lives_in))
    assert worker.run_pending() == 1
    ns = MemoryNamespaces().resolve({"configurable": {"user_id": u}})
    assert [i.value["text"] for i in cli.service.store.search(ns.semantic)] == [
        "User lives in Oslo"
    ]
    assert as_json(cli("jobs", "retry", "--all", "--user", other, "--json")) == {
        "retried": [theirs],
        "unchanged": [],
    }
