"""A real streaming replica of the session's embedded server, made with its own binaries:
``pg_basebackup -R`` (a standby.signal and the primary's conninfo) and a second server on a
free port. As root the embedded server runs as its own OS user; so does the replica."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from langmem_vault.db._embedded import install_dir


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(owner: str | None, argv: list[str]) -> list[str]:
    return ["runuser", "-u", owner, "--", *argv] if owner else argv


@contextmanager
def streaming_replica(primary_uri: str) -> Iterator[str]:
    """The URI of a hot standby streaming from ``primary_uri``; stopped on exit."""
    with psycopg.connect(primary_uri, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    owner = None
    if os.geteuid() == 0:
        import pwd

        owner = pwd.getpwuid(Path(row[0]).stat().st_uid).pw_name
    base = Path(tempfile.mkdtemp(prefix="lmv-replica-"))
    data = base / "data"
    if owner:
        import shutil

        shutil.chown(base, owner)
    binaries = install_dir() / "bin"
    # -c fast: a spread checkpoint first would take minutes on a busy server
    backup = [str(binaries / "pg_basebackup"), "-D", str(data), "-R", "-X", "stream", "-c", "fast"]
    subprocess.run(
        _as_owner(owner, [*backup, "-d", primary_uri]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = _free_port()
    ctl = [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(base / "log")]
    subprocess.run(
        _as_owner(owner, [*ctl, "-o", f"-p {port} -k {base}", "-w", "-t", "60", "start"]),
        check=True,
        capture_output=True,
        timeout=90,
    )
    params = conninfo_to_dict(primary_uri)
    params.update(host="127.0.0.1", port=str(port))
    uri = make_conninfo(**params)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 30
        while True:  # hot standby accepts connections once it reaches consistency
            try:
                with psycopg.connect(uri, autocommit=True) as conn:
                    conn.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield uri
    finally:
        subprocess.run(
            _as_owner(owner, [*ctl, "-m", "fast", "-w", "stop"]), capture_output=True, timeout=60
        )
        subprocess.run(["rm", "-rf", str(base)], check=False)
