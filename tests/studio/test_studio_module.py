"""langmem_vault.studio: the server's store and checkpointer context managers (what they open,
and that leaving them stops an embedded server they started), and the models the Studio
graphs pick from the environment."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from langmem_vault import studio
from langmem_vault.checkpointers import AsyncVaultSaver
from langmem_vault.db._embedded import DATA_DIR_ENV, DSN_ENV, release
from langmem_vault.jobs._queue import AsyncJobQueue
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


RELOADED_APP = """
from contextlib import asynccontextmanager

from starlette.applications import Starlette

from langmem_vault.studio import vault_saver


@asynccontextmanager
async def lifespan(app):
    async with vault_saver():
        yield


app = Starlette(lifespan=lifespan)
"""


def test_a_server_that_cannot_open_its_saver_stops_the_reloader_too(tmp_path: Path) -> None:
    """``langgraph dev`` runs the server under uvicorn's reloader, which waited for ever once
    its child died (here: the database refuses). The same supervisor, on an app whose
    lifespan opens the Studio saver: the whole command exits, and no process is left."""
    (tmp_path / "reloaded_app.py").write_text(RELOADED_APP)
    with socket.socket() as s:  # a port nothing listens on: connections are refused
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    run = (
        "import uvicorn; uvicorn.run('reloaded_app:app', reload=True, port=0, "
        f"app_dir={str(tmp_path)!r}, reload_dirs=[{str(tmp_path)!r}])"
    )
    env = {**os.environ, DSN_ENV: f"postgresql://nobody@127.0.0.1:{closed}/none"}
    process = subprocess.Popen(
        [sys.executable, "-c", run],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"the reloader outlived its dead child:\n{output.decode()[-3000:]}")
    assert b"stopping langgraph dev's reloader" in output
    assert b"Connection refused" in output or b"connection failed" in output
    deadline = time.monotonic() + 10  # helpers (multiprocessing's resource tracker) follow
    while (left := _running_in_group(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == []


def _running_in_group(group: int) -> list[psutil.Process]:
    """The live processes of a process group (a zombie only waits for its reaper)."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == group and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (ProcessLookupError, PermissionError, psutil.NoSuchProcess):
            continue
    return found
