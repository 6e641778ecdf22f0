"""The offline demo and the CLI entry point."""

from __future__ import annotations

import pytest

from langmem_vault import cli
from langmem_vault._demo import run_demo


def test_demo_second_thread_answers_from_the_first(
    pg_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lines: list[str] = []
    transcript = run_demo(dsn=pg_uri, out=lines.append)
    second = {user: bot for thread, user, bot in transcript if thread == "thread-2"}
    where = second["Where do I live, and where do I work?"]
    assert "Lyon" in where and "Acme Robotics" in where and where.endswith("Cheers!")
    assert "window seats" in second["Which seat should I book on my flight?"]
    assert "Berlin" in second["Where do I live now?"]
    assert any("superseded" in line and "Lyon" in line for line in lines)
    assert any("pending_confirmation" in line and "Rust" in line for line in lines)


def test_cli_parses_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, object]] = []
    monkeypatch.setattr("langmem_vault._demo.run_demo", lambda **kw: seen.append(kw))
    assert cli.main(["demo", "--in-memory", "--offline"]) == 0
    assert seen == [{"dsn": None, "in_memory": True, "offline": True, "model": None}]
    with pytest.raises(Exception, match="No such option: --no-such-option"):
        cli.main(["demo", "--no-such-option"])
