"""``langgraph dev`` serving the repository's langgraph.json: VaultStore and VaultSaver are the
server's store and checkpointer, seen through ``langgraph-sdk`` and the server's store API.

One server per module (it takes seconds to start): a subprocess in its own process group, on
the session's Postgres in a fresh schema, offline (no model key, no analytics, no version
check, no tracing; every HTTP proxy variable points at a local listener that records any
attempt to reach the network). It is stopped by its PID's process group, and no process of
that group may outlive it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg
import pytest
from langgraph_sdk import get_client

from langmem_vault import AsyncVaultStore

ROOT = Path(__file__).resolve().parents[2]
USER = {"user_id": "dana.k@example.com"}
SEMANTIC = ["memories", "dana%2Ek@example%2Ecom", "semantic"]
START_TIMEOUT = 240.0  # seconds; about 10-30 s on an idle machine, far more on a loaded one


class _NetworkRecorder:
    """A local TCP listener standing in for every proxy: any HTTP(S) request the server tries
    to send off the machine arrives here instead, and is recorded."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.seen: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            with conn:
                conn.settimeout(1.0)
                try:
                    self.seen.append(conn.recv(200) or b"(connected)")
                except OSError:
                    self.seen.append(b"(connected)")

    def close(self) -> None:
        self.sock.close()


@dataclass
class DevServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    network: _NetworkRecorder
    schema: str
    survivors: list[psutil.Process] = field(default_factory=list)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after 30 s; then record any process
        of the group still alive."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while True:
            self.survivors = [p for p in psutil.process_iter() if _pgid(p) == self.process.pid]
            if not self.survivors or time.monotonic() > deadline:
                return
            time.sleep(0.2)


def _pgid(process: psutil.Process) -> int | None:
    try:
        return os.getpgid(process.pid)
    except (ProcessLookupError, PermissionError):
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(pg_uri: str, schema: str, proxy: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "LANGMEM_VAULT_MODEL", "LANGMEM_VAULT_OFFLINE")
        and not k.startswith(("LANGSMITH_", "LANGCHAIN_"))
    }
    src = str(ROOT / "src")
    env.update(
        LANGMEM_VAULT_DSN=pg_uri,
        LANGMEM_VAULT_SCHEMA=schema,
        PYTHONPATH=os.pathsep.join([src, env["PYTHONPATH"]]) if env.get("PYTHONPATH") else src,
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGGRAPH_DISABLE_FILE_PERSISTENCE="true",  # no .langgraph_api/ left in the repository
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HTTP_PROXY=proxy,
        HTTPS_PROXY=proxy,
        ALL_PROXY=proxy,
        http_proxy=proxy,
        https_proxy=proxy,
        all_proxy=proxy,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


def _wait_until_up(server: DevServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"langgraph dev exited ({server.process.returncode}):\n{server.log_text()}")
        try:
            if httpx.get(f"{server.url}/ok", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"langgraph dev did not answer in {START_TIMEOUT} s:\n{server.log_text()[-4000:]}")


@pytest.fixture(scope="module")
def dev_server(pg_uri: str) -> Iterator[DevServer]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    network = _NetworkRecorder()
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="lmv-dev-")) / "server.log"
    cli = Path(sys.executable).parent / "langgraph"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(cli), "dev", "--no-browser", "--no-reload", "--port", str(port)],
            cwd=ROOT,
            env=_env(pg_uri, schema, f"http://127.0.0.1:{network.port}"),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as one
        )
    server = DevServer(f"http://127.0.0.1:{port}", process, log, network, schema)
    try:
        _wait_until_up(server)
        yield server
    finally:
        server.stop()
        network.close()
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
async def client(dev_server: DevServer) -> AsyncIterator[Any]:
    sdk = get_client(url=dev_server.url)
    yield sdk
    await sdk.http.client.aclose()


def _turn(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_studio_form_asks_for_messages_and_a_user_id(client: Any) -> None:
    assistants = await client.assistants.search(graph_id="memory_graph")
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    assert sorted(schemas["input_schema"]["properties"]) == ["messages"]
    assert "user_id" in schemas["context_schema"]["properties"]
    assert "extraction" not in schemas["output_schema"]["properties"]


async def test_memory_from_one_thread_is_injected_in_the_next(
    client: Any, dev_server: DevServer, pg_uri: str
) -> None:
    first = await client.threads.create()
    said = _turn("I live in Lyon and I work at Acme Robotics.")
    run = await client.runs.create(first["thread_id"], "memory_graph", input=said, context=USER)
    await client.runs.join(first["thread_id"], run["run_id"])
    assert (await client.runs.get(first["thread_id"], run["run_id"]))["status"] == "success"

    second = await client.threads.create()
    events = [
        part
        async for part in client.runs.stream(
            second["thread_id"],
            "memory_graph",
            input=_turn("Where do I work?"),
            context=USER,
            stream_mode=["custom", "values"],
        )
    ]
    injected = [e.data for e in events if e.event == "custom"]
    assert injected and injected[0]["type"] == "memory_injected"
    assert "User works at Acme Robotics" in injected[0]["preview"]

    state = (await client.threads.get_state(second["thread_id"]))["values"]
    assert "User works at Acme Robotics" in state["memory_context"]
    assert state["cited"], state["messages"][-1]
    cited_key = state["memory_refs"][state["cited"][0]]
    assert "Acme Robotics" in state["messages"][-1]["content"]

    # The fact the first thread taught, through the server's own store API...
    found = await client.store.search_items(SEMANTIC, query="where does the user work")
    by_key = {item["key"]: item["value"]["text"] for item in found["items"]}
    assert by_key[cited_key] == "User works at Acme Robotics"
    # ...is a VaultStore row in Postgres (not the in-memory store of the dev server).
    async with AsyncVaultStore.from_conn_string(pg_uri, schema=dev_server.schema) as store:
        item = await store.aget(tuple(SEMANTIC), cited_key)
    assert item is not None and item.value["text"] == "User works at Acme Robotics"


def test_stopped_by_pid_without_blocking_network_or_orphans(dev_server: DevServer) -> None:
    dev_server.stop()
    log = dev_server.log_text()
    assert "Blocking call" not in log, log
    assert dev_server.network.seen == [], dev_server.network.seen
    assert dev_server.survivors == []
    assert dev_server.process.returncode is not None
