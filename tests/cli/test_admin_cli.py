"""``langmem-vault export|import|erase|unerase|consent|audit|stats|users`` on the real
embedded Postgres: output, ``--json``, and the error path (exit code 2, nothing written)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from tests.cli.conftest import Cli, user
from tests.cli.test_memories_cli import as_json, bad_input
from tests.support.savers import checkpoint, config, meta


def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="lmv-cli-"))


def test_export_import_round_trip(cli: Cli) -> None:
    u, copy = user(), user()
    cli.service.add_memory(u, "Prefers green tea", category="preference")
    cli.service.add_instruction(u, "Answer briefly", priority=7)
    file = workdir() / "export.json"
    exported = cli("export", "-u", u, str(file))
    assert exported.exit_code == 0 and "1 memories, 1 instructions" in exported.stdout
    assert "exporting" in exported.stderr or "done" in exported.stderr  # the progress bar
    doc = json.loads(file.read_text())
    assert (doc["format"], doc["user_id"], len(doc["memories"])) == ("langmem-vault-export", u, 1)
    to_stdout = cli("export", "-u", u)
    assert json.loads(to_stdout.stdout)["user_id"] == u
    result = as_json(cli("import", str(file), "-u", copy, "--json"))
    assert isinstance(result, dict)
    assert (result["user_id"], result["memories"], result["instructions"]) == (copy, 1, 1)
    texts = sorted(m.text for m in cli.service.list_memories(copy).items)
    assert texts == ["Answer briefly", "Prefers green tea"]
    again = cli("import", str(file), "-u", copy)
    assert again.exit_code == 0 and "imported 1 memories" in again.stdout
    bad_input(cli("export", "-u", "nobody-here"), "user_id")


def test_bad_import_files_write_nothing(cli: Cli) -> None:
    u = user()
    folder = workdir()
    broken = folder / "broken.json"
    broken.write_text('{"format": "langmem-vault-export", "version": 1, ')
    bad_input(cli("import", str(broken), "-u", u), "document", "not JSON")
    wrong = folder / "wrong.json"
    doc = {
        "format": "langmem-vault-export",
        "version": 1,
        "user_id": u,
        "memories": [
            {"key": "a", "value": {"text": "Fine"}},
            {"key": "b", "value": {"text": "Bad", "category": "gossip"}},
        ],
    }
    wrong.write_text(json.dumps(doc))
    bad_input(cli("import", str(wrong)), "memories[1].value.category")
    bad_input(cli("import", str(folder / "missing.json")), "file", "missing.json")
    newer = folder / "newer.json"
    newer.write_text(json.dumps({**doc, "version": 99}))
    bad_input(cli("import", str(newer)), "version 99")
    assert not cli.service.user_exists(u)
    assert cli.audit_count(u) == 0


def test_erase_soft_hard_and_errors(cli: Cli) -> None:
    u = user()
    cli.service.add_memory(u, "Prefers green tea")
    version = cli.service.saver.get_next_version(None, None)
    cp = checkpoint({"messages": [HumanMessage("hi")]}, {"messages": version})
    cli.service.saver.put(config("t-" + u, user_id=u), cp, meta(0), {"messages": version})
    bad_input(cli("erase", "-u", "nobody-here", "--yes"), "user_id")
    declined = cli("erase", "-u", u, input="n\n")
    assert declined.exit_code == 1 and cli.memory_count(u) == 1
    bad_input(cli("erase", "-u", u, "--soft-days", "-3", "--yes"), "soft_days")
    assert cli.memory_count(u) == 1
    soft = as_json(cli("erase", "-u", u, "--soft-days", "7", "--yes", "--json"))
    assert isinstance(soft, dict) and (soft["soft"], soft["store_items"]) == (True, 1)
    assert cli.memory_count(u) == 0
    assert "restored" in cli("unerase", "-u", u).stdout
    assert cli.memory_count(u) == 1
    hard = cli("erase", "-u", u, input="y\n")
    assert hard.exit_code == 0 and "1 threads" in hard.stdout
    assert not cli.service.user_exists(u)


def test_erase_whose_input_ends_says_so_in_one_line(cli: Cli) -> None:
    """``echo -n | langmem-vault erase -u U``: the real entry point (not click's test runner,
    which would swallow the abort), one error line, exit 2, nothing erased."""
    u = user()
    cli.service.add_memory(u, "Prefers green tea")
    argv = ["erase", "-u", u, "--dsn", cli.uri, "--schema", cli.schema]
    done = subprocess.run(
        [sys.executable, "-m", "langmem_vault", *argv], input="", capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "input ended" in line and "--yes" in line
    assert cli.memory_count(u) == 1


def test_consent_audit_stats_users(cli: Cli) -> None:
    u = user()
    fact = cli.service.add_memory(u, "Prefers green tea", category="preference")
    cli.service.edit_memory(u, fact.key, confidence=0.5)
    shown = as_json(cli("consent", "-u", u, "--json"))
    assert isinstance(shown, dict) and shown["allow_extraction"] is True
    changed = cli("consent", "-u", u, "--no-extraction")
    assert changed.exit_code == 0 and "allow_extraction" in changed.stdout
    assert cli.service.consent(u).allow_extraction is False
    log = as_json(cli("audit", "-u", u, "--json"))
    assert isinstance(log, list) and [e["action"] for e in log] == ["consent", "edit", "create"]
    assert log[0]["actor"].startswith("cli")
    edits = cli("audit", "-u", u, "--action", "edit", "--key", fact.key)
    assert edits.exit_code == 0 and "edit" in edits.stdout and "create" not in edits.stdout
    bad_input(cli("audit", "-u", u, "--action", "dance"), "action")
    bad_input(cli("audit", "-u", u, "--since", "someday"), "since")
    report = as_json(cli("stats", "-u", u, "--days", "3", "--json"))
    assert isinstance(report, dict)
    assert (report["total"], report["by_category"], len(report["growth"])) == (
        1,
        {"preference": 1},
        3,
    )
    table = cli("stats", "-u", u)
    assert table.exit_code == 0 and "preference" in table.stdout and "growth" in table.stdout
    everyone = as_json(cli("stats", "--json"))
    assert isinstance(everyone, dict) and everyone["users"] >= 1 and everyone["user_id"] is None
    bad_input(cli("stats", "-u", "nobody-here"), "user_id")
    bad_input(cli("stats", "-u", u, "--days", "0"), "days")
    names = as_json(cli("users", "--json"))
    assert isinstance(names, list) and u in names
    assert u in cli("users").stdout
    bad_input(cli("consent", "-u", "nobody-here"), "user_id")


def test_rotate_keys(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    u = user()
    old = "k1:" + base64.b64encode(os.urandom(32)).decode()
    new = "k2:" + base64.b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("LANGMEM_VAULT_KEY", old)
    key = as_json(cli("memories", "add", "-u", u, "Sees a therapist", "--private", "--json"))
    assert isinstance(key, dict)
    sealed = cli.service.store.get(("memories", u, "semantic"), key["key"])
    assert sealed is not None and sealed.value["enc_kid"] == "k1"
    monkeypatch.setenv("LANGMEM_VAULT_KEY", new)  # the old key is gone: nothing can be opened
    bad_input(cli("rotate-keys", "-u", u), "key", "1 private memories")
    assert cli.service.store.get(("memories", u, "semantic"), key["key"]).value["enc_kid"] == "k1"  # type: ignore[union-attr]
    monkeypatch.setenv("LANGMEM_VAULT_OLD_KEYS", old)
    done = as_json(cli("rotate-keys", "-u", u, "--json"))
    assert isinstance(done, list) and (done[0]["resealed"], done[0]["failed"]) == (1, 0)
    resealed = cli.service.store.get(("memories", u, "semantic"), key["key"])
    assert resealed is not None and resealed.value["enc_kid"] == "k2"
    shown = as_json(cli("memories", "show", "-u", u, key["key"], "--json"))
    assert isinstance(shown, dict) and shown["text"] == "Sees a therapist"
    bad_input(cli("rotate-keys", "-u", "nobody-here"), "user_id")


def test_reembed(cli: Cli) -> None:
    import psycopg

    from langmem_vault.embeddings import local_embeddings

    u, other = user(), user()
    added = as_json(cli("memories", "add", "-u", u, "Keeps bees in the garden", "--json"))
    as_json(cli("memories", "add", "-u", other, "Plays the cello", "--json"))
    assert isinstance(added, dict)
    stale = "[" + ",".join(["1"] + ["0"] * 383) + "]"  # as if another model had written it
    select = f"SELECT prefix, embedding::text FROM {cli.schema}.store_vectors"
    with psycopg.connect(cli.uri, autocommit=True) as conn:
        conn.execute(f"UPDATE {cli.schema}.store_vectors SET embedding = %s::vector", (stale,))
        assert as_json(cli("reembed", "-u", u, "--json")) == {"reembedded": 1}
        vectors = {
            p.split(".")[1]: [float(x) for x in e[1:-1].split(",")] for p, e in conn.execute(select)
        }
    want = local_embeddings().embed_query("Keeps bees in the garden")
    assert all(abs(a - b) < 1e-5 for a, b in zip(vectors[u], want, strict=True))
    assert vectors[other] == [1.0] + [0.0] * 383  # another user's vectors are left alone
    assert "re-embedded" in cli("reembed").stdout  # everyone
    bad_input(cli("reembed", "-u", "nobody-here"), "user_id")
