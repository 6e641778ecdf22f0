"""``MemoryState``: the graph state the memory nodes share.

The injected memory block lives in ``memory_context`` (a state key), not in ``messages``, so
checkpoints do not grow with it turn after turn.

The graph's input is only ``messages`` (:class:`MemoryInput`), its output the state without
the internal hand-over key (:class:`MemoryOutput`), and :class:`MemoryContext` is the run
context (``user_id``): ``build_memory_graph`` uses all three, so LangGraph Studio's form asks
for a message and a user id, not for ``memory_refs`` or ``extraction``.

>>> from langgraph.graph import START, StateGraph
>>> builder = StateGraph(
...     MemoryState, context_schema=MemoryContext, input_schema=MemoryInput,
...     output_schema=MemoryOutput,
... )
>>> builder = builder.add_node("noop", lambda state: {}).add_edge(START, "noop")
>>> sorted(builder.compile().get_input_jsonschema()["properties"])
['messages']
"""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from langgraph.graph import MessagesState

# pydantic builds the JSON schemas Studio shows from these; it needs this TypedDict on 3.11.
from typing_extensions import TypedDict

from langmem_vault.memory._recall.injected import InjectedMemory
from langmem_vault.nodes._degrade import merge_status

__all__ = ["MemoryContext", "MemoryInput", "MemoryOutput", "MemoryState"]


# A TypedDict, not a dataclass: a context with keys of its own (for namespace templates such
# as ("memories", "{org_id}", "{user_id}")) passes through as given. Its docstring is the
# description LangGraph Studio shows above the form.
class MemoryContext(TypedDict, total=False):
    """user_id: whose memories this run reads and writes (configurable.user_id wins when both
    are given)."""

    user_id: str


class MemoryInput(MessagesState):
    """What a run takes: new ``messages`` only (the memory keys are written by the nodes)."""


class MemoryState(MessagesState):
    """Messages plus the memory keys written by inject, respond and compact.

    - ``memory_context``: the rendered memory section for this turn (inject writes it);
    - ``memory_refs``: alias (``"M1"``) -> store key of each memory injected this turn;
    - ``memory_items``: the same memories as data (``memory.injected.InjectedMemory``), which
      respond attaches to its system message for code that acts on them;
    - ``cited``: aliases the model cited in its last answer (respond writes it);
    - ``running_summary``: summary of turns compacted out of ``messages`` (compact owns it);
    - ``memory_status``: each memory stage of the last turn -> ``"ok"`` or why it could not
      help (:mod:`langmem_vault.nodes._degrade`);
    - ``extraction``: an ``Extraction`` (as a JSON dict) waiting for the reconcile node, which
      applies and clears it (optional: extract in inline mode reconciles by itself);
    - ``memory_dropped``: what consent refused to learn this turn, one reason per proposal
      ("fact: sensitive (medical)"), never its text (inline extraction and catch-up).
    """

    memory_context: str
    memory_refs: dict[str, str]
    memory_items: list[InjectedMemory]
    cited: list[str]
    running_summary: str
    memory_status: Annotated[dict[str, str], merge_status]
    extraction: NotRequired[dict[str, Any] | None]
    memory_dropped: NotRequired[list[str]]


class MemoryOutput(MessagesState):
    """What a run returns: :class:`MemoryState` without the internal ``extraction``."""

    memory_context: str
    memory_refs: dict[str, str]
    memory_items: list[InjectedMemory]
    cited: list[str]
    running_summary: str
    memory_dropped: NotRequired[list[str]]
    memory_status: Annotated[dict[str, str], merge_status]
