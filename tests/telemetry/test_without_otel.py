"""Without the [otel] extra nothing of OpenTelemetry is imported, and inject still runs,
traced by nobody but timed and accounted as usual (a fresh interpreter where it cannot be
imported)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys

    import traceback

    class NoOpenTelemetry:
        # as if the package were not installed; notes the attempts of langmem_vault.telemetry
        # (langsmith makes its own)
        attempts = []

        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                frames = traceback.extract_stack()
                if any("/langmem_vault/telemetry/" in f.filename for f in frames):
                    self.attempts.append(name)
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    blocker = NoOpenTelemetry()
    sys.meta_path.insert(0, blocker)

    from langchain_core.messages import HumanMessage
    from langgraph.graph import START, StateGraph
    from langgraph.store.memory import InMemoryStore

    from langmem_vault.db._steps import run_steps
    from langmem_vault.graphs._state import MemoryState
    from langmem_vault.memory._recall.accounting import METRICS, accounting_plan
    from langmem_vault.memory._vault import MemoryVault
    from langmem_vault.nodes._inject import create_inject_node
    from langmem_vault.telemetry import tracing_enabled

    # inject alone: the stage a turn always runs (extraction would load the PII engines)
    store = InMemoryStore()
    MemoryVault(store, user_id="u1").remember("User lives in Lyon", source="manual")
    builder = StateGraph(MemoryState).add_node("inject", create_inject_node(store=store))
    graph = builder.add_edge(START, "inject").compile()
    config = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    for said in ("Where do I live?", "And where do I work?"):
        out = graph.invoke({"messages": [HumanMessage(said)]}, config)
        assert "Lyon" in out["memory_context"], out
    METRICS.flush()
    assert set(out["memory_status"].values()) == {"ok"}, out["memory_status"]
    assert not tracing_enabled()
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry")
    assert not loaded, loaded
    assert blocker.attempts == ["opentelemetry"], blocker.attempts  # one look, then never again
    stages = run_steps(accounting_plan("u1"), store).latency_ms
    assert stages["inject"]["count"] == 2, stages
    print("ok")
    """
)


def test_nothing_of_opentelemetry_is_imported_without_it() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
