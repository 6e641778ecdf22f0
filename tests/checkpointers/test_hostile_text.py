"""Chat turns and ids with NUL bytes or lone surrogates are kept exactly, as InMemorySaver
keeps them (Postgres text cannot hold either: the saver must not lose the turn)."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langmem_vault.checkpointers import AsyncVaultSaver
from tests.checkpointers.test_graphs import Runner, chat_graph, compare, texts
from tests.support.savers import AnySaver

ODD = ["hi\x00there", "lone \ud800 surrogate", "both \x00\udfff", "ok"]


@pytest.mark.parametrize(
    ("thread_id", "user_id"),
    [("t-plain", "u-plain"), ("t\x00nul", "u\x00nul"), ("t\ud800", "u\udfff")],
)
async def test_odd_text_round_trips_through_a_graph(
    any_saver: AnySaver, thread_id: str, user_id: str
) -> None:
    config = {"configurable": {"thread_id": thread_id, "user_id": user_id}}

    async def scenario(run: Runner) -> Any:
        for text in ODD:
            await run.invoke({"messages": [HumanMessage(text)]}, config)
        state = await run.state(config)
        return texts(state.values["messages"]), len(await run.history(config))

    # The same state as InMemorySaver (whose serializer itself turns a lone surrogate in a
    # message into "?"), and a turn is never lost.
    got = await compare(any_saver, chat_graph, scenario)
    assert got[0][0] == "human:hi\x00there" and len(got[0]) == 2 * len(ODD)
    # the per-user thread index keeps the ids and the title exactly
    if isinstance(any_saver, AsyncVaultSaver):
        [info] = await any_saver.alist_threads(user_id)
    else:
        [info] = any_saver.list_threads(user_id)
    assert info.thread_id == thread_id and info.user_id == user_id
    assert info.title == "hi\x00there"
