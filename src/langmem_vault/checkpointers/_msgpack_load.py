"""Decode the default serde's msgpack with the very same result, without its per-object lookups.

A cold read of a long thread spends most of its time turning msgpack into LangChain messages.
langgraph's ``JsonPlusSerializer`` does that in an ext hook which, for every message, imports
the class's module by name and checks the class against its allow-list before calling it. The
hook here does those lookups once per class: for the types langgraph allows in every mode
(``SAFE_MSGPACK_TYPES``, which holds LangChain's messages) it keeps the class and builds each
object the same way (``cls(**kwargs)``, then ``model_construct`` if that raises, as langgraph
does). Every other ext, and any error, goes to the serializer's own hook, which then decides
and warns as it always does. Only a plain ``JsonPlusSerializer`` without a custom hook is sped
up; any other serde (an encrypting one, a subclass) is called as it is.

>>> from langchain_core.messages import HumanMessage
>>> from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
>>> serde = JsonPlusSerializer()
>>> _, data = serde.dumps_typed([HumanMessage("hi", id="1")])
>>> loads(serde, ("msgpack", data)) == serde.loads_typed(("msgpack", data))
True
"""

from __future__ import annotations

import contextlib
import importlib
import weakref
from collections.abc import Callable
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import EXT_PYDANTIC_V2, JsonPlusSerializer

try:  # private in langgraph: without it, every serde is called as it is
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_TYPES
except ImportError:  # pragma: no cover - depends on the installed langgraph
    SAFE_MSGPACK_TYPES = frozenset()

_OPTION = ormsgpack.OPT_NON_STR_KEYS
_UNKNOWN: Any = object()
Loader = Callable[[bytes], Any]
_loaders: weakref.WeakKeyDictionary[Any, Loader] = weakref.WeakKeyDictionary()


def loads(serde: SerializerProtocol, typed: tuple[str, bytes]) -> Any:
    """``serde.loads_typed(typed)``, msgpack through :func:`loader`."""
    if typed[0] == "msgpack":
        return loader(serde)(typed[1])
    return serde.loads_typed(typed)


def loader(serde: SerializerProtocol) -> Loader:
    """A function giving what ``serde.loads_typed(("msgpack", data))`` gives."""
    try:
        return _loaders[serde]
    except (KeyError, TypeError):
        pass
    made = _make(serde)
    with contextlib.suppress(TypeError):  # not weak-referenceable: built again next time
        _loaders[serde] = made
    return made


def _make(serde: SerializerProtocol) -> Loader:
    fallback: Callable[[int, bytes], Any] | None = getattr(serde, "_unpack_ext_hook", None)
    if (
        type(serde) is not JsonPlusSerializer
        or getattr(serde, "_custom_unpack_ext_hook", True)
        or fallback is None
        or not SAFE_MSGPACK_TYPES
    ):
        return lambda data: serde.loads_typed(("msgpack", data))
    classes: dict[tuple[str, str], Any] = {}

    def resolve(key: tuple[str, str]) -> Any:
        if key not in SAFE_MSGPACK_TYPES:
            return None
        try:
            return getattr(importlib.import_module(key[0]), key[1])
        except Exception:
            return None

    def hook(code: int, data: bytes) -> Any:
        if code != EXT_PYDANTIC_V2:
            return fallback(code, data)
        try:
            tup = ormsgpack.unpackb(data, ext_hook=hook, option=_OPTION)
            key = (tup[0], tup[1])
            cls = classes.get(key, _UNKNOWN)
            if cls is _UNKNOWN:
                cls = classes[key] = resolve(key)
            if cls is None:
                return fallback(code, data)
            try:
                return cls(**tup[2])
            except Exception:
                return cls.model_construct(**tup[2])
        except Exception:  # langgraph's hook has its own answer for broken data
            return fallback(code, data)

    def load(data: bytes) -> Any:
        return ormsgpack.unpackb(data, ext_hook=hook, option=_OPTION)

    return load
