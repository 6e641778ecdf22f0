"""``langgraph dev`` on the repository's langgraph.json, for the tests under tests/studio.

A server is a subprocess in its own process group, on the session's Postgres in a fresh
schema, offline (no model key, no analytics, no version check, no tracing; every HTTP proxy
variable points at a local listener that records any attempt to reach the network). It is
stopped by its PID's process group, and no process of that group may outlive it.
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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[2]
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
        if k
        not in (
            "OPENAI_API_KEY",
            "LANGMEM_VAULT_MODEL",
            "LANGMEM_VAULT_OFFLINE",
            "LANGMEM_VAULT_API_KEYS",
            "LANGMEM_VAULT_ADMIN_KEY",
        )
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


@contextmanager
def running_dev_server(
    pg_uri: str, environ: Mapping[str, str] | None = None
) -> Iterator[DevServer]:
    """A started ``langgraph dev`` (``environ`` added to its environment), stopped after."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    network = _NetworkRecorder()
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="lmv-dev-")) / "server.log"
    cli = Path(sys.executable).parent / "langgraph"
    env = _env(pg_uri, schema, f"http://127.0.0.1:{network.port}")
    env.update(environ or {})
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(cli), "dev", "--no-browser", "--no-reload", "--port", str(port)],
            cwd=ROOT,
            env=env,
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
