"""``langmem-vault eval locomo``: the table, the JSON of every answer, the plot, the reference
(langgraph's PostgresStore) beside it, a scripted model for --model, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmem_vault.cli import _eval as eval_cli
from tests.cli.conftest import Cli
from tests.eval.scripted import scripted_model

DATA = Path(__file__).parents[1] / "eval" / "data" / "mini_locomo.json"


def test_eval_locomo_beside_postgres_store(cli: Cli, tmp_path: Path) -> None:
    output, plot = tmp_path / "answers.json", tmp_path / "locomo.png"
    args = ["--k", "2", "--reference", "postgres", "--output", str(output), "--plot", str(plot)]
    result = cli("eval", "locomo", str(DATA), *args)
    assert result.exit_code == 0, result.output
    doc = json.loads(output.read_text())
    rows = {row["name"]: row for row in doc["by_category"]}
    assert rows["single-hop"]["recall"] == 1.0
    assert rows["single-hop"]["reference_recall"] == pytest.approx(0.8)
    assert rows["multi-hop"]["recall"] == pytest.approx(0.75)
    assert rows["all four (1-4)"]["recall"] == pytest.approx(17 / 18)
    assert len(doc["questions"]) == 10
    # The table: each category with the ratio to PostgresStore (1.0 / 0.8).
    single = next(line for line in result.output.splitlines() if "single-hop" in line)
    assert "1.000" in single and "0.800" in single and "1.25x" in single
    assert plot.read_bytes()[:4] == b"\x89PNG"
    # The reference's scratch schema is gone.
    import psycopg

    with psycopg.connect(cli.uri) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'locomo_reference_%'"
        ).fetchone()
    assert left == (0,)


def test_eval_locomo_with_a_model(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eval_cli, "load_model", lambda spec: scripted_model())
    output = tmp_path / "answers.json"
    args = ["--conversations", "0", "--model", "scripted", "--output", str(output)]
    result = cli("eval", "locomo", str(DATA), "--k", "2", *args, "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 0, result.output
    doc = json.loads(output.read_text())
    answers = {q["question"]: q for q in doc["questions"]}
    assert len(answers) == 8
    assert answers["Where did Ana move?"]["prediction"] == "Paris"
    assert answers["Where did Ana move?"]["judge"] is False
    assert answers["What is the name of Ben's cat?"]["judge"] is True
    rows = {row["name"]: row for row in doc["by_category"]}
    assert rows["all four (1-4)"]["j"] == pytest.approx(2 / 7)
    assert " J " in result.output or "┃ J" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--conversations", "0-5"], "--conversations: '0-5' is outside 0-1"),
        (["--reference", "mongo"], "--reference: expected one of postgres; got 'mongo'"),
        (["--judge", "x"], "--judge needs --model"),
    ],
)
def test_eval_locomo_bad_options_exit_2(cli: Cli, args: list[str], message: str) -> None:
    result = cli("eval", "locomo", str(DATA), *args)
    assert result.exit_code == 2
    assert message in result.output


def test_eval_locomo_bad_file_exit_2(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"sample_id": "s", "conversation": {}, "qa": []}]))
    result = cli("eval", "locomo", str(bad))
    assert result.exit_code == 2
    assert "sample 0 (s).conversation: no session_<n> turns" in result.output
