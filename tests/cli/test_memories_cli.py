"""``langmem-vault memories|instructions|episodes|threads`` on the real embedded Postgres:
each command's table and ``--json`` output, and its error path (one line, exit code 2,
nothing written: checked in the database)."""

from __future__ import annotations

import base64
import json
import os

import pytest
from click.testing import Result
from langchain_core.messages import AIMessage, HumanMessage

from langmem_vault.memory._vault import MemoryVault
from tests.cli.conftest import Cli, user
from tests.support.savers import checkpoint, config, meta


def bad_input(result: Result, *needles: str) -> None:
    """Exit code 2 and one error line on stderr naming what is wrong."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def as_json(result: Result) -> object:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_add_list_show_and_json(cli: Cli) -> None:
    u = user()
    added = as_json(
        cli(
            "memories",
            "add",
            "-u",
            u,
            "Prefers green tea",
            "--category",
            "preference",
            "--tag",
            "drink",
            "--json",
        )
    )
    assert isinstance(added, dict) and added["text"] == "Prefers green tea"
    key = added["key"]
    plain = cli("memories", "add", "-u", u, "Works at Acme", "--category", "company")
    assert plain.exit_code == 0 and plain.stdout.startswith("added ")
    listed = cli("memories", "list", "-u", u)
    assert listed.exit_code == 0
    assert "Prefers green tea" in listed.stdout and "1-2 of 2" in listed.stdout
    page = as_json(
        cli("memories", "list", "-u", u, "--category", "preference", "--exact-total", "--json")
    )
    assert isinstance(page, dict) and (page["total"], page["items"][0]["key"]) == (1, key)
    tagged = as_json(cli("memories", "list", "-u", u, "--tag", "drink", "--since", "1d", "--json"))
    assert isinstance(tagged, dict) and [m["key"] for m in tagged["items"]] == [key]
    shown = cli("memories", "show", "-u", u, key)
    assert shown.exit_code == 0 and "preference" in shown.stdout and "confidence" in shown.stdout
    one = as_json(cli("memories", "show", "-u", u, key, "--json"))
    assert isinstance(one, dict) and one["value"]["tags"] == ["drink"]


def test_unknown_user_and_bad_values(cli: Cli) -> None:
    u = user()
    fact = cli.service.add_memory(u, "Likes jazz")
    before = (cli.memory_count(u), cli.audit_count(u))
    for args in (
        ("memories", "list", "-u", "nobody-here"),
        ("memories", "show", "-u", "nobody-here", fact.key),
        ("memories", "search", "-u", "nobody-here", "jazz"),
        ("memories", "edit", "-u", "nobody-here", fact.key, "--text", "x"),
        ("memories", "forget", "-u", "nobody-here", fact.key),
        ("memories", "confirm", "-u", "nobody-here", fact.key),
    ):
        bad_input(cli(*args), "user_id", "nobody-here")
    bad_input(cli("memories", "add", "-u", u, "x", "--category", "gossip"), "category")
    bad_input(cli("memories", "add", "-u", u, "x", "--confidence", "1.5"), "confidence")
    bad_input(cli("memories", "list", "-u", u, "--status", "asleep"), "status")
    bad_input(cli("memories", "list", "-u", u, "--since", "last tuesday"), "since")
    bad_input(cli("memories", "show", "-u", u, "no-such-key"), "key", "no-such-key")
    bad_input(cli("memories", "edit", "-u", u, fact.key, "--set", "colour=red"), "colour")
    bad_input(cli("memories", "edit", "-u", u, fact.key, "--set", "nonsense"), "FIELD=VALUE")
    bad_input(cli("memories", "edit", "-u", u, fact.key, "--confidence", "3"), "confidence")
    bad_input(cli("memories", "search", "-u", u, "jazz", "--type", "fuzzy"), "search_type")
    bad_input(cli("memories", "confirm", "-u", u, fact.key), "status", "not pending")
    bad_input(cli("memories", "restore", "-u", u, fact.key), "status")
    assert (cli.memory_count(u), cli.audit_count(u)) == before
    assert cli.service.get_memory(u, fact.key).text == "Likes jazz"


def test_edit_forget_restore(cli: Cli) -> None:
    u = user()
    key = cli.service.add_memory(u, "Prefers green tea").key
    edited = as_json(
        cli(
            "memories",
            "edit",
            "-u",
            u,
            key,
            "--text",
            "Prefers black coffee",
            "--set",
            "confidence=0.4",
            "--json",
        )
    )
    assert isinstance(edited, dict) and (edited["text"], edited["confidence"]) == (
        "Prefers black coffee",
        0.4,
    )
    hits = as_json(
        cli("memories", "search", "-u", u, "black coffee", "--type", "semantic", "--json")
    )
    assert isinstance(hits, dict) and [h["key"] for h in hits["items"]] == [key]
    assert cli("memories", "forget", "-u", u, key).stdout.startswith("forgot")
    assert cli.service.get_memory(u, key).status == "forgotten"
    restored = cli("memories", "restore", "-u", u, key)
    assert restored.exit_code == 0 and "now active" in restored.stdout
    gone = as_json(cli("memories", "forget", "-u", u, key, "--hard", "--json"))
    assert isinstance(gone, dict) and gone["key"] == key
    assert cli.memory_count(u) == 0


def test_pending_queue_confirm_reject_and_search(cli: Cli) -> None:
    u = user()
    a = cli.service.add_memory(u, "Lives in Berlin").key
    b = cli.service.add_memory(u, "Owns a cat").key
    for key in (a, b):
        cli.service.edit_memory(u, key, status="pending")
    queue = as_json(
        cli("memories", "list", "-u", u, "--status", "pending", "--exact-total", "--json")
    )
    assert isinstance(queue, dict) and queue["total"] == 2
    table = cli("memories", "list", "-u", u, "--status", "pending")
    assert "Owns a cat" in table.stdout and "pending" in table.stdout
    assert "now active" in cli("memories", "confirm", "-u", u, a).stdout
    rejected = as_json(cli("memories", "reject", "-u", u, b, "--json"))
    assert isinstance(rejected, dict) and rejected["status"] == "forgotten"
    assert cli.service.list_memories(u, status=["pending"]).items == []
    found = as_json(cli("memories", "search", "-u", u, "Berlin", "--type", "text", "--json"))
    assert isinstance(found, dict)
    assert [(h["key"], h["match_type"]) for h in found["items"]] == [(a, "text")]
    shown = cli("memories", "search", "-u", u, "Berlin")
    assert shown.exit_code == 0 and "both" in shown.stdout


def test_a_memory_sealed_with_a_lost_key_is_listed_marked(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    u = user()
    monkeypatch.setenv("LANGMEM_VAULT_KEY", "k1:" + base64.b64encode(os.urandom(32)).decode())
    assert cli("memories", "add", "-u", u, "Sees a therapist", "--private").exit_code == 0
    assert cli("memories", "add", "-u", u, "Likes tea").exit_code == 0
    monkeypatch.setenv("LANGMEM_VAULT_KEY", "k2:" + base64.b64encode(os.urandom(32)).decode())
    listed = cli("memories", "list", "-u", u, "--json")
    assert listed.exit_code == 0, listed.output  # one lost key does not hide the rest
    items = json.loads(listed.output)["items"]
    lost = [m for m in items if m["unreadable"]]
    assert len(items) == 2 and len(lost) == 1 and "'k1'" in lost[0]["unreadable"]


def test_instructions(cli: Cli) -> None:
    u = user()
    low = as_json(
        cli("instructions", "add", "-u", u, "Answer briefly", "--priority", "3", "--json")
    )
    high = cli(
        "instructions",
        "add",
        "-u",
        u,
        "Answer in French",
        "--priority",
        "9",
        "--condition",
        "topic contains paris",
    )
    assert low and high.exit_code == 0
    listed = as_json(cli("instructions", "list", "-u", u, "--json"))
    assert isinstance(listed, list) and [i["priority"] for i in listed] == [9, 3]
    assert isinstance(low, dict)
    table = cli("instructions", "list", "-u", u)
    assert "topic contains paris" in table.stdout
    edit = cli(
        "instructions", "edit", "-u", u, low["key"], "--priority", "10", "--expires", "2099-01-01"
    )
    assert edit.exit_code == 0 and "expires_at, priority" in edit.stdout
    assert cli.service.get_memory(u, low["key"]).priority == 10
    disabled = as_json(cli("instructions", "disable", "-u", u, low["key"], "--json"))
    assert isinstance(disabled, dict) and disabled["status"] == "disabled"
    active = as_json(cli("instructions", "list", "-u", u, "--active", "--json"))
    assert isinstance(active, list) and [i["priority"] for i in active] == [9]
    before = cli.audit_count(u)
    bad_input(cli("instructions", "edit", "-u", u, low["key"], "--priority", "11"), "priority")
    bad_input(cli("instructions", "add", "-u", u, "x", "--condition", "moon is full"), "condition")
    bad_input(cli("instructions", "list", "-u", "nobody-here"), "user_id")
    fact = cli.service.add_memory(u, "Likes jazz").key
    bad_input(cli("instructions", "disable", "-u", u, fact), "not an instruction")
    assert cli.audit_count(u) == before + 1  # the fact added above, nothing else
    assert cli.service.get_memory(u, low["key"]).priority == 10


def test_episodes_and_threads(cli: Cli) -> None:
    u = user()
    MemoryVault(cli.service.store, user_id=u).add_episode("Planned the Rome trip", importance=0.8)
    listed = cli("episodes", "list", "-u", u)
    assert listed.exit_code == 0 and "Planned the Rome trip" in listed.stdout
    found = as_json(cli("episodes", "list", "-u", u, "--json"))
    assert isinstance(found, list) and found[0]["kind"] == "episode"
    bad_input(cli("episodes", "list", "-u", "nobody-here"), "user_id")
    bad_input(cli("episodes", "list", "-u", u, "--limit", "0"), "limit")

    saver = cli.service.saver
    version = saver.get_next_version(None, None)
    messages = [HumanMessage("I live in Lyon"), AIMessage("Noted.")]
    cp = checkpoint({"messages": messages}, {"messages": version})
    saver.put(config("t-" + u, user_id=u), cp, meta(0), {"messages": version})
    threads = as_json(cli("threads", "list", "-u", u, "--json"))
    assert isinstance(threads, list) and [t["thread_id"] for t in threads] == ["t-" + u]
    shown = cli("threads", "show", "-u", u, "t-" + u)
    assert shown.exit_code == 0 and "I live in Lyon" in shown.stdout
    detail = as_json(cli("threads", "show", "-u", u, "t-" + u, "--json"))
    assert isinstance(detail, dict) and detail["messages"][1]["content"] == "Noted."
    bad_input(cli("threads", "show", "-u", u, "t-missing"), "thread_id")
    bad_input(cli("threads", "delete", "-u", "nobody-here", "t-" + u), "user_id")
    assert len(saver.list_threads(u)) == 1
    assert "deleted thread" in cli("threads", "delete", "-u", u, "t-" + u).stdout
    assert saver.list_threads(u) == []


def test_list_pages_in_sql_and_prints_the_next_cursor(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langmem_vault.service._memories import MemoriesMixin

    u = user()
    keys = [cli.service.add_memory(u, f"Fact number {n}").key for n in range(3)]

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the listing read every memory of the user")

    monkeypatch.setattr(MemoriesMixin, "_records_plan", refuse)
    first = cli("memories", "list", "-u", u, "--limit", "2")
    assert first.exit_code == 0, first.output
    assert "1-2 of 3" in first.stdout and "Fact number 2" in first.stdout
    cursor = first.stdout.split("--after ")[1].split()[0]
    rest = as_json(cli("memories", "list", "-u", u, "--limit", "2", "--after", cursor, "--json"))
    assert isinstance(rest, dict) and [m["key"] for m in rest["items"]] == [keys[0]]
    assert rest["next"] is None
