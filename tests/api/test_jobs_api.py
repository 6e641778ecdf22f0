"""The dead-letter list over the REST API: a user key sees and retries only its user's failed
jobs (another user's job is not found), an admin everyone's; a retry is idempotent and a
working worker then learns the job's facts; the routes are in the OpenAPI schema."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from langmem_vault.db._connection import open_pool
from langmem_vault.jobs import ExtractionWorker, JobQueue
from langmem_vault.memory._namespaces import MemoryNamespaces
from tests.api.conftest import Api
from tests.jobs.test_extraction_worker import lives_in
from tests.support.jobs import ERROR, failed_job
from tests.support.models import ScriptedModel


@pytest.fixture
def queue(pg_uri: str, api: Api) -> Iterator[JobQueue]:
    with open_pool(pg_uri, max_size=2) as pool:
        yield JobQueue(pool, schema=api.schema)


async def failed_ids(client: httpx.AsyncClient, **params: str) -> list[int]:
    r = await client.get("/jobs/failed", params=params)
    assert r.status_code == 200, r.text
    return [job["id"] for job in r.json()["jobs"]]


async def test_users_see_and_retry_only_their_own_failed_jobs(api: Api, queue: JobQueue) -> None:
    mine, theirs = failed_job(queue, "alice", "Oslo"), failed_job(queue, "bob", "Lima")
    async with api.client("alice-key") as alice, api.client("admin-key") as admin:
        r = await alice.get("/jobs/failed")
        [job] = [j for j in r.json()["jobs"] if j["id"] == mine]
        assert (job["user_id"], job["last_error"], job["thread_id"]) == (
            "alice",
            ERROR,
            "t-alice-Oslo",
        )
        assert job["attempts"] == job["max_attempts"] == 1 and job["failed_at"]
        # the row shows whose job it is, never the namespace it writes into
        assert set(job) == {
            "id",
            "kind",
            "user_id",
            "thread_id",
            "attempts",
            "max_attempts",
            "last_error",
            "created_at",
            "failed_at",
        }
        assert theirs not in await failed_ids(alice)
        assert (await alice.get("/jobs/failed", params={"user_id": "bob"})).status_code == 403

        hidden = await alice.post(f"/jobs/{theirs}/retry")
        assert hidden.status_code == 404 and hidden.json()["field"] == "job_id"
        retried = await alice.post("/jobs/retry")  # every failed job: alice's only
        assert retried.status_code == 200 and retried.json()["retried"] == [mine]
        assert queue.statuses([mine, theirs]) == {mine: "pending", theirs: "failed"}
        again = await alice.post(f"/jobs/{mine}/retry")
        assert again.json() == {"retried": [], "unchanged": [{"id": mine, "status": "pending"}]}

        assert {mine, theirs} & set(await failed_ids(admin)) == {theirs}
        assert await failed_ids(admin, user_id="alice") == []
        assert (await admin.post(f"/jobs/{theirs}/retry")).json()["retried"] == [theirs]

    worker = ExtractionWorker(api.service.jobs, api.service.store, ScriptedModel(default=lives_in))
    assert await worker.arun_pending() == 2
    ns = MemoryNamespaces().resolve({"configurable": {"user_id": "alice"}})
    found = await api.service.store.asearch(ns.semantic, query="Oslo", limit=50)
    assert "User lives in Oslo" in [i.value["text"] for i in found]


async def test_refusals_and_bad_ids_are_named(api: Api) -> None:
    async with api.client() as anonymous:
        assert (await anonymous.get("/jobs/failed")).status_code == 401
        assert (await anonymous.post("/jobs/1/retry")).status_code == 401
        assert (await anonymous.post("/jobs/retry")).status_code == 401
    async with api.client("bob-key") as bob:
        unknown = await bob.post("/jobs/424242/retry")
        assert unknown.status_code == 404 and "424242" in unknown.json()["message"]
        zero = await bob.post("/jobs/0/retry")
        assert zero.status_code == 422 and zero.json()["field"] == "job_id"
        assert (await bob.get("/jobs/failed", params={"limit": 0})).status_code == 422


async def test_openapi_documents_the_job_routes(api: Api) -> None:
    transport = httpx.ASGITransport(app=api.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        spec = (await c.get("/vault/openapi.json")).json()
    assert "get" in spec["paths"]["/vault/api/jobs/failed"]
    assert "post" in spec["paths"]["/vault/api/jobs/{job_id}/retry"]
    assert "post" in spec["paths"]["/vault/api/jobs/retry"]
