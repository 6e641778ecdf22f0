"""``langmem-vault doctor``: one line per check, a fix for each failure, exit code 1."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from langmem_vault._doctor import run_checks
from langmem_vault.cli import main
from langmem_vault.db._embedded import DATA_DIR_ENV, DSN_ENV


def test_a_healthy_setup_passes_every_check(
    pg_uri: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--dsn", pg_uri]) == 0
    out = capsys.readouterr().out
    for name in ("dsn", "server", "vector", "embeddings", "redaction"):
        assert f"ok   {name}" in out
    assert "PostgreSQL 18" in out and "HNSW build, insert and search ok" in out
    assert "384 dimensions" in out and "en_core_web_sm" in out
    assert "FAIL" not in out


def test_an_unreachable_server_fails_with_a_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--dsn", "postgresql://127.0.0.1:1/x", "--no-models"]) == 1
    out = capsys.readouterr().out
    assert "FAIL server" in out and "Connection refused" in out
    assert "fix: check the DSN" in out
    assert " vector " not in out  # nothing to check without a server


def test_a_database_without_pgvector_fails_the_vector_check(pg_uri: str) -> None:
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS doctor_novector")
        conn.execute("CREATE DATABASE doctor_novector")
    checks = {
        c.name: c for c in run_checks(make_conninfo(pg_uri, dbname="doctor_novector"), models=False)
    }
    assert checks["server"].ok
    assert not checks["vector"].ok
    assert "CREATE EXTENSION vector" in checks["vector"].fix


def test_an_unusable_data_dir_fails_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "PG_VERSION").write_text("16\n")
    monkeypatch.delenv(DSN_ENV, raising=False)
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    assert main(["doctor", "--no-models"]) == 1
    out = capsys.readouterr().out
    assert "FAIL data dir" in out and "PostgreSQL 16" in out
    assert "ok   server" not in out and "FAIL server" not in out
    assert not (tmp_path / "postmaster.pid").exists()
