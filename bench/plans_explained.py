"""EXPLAIN evidence for the bench scripts: the plans a connection's statements really ran
(auto_explain: a prepared statement's generic plan included), their buffers, printed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psycopg


def auto_explain(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """Every statement ``conn`` runs from now on leaves its executed plan (JSON) here: the
    plan the store really ran (a prepared statement's generic plan included), with buffers."""
    plans: list[dict[str, Any]] = []

    def keep(diag: psycopg.errors.Diagnostic) -> None:
        message = diag.message_primary or ""
        if "plan:" in message:
            plans.append(json.loads(message[message.index("{") :]))

    conn.add_notice_handler(keep)
    for setting in (
        "LOAD 'auto_explain'",
        "SET auto_explain.log_min_duration = 0",
        "SET auto_explain.log_analyze = on",
        "SET auto_explain.log_buffers = on",
        "SET auto_explain.log_format = json",
        "SET auto_explain.log_level = notice",
    ):
        conn.execute(setting)
    return plans


def walk(node: dict[str, Any], depth: int = 0) -> list[str]:
    line = (
        f"{'  ' * depth}{node['Node Type']}"
        + (f" on {node['Relation Name']}" if "Relation Name" in node else "")
        + (f" using {node['Index Name']}" if "Index Name" in node else "")
        + f"  rows={node.get('Actual Rows')} loops={node.get('Actual Loops')}"
        + f" hit={node.get('Shared Hit Blocks')} read={node.get('Shared Read Blocks')}"
        + f" ms={node.get('Actual Total Time')}"
        + (f" cond={node['Index Cond']}" if "Index Cond" in node else "")
        + (f" filter={node['Filter']}" if "Filter" in node else "")
    )
    return [line] + [x for child in node.get("Plans", []) for x in walk(child, depth + 1)]


def buffers(plans: list[dict[str, Any]]) -> int:
    return sum(
        p["Plan"].get("Shared Hit Blocks", 0) + p["Plan"].get("Shared Read Blocks", 0)
        for p in plans
    )


def backend_cpu(conn: psycopg.Connection[Any]) -> float:
    """CPU seconds the connection's server process has used (user + system), from /proc: a
    local server only. Far less sensitive to other jobs on the machine than wall time."""
    text = Path(f"/proc/{conn.info.backend_pid}/stat").read_text()
    stat = text.rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
