"""Run one test body against VaultSaver and AsyncVaultSaver alike."""

from __future__ import annotations

import builtins
from typing import Any

from langgraph.checkpoint.base import Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.base.id import uuid6

from langmem_vault.checkpointers import AsyncVaultSaver, VaultSaver

AnySaver = VaultSaver | AsyncVaultSaver


async def call(saver: AnySaver, method: str, *args: Any, **kwargs: Any) -> Any:
    """``saver.method(...)`` for the sync saver, ``await saver.amethod(...)`` for the async."""
    if isinstance(saver, AsyncVaultSaver):
        if method == "list":
            return [t async for t in saver.alist(*args, **kwargs)]
        name = "setup" if method == "setup" else "a" + method
        return await getattr(saver, name)(*args, **kwargs)
    result = getattr(saver, method)(*args, **kwargs)
    return builtins.list(result) if method == "list" else result


def checkpoint(
    values: dict[str, Any] | None = None, versions: dict[str, Any] | None = None
) -> Checkpoint:
    values = values or {}
    return Checkpoint(
        v=4,
        id=str(uuid6(clock_seq=-1)),
        ts="2026-01-01T00:00:00+00:00",
        channel_values=values,
        channel_versions=versions if versions is not None else {k: 1 for k in values},
        versions_seen={},
        updated_channels=None,
    )


def config(thread_id: str, ns: str = "", checkpoint_id: str | None = None, **extra: Any) -> Any:
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns, **extra}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def meta(step: int = 0, **extra: Any) -> CheckpointMetadata:
    return {"source": "loop", "step": step, "parents": {}, **extra}  # type: ignore[typeddict-item]


async def put_chain(
    saver: AnySaver, thread_id: str, n: int, ns: str = "", **meta_extra: Any
) -> list[Any]:
    """``n`` checkpoints on one thread, each the child of the one before."""
    stored: list[Any] = []
    parent: str | None = None
    for i in range(n):
        cfg = config(thread_id, ns, parent)
        cp = checkpoint({"step": f"s{i}"}, {"step": i + 1})
        out = await call(saver, "put", cfg, cp, meta(i, **meta_extra), {"step": i + 1})
        stored.append(out)
        parent = out["configurable"]["checkpoint_id"]
    return stored


def ids(tuples: list[CheckpointTuple]) -> list[str]:
    return [t.config["configurable"]["checkpoint_id"] for t in tuples]
