"""langmem_vault.studio: the server's store and checkpointer context managers (what they open,
and that leaving them stops an embedded server they started), and the models the Studio
graphs pick from the environment."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from langmem_vault import studio
from langmem_vault.checkpointers import AsyncVaultSaver
from langmem_vault.db.embedded import DATA_DIR_ENV, DSN_ENV, release
from langmem_vault.jobs.queue import AsyncJobQueue
from langmem_vault.store import AsyncVaultStore


@pytest.fixture
def embedded_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No DSN: the context managers start an embedded server in a fresh data directory."""
    path = Path(tempfile.mkdtemp(prefix="lmv-studio-")) / "pg"
    monkeypatch.delenv(DSN_ENV, raising=False)
    monkeypatch.delenv(studio.SCHEMA_ENV, raising=False)
    monkeypatch.setenv(DATA_DIR_ENV, str(path))
    yield path
    release(path)  # in case the test failed before the context managers closed
    shutil.rmtree(path.parent, ignore_errors=True)


def _postmaster(data_dir: Path) -> psutil.Process:
    return psutil.Process(int((data_dir / "postmaster.pid").read_text().split()[0]))


async def test_leaving_both_stops_the_embedded_server_they_started(embedded_dir: Path) -> None:
    closed_while_open: list[bool] = []

    class Worker:
        async def aclose(self) -> None:  # runs at shutdown, while the pools are still open
            closed_while_open.append(await store.aget(("studio",), "k") is not None)

    async with studio.vault_saver() as saver, studio.vault_store() as store:
        assert isinstance(saver, AsyncVaultSaver) and isinstance(store, AsyncVaultStore)
        await store.aput(("studio",), "k", {"text": "I drink green tea"})
        found = await store.asearch(("studio",), query="tea beverage")
        assert found[0].key == "k" and found[0].score is not None  # embedded and searched
        queue = studio.job_queue()
        assert isinstance(queue, AsyncJobQueue) and queue.conn is store.conn
        assert await queue.claim(["nothing"], worker_id="w1") == []  # its tables exist
        studio.close_on_shutdown(Worker())
        server = _postmaster(embedded_dir)
        assert server.is_running()
    assert closed_while_open == [True]
    server.wait(timeout=30)  # raises TimeoutExpired if it is still running
    with pytest.raises(RuntimeError, match="vault_store"):
        studio.job_queue()


def test_models_are_offline_unless_a_model_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", studio.MODEL_ENV, studio.OFFLINE_ENV):
        monkeypatch.delenv(name, raising=False)
    assert studio.studio_models().label == "offline"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # no request is made: models load lazily
    models = studio.studio_models()
    assert models.label == "openai:gpt-4o-mini"
    assert models.chat is models.extractor is models.summarizer
    monkeypatch.setenv(studio.MODEL_ENV, "openai:gpt-4.1-nano")
    assert studio.studio_models().label == "openai:gpt-4.1-nano"
    monkeypatch.setenv(studio.OFFLINE_ENV, "1")
    assert studio.studio_models().label == "offline"


def test_a_model_that_does_not_load_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="LANGMEM_VAULT_OFFLINE=1") as raised:
        studio.studio_models({studio.MODEL_ENV: "no-such-provider:model"})
    assert "no-such-provider:model" in str(raised.value)
