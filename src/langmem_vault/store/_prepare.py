"""A store batch checked before any I/O: every op validated, the texts to embed collected.

``prepare_batch`` does every check and extracts the texts to embed before any I/O, so a bad
op fails the whole batch with nothing written (store/_plans.py then runs it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import (
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    SearchOp,
    get_text_at_path,
    tokenize_path,
)

from langmem_vault._tenants import DEFAULT_RULE, TenantRule
from langmem_vault.store._entities import ExpandOp, LinkOp, check_expand, check_link
from langmem_vault.store._entity_plans import link_names
from langmem_vault.store._filters import FilterBuilder
from langmem_vault.store._mirrors import MirrorSearchOp, check_mirror
from langmem_vault.store._pages import CountOp, PageOp, check_count_op, check_page_op
from langmem_vault.store._ranking import SearchRanking
from langmem_vault.store._tallies import TallyOp, check_tally
from langmem_vault.store._validation import (
    InvalidValueError,
    check_field,
    check_key,
    check_minutes,
    check_namespace,
    check_page,
    check_query,
    encode_value,
)

Key = tuple[tuple[str, ...], str]


@dataclass(frozen=True)
class StoreSettings:
    """What the plans need to know about a store (no connections, no models)."""

    schema: str
    index: IndexConfig | None
    ranking: SearchRanking
    max_value_bytes: int
    #: which user each namespace belongs to (the tenant column, store/0006)
    tenants: TenantRule = DEFAULT_RULE

    @property
    def hybrid(self) -> bool:
        return self.index is not None

    @property
    def fields(self) -> list[str]:
        if self.index is None:
            return ["$"]
        return list(self.index.get("fields") or ["$"])


#: indexed when none of the configured ``fields`` is in a value (LangMem's value shape)
FALLBACK_FIELDS = ["content"]


@dataclass
class PreparedPut:
    prefix: str
    key: str
    value_json: str | None  # None deletes
    ttl: float | None
    text: str | None  # full-text document; None when not indexed
    embed: list[tuple[str, str]] = field(default_factory=list)  # (field name, text)
    # index=False: leave an existing item's index as it is (as InMemoryStore and PostgresStore
    # do), so value-only updates such as access counters cost no embedding.
    reindex: bool = True


#: what ``batch`` takes: langgraph's ops, and this store's own (store/_mirrors.py,
#: store/_entities.py, store/_pages.py)
StoreOp = Op | MirrorSearchOp | LinkOp | ExpandOp | PageOp | CountOp | TallyOp


@dataclass
class PreparedBatch:
    ops: list[StoreOp]
    puts: dict[Key, PreparedPut]
    queries: list[str]  # distinct search queries, to embed
    links: list[LinkOp] = field(default_factory=list)

    @property
    def read_only(self) -> bool:
        """No puts: the batch needs no transaction block. Its reads each see the latest
        committed data, as in one at READ COMMITTED, and its only possible write, a TTL
        refresh of items it read, is one statement of its own (``sql.refresh_ttl``)."""
        return not self.puts and not self.links

    @property
    def doc_texts(self) -> list[str]:
        """Distinct texts to embed for this batch's puts and entity names, first-seen order."""
        texts = (t for p in self.puts.values() for _, t in p.embed)
        return list(dict.fromkeys([*texts, *link_names(self.links)]))


def prefix_of(namespace: tuple[str, ...]) -> str:
    return ".".join(namespace)


def _string_leaves(obj: Any) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _string_leaves(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _string_leaves(v)


def index_texts(value: Mapping[str, Any], paths: Sequence[str]) -> list[tuple[str, str]]:
    """(field name, text) pairs to index, named as InMemoryStore names its vectors."""
    found: list[tuple[str, str]] = []
    for path in paths:
        texts = get_text_at_path(value, path if path == "$" else tokenize_path(path))
        if len(texts) == 1:
            found.append((path, texts[0]))
        else:
            found.extend((f"{path}.{i}", t) for i, t in enumerate(texts))
    return [(name, text) for name, text in found if text]


def _prepare_put(op: PutOp, settings: StoreSettings) -> PreparedPut:
    check_namespace(op.namespace)
    check_key(op.key)
    prefix = prefix_of(op.namespace)
    if op.value is None:
        return PreparedPut(prefix, op.key, None, None, None)
    value_json = encode_value(op.value, max_bytes=settings.max_value_bytes)
    if op.ttl is not None:
        check_minutes(op.ttl)
    if op.index is False:
        return PreparedPut(prefix, op.key, value_json, op.ttl, None, reindex=False)
    if op.index is not None:
        if not isinstance(op.index, list):
            raise InvalidValueError(f"index must be None, False or a list of paths: {op.index!r}")
        for path in op.index:
            check_field(path, "index path")
    paths = op.index if op.index is not None else settings.fields
    pairs = index_texts(op.value, paths)
    if not pairs and op.index is None and paths != ["$"]:
        # None of the store's index fields is in this value. LangMem's tools store
        # {"content": ...} where the memory nodes index ["text"]: index "content" too rather
        # than leave LangMem's memories unsearchable with a score of None.
        pairs = index_texts(op.value, FALLBACK_FIELDS)
    if not settings.hybrid and paths == ["$"]:
        # Keyword-only stores index the value's strings, not its JSON syntax.
        pairs = [("$", "\n".join(_string_leaves(op.value)))] if op.value else []
        pairs = [(n, t) for n, t in pairs if t]
    text = "\n".join(t for _, t in pairs) if pairs else None
    return PreparedPut(prefix, op.key, value_json, op.ttl, text, pairs if settings.hybrid else [])


def _check_read(op: StoreOp) -> None:
    if isinstance(op, LinkOp):
        check_link(op)
    elif isinstance(op, ExpandOp):
        check_expand(op)
    elif isinstance(op, MirrorSearchOp):
        check_mirror(op)
        _check_read(op.search)
    elif isinstance(op, PageOp):
        check_page_op(op)
    elif isinstance(op, CountOp):
        check_count_op(op)
    elif isinstance(op, TallyOp):
        check_tally(op)
        _check_read(op.search)
    elif isinstance(op, GetOp):
        check_namespace(op.namespace)
        check_key(op.key)
    elif isinstance(op, SearchOp):
        check_namespace(op.namespace_prefix, allow_empty=True)
        if op.query is not None:
            check_query(op.query)
        check_page("limit", op.limit)
        check_page("offset", op.offset)
        FilterBuilder().add(op.filter)  # refuses a bad filter before any I/O
    elif isinstance(op, ListNamespacesOp):
        for cond in op.match_conditions or ():
            if cond.match_type not in ("prefix", "suffix"):
                raise InvalidValueError(f"unsupported match type {cond.match_type!r}")
            check_namespace(tuple(cond.path), allow_empty=True)
        check_page("limit", op.limit)
        check_page("offset", op.offset)
        if op.max_depth is not None:
            check_page("max_depth", op.max_depth)
            if op.max_depth < 1:
                raise InvalidValueError(f"max_depth must be >= 1, got {op.max_depth}")
    elif not isinstance(op, PutOp):
        raise ValueError(f"Unknown operation type: {type(op)}")


def prepare_batch(ops: Iterable[StoreOp], settings: StoreSettings) -> PreparedBatch:
    """Validate every op and collect the work; raises before any I/O on bad input."""
    ops = list(ops)
    puts: dict[Key, PreparedPut] = {}
    queries: dict[str, None] = {}
    links: list[LinkOp] = []
    for op in ops:
        _check_read(op)
        if isinstance(op, PutOp):
            puts[(op.namespace, op.key)] = _prepare_put(op, settings)
            continue
        if isinstance(op, LinkOp):
            links.append(op)
            continue
        if isinstance(op, ExpandOp):
            if op.query and settings.hybrid:
                queries[op.query] = None
            continue
        search = op.search if isinstance(op, MirrorSearchOp) else op
        if isinstance(search, SearchOp) and search.query and settings.hybrid:
            queries[search.query] = None
    return PreparedBatch(ops, puts, list(queries), links)


def check_vectors(vectors: Sequence[Sequence[float]], count: int, dims: int, what: str) -> None:
    """Embeddings must come back one per text, each of the configured dimension."""
    if len(vectors) != count:
        raise InvalidValueError(f"the embedder returned {len(vectors)} {what} for {count} texts")
    for vector in vectors:
        if len(vector) != dims:
            raise InvalidValueError(
                f"the embedder returned a {len(vector)}-dimensional {what[:-1]}; the store's "
                f"index is configured with dims={dims}"
            )
