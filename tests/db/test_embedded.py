"""The embedded server: portable pgvector, data-directory checks, named crashes, fast
failures on a bad DSN, a quiet start and a stop that always happens and never hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from langmem_vault.db import aopen_pool, open_pool
from langmem_vault.db._connection import AsyncDatabase, Database
from langmem_vault.db._embedded import (
    SERVER_SETTINGS,
    SETTINGS_FILE,
    SHARED_BUFFERS_ENV,
    DataDirError,
    ServerCrashedError,
    check_data_dir,
    embedded_uri,
    release,
    server_major,
)
from langmem_vault.db._health import vector_smoke_plan
from langmem_vault.db._runner import Query


def _postmaster(data_dir: Path) -> psutil.Process | None:
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return None
    pid = int(pid_file.read_text().splitlines()[0])
    return psutil.Process(pid) if psutil.pid_exists(pid) else None


def _wait_gone(proc: psutil.Process, seconds: float) -> bool:
    try:
        proc.wait(seconds)
    except psutil.TimeoutExpired:
        return False
    return True


@pytest.fixture
def own_server(server_dir: Path) -> tuple[Path, str]:
    """A server of its own, for tests that crash or stop it."""
    data_dir = server_dir / "pg"
    return data_dir, embedded_uri(data_dir)


def test_hnsw_build_insert_and_search(pg_uri: str) -> None:
    with open_pool(pg_uri, max_size=1) as pool:
        version = Database(pool).run(vector_smoke_plan())
    assert version.startswith("0.8")


def _kill_backend_running(uri: str, marker: str) -> None:
    """SIGSEGV the backend running a query containing ``marker`` (a real signal crash, not
    pg_terminate_backend)."""
    with psycopg.connect(uri, autocommit=True) as conn:
        for _ in range(100):
            row = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE %s AND pid <> pg_backend_pid()",
                (f"%{marker}%",),
            ).fetchone()
            if row:
                os.kill(row[0], signal.SIGSEGV)
                return
            time.sleep(0.05)
    raise AssertionError("the victim query never started")


def _victim_plan() -> Iterator[Query]:
    yield Query("SELECT pg_sleep(30) /* victim */")


def test_backend_crash_is_named_fast_and_the_server_still_stops(
    own_server: tuple[Path, str],
) -> None:
    data_dir, uri = own_server
    killer = threading.Thread(target=_kill_backend_running, args=(uri, "victim */"))
    with open_pool(uri, max_size=2) as pool:
        killer.start()
        started = time.monotonic()
        with pytest.raises(ServerCrashedError) as caught:
            Database(pool).run(_victim_plan())  # type: ignore[arg-type]
        assert time.monotonic() - started < 10
        killer.join()
    message = str(caught.value)
    assert "terminated by signal 11" in message
    assert "victim" in message  # the DETAIL line: what the backend was running
    assert str(data_dir) in message
    postmaster = _postmaster(data_dir)
    assert postmaster is not None
    started = time.monotonic()
    release(data_dir)  # a server in crash recovery ignores a fast shutdown; still bounded
    assert _wait_gone(postmaster, 5)
    # Bounded (about 10 s when the machine is idle), where pg_ctl's own wait is 60 s a try:
    # generous, so that a loaded machine does not fail it, and still short of a hang.
    assert time.monotonic() - started < 45


async def test_backend_crash_is_named_on_the_async_path(own_server: tuple[Path, str]) -> None:
    _, uri = own_server
    killer = threading.Thread(target=_kill_backend_running, args=(uri, "victim */"))
    async with await aopen_pool(uri, max_size=2) as pool:
        killer.start()
        with pytest.raises(ServerCrashedError, match="terminated by signal 11"):
            await AsyncDatabase(pool).run(_victim_plan())  # type: ignore[arg-type]
        killer.join()


@pytest.mark.parametrize(
    ("dsn", "cause"),
    [
        ("host=127.0.0.1 port=1 dbname=x connect_timeout", 'missing "="'),
        ("postgresql://127.0.0.1:1/x", "Connection refused"),
    ],
)
def test_a_bad_dsn_fails_fast_with_the_drivers_message(dsn: str, cause: str) -> None:
    started = time.monotonic()
    with pytest.raises(psycopg.Error, match=cause) as caught:
        open_pool(dsn)
    assert time.monotonic() - started < 6
    assert "while connecting to the DSN argument" in "".join(caught.value.__notes__)


async def test_a_bad_dsn_fails_fast_on_the_async_path() -> None:
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError, match="Connection refused"):
        await aopen_pool("postgresql://127.0.0.1:1/x")
    assert time.monotonic() - started < 6


def test_data_of_another_major_version_is_refused_with_a_way_out(tmp_path: Path) -> None:
    (tmp_path / "PG_VERSION").write_text("16\n")
    (tmp_path / "base").mkdir()
    with pytest.raises(DataDirError) as caught:
        embedded_uri(tmp_path)
    message = str(caught.value)
    assert str(tmp_path) in message and "PostgreSQL 16" in message
    assert f"PostgreSQL {server_major()}" in message
    assert "LANGMEM_VAULT_DATA_DIR" in message and "pg_upgrade" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["PG_VERSION", "base"]  # untouched


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="needs root: only root can give files to another OS user (CI runs as root)",
)
def test_data_owned_by_another_os_user_is_refused(tmp_path: Path) -> None:
    (tmp_path / "PG_VERSION").write_text(server_major() + "\n")
    os.chown(tmp_path / "PG_VERSION", 65534, 65534)  # nobody
    with pytest.raises(DataDirError, match=r"belongs to OS user .*chown -R"):
        check_data_dir(tmp_path)


def test_data_of_the_same_major_version_reopens_without_loss(server_dir: Path) -> None:
    data_dir = server_dir / "pg"
    uri = embedded_uri(data_dir)
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (t text)")
        conn.execute("INSERT INTO kept VALUES ('still here')")
    release(data_dir)  # stopped: the next start reads the directory afresh
    assert _postmaster(data_dir) is None
    uri = embedded_uri(data_dir)
    with psycopg.connect(uri) as conn:
        assert conn.execute("SELECT t FROM kept").fetchone() == ("still here",)
    release(data_dir)


def test_server_settings_reach_new_and_existing_data_dirs(server_dir: Path) -> None:
    data_dir = server_dir / "pg"

    def shared_buffers() -> str:
        with psycopg.connect(embedded_uri(data_dir)) as conn:
            row = conn.execute("SHOW shared_buffers").fetchone()
        release(data_dir)
        return str(row[0]) if row else ""

    assert shared_buffers() == SERVER_SETTINGS["shared_buffers"]  # set before the first start
    # A data directory made before the settings existed gets them at its next start.
    conf = data_dir / "postgresql.conf"
    conf.write_text(conf.read_text().replace(f"include_if_exists = '{SETTINGS_FILE}'", ""))
    (data_dir / SETTINGS_FILE).unlink()
    assert shared_buffers() == SERVER_SETTINGS["shared_buffers"]
    assert conf.read_text().count(SETTINGS_FILE) == 1


def test_shared_buffers_is_a_setting(server_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = server_dir / "pg"
    monkeypatch.setenv(SHARED_BUFFERS_ENV, "160MB")  # a small machine's choice
    with psycopg.connect(embedded_uri(data_dir)) as conn:
        assert conn.execute("SHOW shared_buffers").fetchone() == ("160MB",)
    release(data_dir)
    written = (data_dir / SETTINGS_FILE).read_text()
    monkeypatch.setenv(SHARED_BUFFERS_ENV, "lots")
    with pytest.raises(ValueError, match=f"{SHARED_BUFFERS_ENV}.*'lots'"):
        embedded_uri(data_dir)
    assert (data_dir / SETTINGS_FILE).read_text() == written  # nothing half-written


_HOLDER = textwrap.dedent(
    """
    import logging, sys, time
    logging.basicConfig(level=logging.INFO)  # as langgraph dev does: the start stays quiet
    from langmem_vault.db._embedded import embedded_uri
    embedded_uri(sys.argv[1])
    print("ready", flush=True)
    time.sleep(120)
    """
)


def _start_holder(data_dir: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    if proc.stdout.readline() != "ready\n":
        proc.kill()
        raise AssertionError(f"the holder did not start: {proc.stderr.read()}")
    return proc


def test_sigterm_stops_the_server_of_its_last_holder(server_dir: Path) -> None:
    data_dir = server_dir / "pg"
    holder = _start_holder(data_dir)
    postmaster = _postmaster(data_dir)
    assert postmaster is not None
    holder.send_signal(signal.SIGTERM)
    _, err = holder.communicate(timeout=30)
    assert holder.returncode == -signal.SIGTERM
    assert _wait_gone(postmaster, 15)
    assert err == ""  # a quiet start and stop: no NOTICE, no INFO lines, no warnings


def test_a_holder_killed_outright_does_not_keep_the_server_alive(server_dir: Path) -> None:
    data_dir = server_dir / "pg"
    holder = _start_holder(data_dir)
    holder.kill()
    holder.wait()
    embedded_uri(data_dir)  # joins the running server and forgets the dead holder
    postmaster = _postmaster(data_dir)
    assert postmaster is not None
    release(data_dir)
    assert _wait_gone(postmaster, 15)
