"""Memory stages as named runs for LangChain callbacks (LangSmith and any other tracer).

A graph shows a node's run under the name the app gave the node ("inject", or a
middleware hook's "MemoryMiddleware.before_agent"); what the stage did is not in it. When
a stage ends, :func:`report_stage` adds one child run to the current run, named
``langmem_vault.<stage>``, its metadata the stage's counts (``candidates``, ``injected``,
``extracted``, ``superseded``, ``input_tokens``, ``output_tokens``, ``model_calls``...) and
``duration_ms``. The counts are known only at the end, and a run's metadata is given when it
starts, so the child run starts and ends then (the parent run carries the wall time).
Without callbacks in the run (no tracer), nothing is built.

>>> report_stage("inject", {"injected": 2}, 1.5)  # outside any run: nothing to report to
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables.config import ensure_config, get_callback_manager_for_config

__all__ = ["report_stage"]

PREFIX = "langmem_vault"


def report_stage(stage: str, counts: Mapping[str, int | float], duration_ms: float) -> None:
    """Add the ``langmem_vault.<stage>`` run with ``counts`` to the current run."""
    config = ensure_config()
    callbacks = config.get("callbacks")
    if not callbacks:
        return
    manager = get_callback_manager_for_config(config)
    if not manager.handlers:
        return
    # the manager is this call's own copy: its metadata goes to this run only
    manager.add_metadata(
        {"langmem_vault.stage": stage, **counts, "duration_ms": round(duration_ms, 3)},
        inherit=False,
    )
    run = manager.on_chain_start(None, {"stage": stage}, name=f"{PREFIX}.{stage}")
    outputs: dict[str, Any] = dict(counts)
    run.on_chain_end(outputs)
