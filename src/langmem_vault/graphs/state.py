"""``MemoryState``: the graph state the memory nodes share.

The injected memory block lives in ``memory_context`` (a state key), not in ``messages``, so
checkpoints do not grow with it turn after turn.

>>> from langgraph.graph import StateGraph
>>> builder = StateGraph(MemoryState)
"""

from __future__ import annotations

from typing import Any, NotRequired

from langgraph.graph import MessagesState

from langmem_vault.memory.injected import InjectedMemory

__all__ = ["MemoryState"]


class MemoryState(MessagesState):
    """Messages plus the memory keys written by inject, respond and compact.

    - ``memory_context``: the rendered memory section for this turn (inject writes it);
    - ``memory_refs``: alias (``"M1"``) -> store key of each memory injected this turn;
    - ``memory_items``: the same memories as data (``memory.injected.InjectedMemory``), which
      respond attaches to its system message for code that acts on them;
    - ``cited``: aliases the model cited in its last answer (respond writes it);
    - ``running_summary``: summary of turns compacted out of ``messages`` (compact owns it);
    - ``extraction``: an ``Extraction`` (as a JSON dict) waiting for the reconcile node, which
      applies and clears it (optional: extract in inline mode reconciles by itself).
    """

    memory_context: str
    memory_refs: dict[str, str]
    memory_items: list[InjectedMemory]
    cited: list[str]
    running_summary: str
    extraction: NotRequired[dict[str, Any] | None]
