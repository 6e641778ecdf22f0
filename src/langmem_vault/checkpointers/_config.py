"""Reading what a saver needs from a RunnableConfig, with errors that name the missing field."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from langchain_core.runnables import RunnableConfig

from langmem_vault._run_config import config_value
from langmem_vault.checkpointers._text import to_db
from langmem_vault.db._migrations import check_schema


@dataclass(frozen=True, slots=True)
class Target:
    """Which thread, namespace and (optionally) checkpoint a config points at."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None


def _configurable(config: RunnableConfig | None, what: str) -> dict[str, Any]:
    if not isinstance(config, dict):
        raise TypeError(f"{what}: config must be a dict with a 'configurable' mapping")
    configurable = config.get("configurable")
    if not isinstance(configurable, dict):
        raise ValueError(
            f"{what}: config['configurable'] is missing; pass "
            "{'configurable': {'thread_id': ...}}"
        )
    return configurable


def target(config: RunnableConfig | None, what: str) -> Target:
    """The thread/namespace/checkpoint of ``config``, as stored (:mod:`.text`); a missing
    thread_id is a ValueError.

    >>> target({"configurable": {"thread_id": "t1"}}, "get_tuple")
    Target(thread_id='t1', checkpoint_ns='', checkpoint_id=None)
    """
    configurable = _configurable(config, what)
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise ValueError(
            f"{what}: config['configurable']['thread_id'] is required (the conversation to "
            "read or write), e.g. {'configurable': {'thread_id': 'user-42-chat-1'}}"
        )
    ns = configurable.get("checkpoint_ns") or ""
    if not isinstance(ns, str):
        raise ValueError(f"{what}: config['configurable']['checkpoint_ns'] must be a string")
    checkpoint_id = configurable.get("checkpoint_id") or None
    return Target(
        to_db(str(thread_id)),
        to_db(ns),
        None if checkpoint_id is None else to_db(str(checkpoint_id)),
    )


@dataclass(frozen=True, slots=True)
class Scope:
    """What ``list`` filters on: a thread, optionally one namespace and one checkpoint."""

    thread_id: str
    checkpoint_ns: str | None
    checkpoint_id: str | None


def scope(config: RunnableConfig | None) -> Scope | None:
    """The list scope of ``config``; no ``checkpoint_ns`` key means every namespace."""
    if config is None:
        return None
    found = target(config, "list")
    ns = _configurable(config, "list").get("checkpoint_ns")
    return Scope(found.thread_id, None if ns is None else found.checkpoint_ns, found.checkpoint_id)


def user_id_of(config: RunnableConfig) -> str | None:
    """The run's user id, by the rule the memory nodes use (:mod:`langmem_vault._run_config`);
    as stored (:mod:`.text`, which keeps NUL and lone surrogates: a drop-in saver keeps any id)."""
    value = config_value("user_id", config, any_text=True)
    return None if value is None else to_db(str(value))


def next_version(current: str | int | float | None) -> str:
    """A version that sorts after ``current``: a zero-padded counter and a random suffix.

    The suffix keeps two forks of one parent from writing the same channel version with
    different values (blobs are keyed by version). It is 8 hex digits rather than langgraph's
    16 decimal ones because every version is repeated in every checkpoint's JSON.

    >>> next_version(None)[:11]
    '0000000001.'
    """
    if current is None:
        number = 0
    elif isinstance(current, str):
        number = int(current.split(".")[0])
    else:
        number = int(current)
    return f"{number + 1:010d}.{random.getrandbits(32):08x}"


@cache
def render(template: str, schema: str) -> str:
    """``template`` with ``{schema}`` replaced by a validated schema name (cached)."""
    return template.replace("{schema}", check_schema(schema))
