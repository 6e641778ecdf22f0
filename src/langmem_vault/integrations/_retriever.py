"""``VaultRetriever``: one user's memories and a document collection, fused into one ranking.

A LangChain ``BaseRetriever`` (sync and async). It asks two sources the same query:

- the user's current facts in any ``BaseStore``, ranked as inject ranks them (relevance blended
  with confidence, recency and utility); private facts, sealed or not, are never returned;
- a LangChain vector store of document chunks, typically langchain-postgres' ``PGVectorStore``
  in the same database (install ``langmem-vault[docs]``); give it a ``HybridSearchConfig`` and
  its own search is already full-text + vector.

The two rankings are fused by reciprocal rank fusion (each result scores
``weight / (rrf_k + rank)``), so neither source's score scale matters. Every ``Document``
says where it came from in ``metadata["source"]`` (``"memory"`` or ``"document"``) and carries
a citation label in ``metadata["ref"]`` (``M1``, ``M2``... and ``D1``, ``D2``...);
:func:`render_context` turns them into a prompt block the model cites from.

>>> from langchain_core.documents import Document
>>> ranked = rrf_fuse([["m1", "m2"], ["d1"]], rrf_k=60, weights=[1.0, 1.0])
>>> [key for key, _ in ranked]
['m1', 'd1', 'm2']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import VectorStore
from langgraph.store.base import BaseStore
from pydantic import ConfigDict, Field

from langmem_vault.db._embedded import resolve_dsn
from langmem_vault.memory._models import SemanticFact
from langmem_vault.memory._namespaces import MemoryNamespaces
from langmem_vault.memory._vault import Memory, MemoryVault

__all__ = ["VaultRetriever", "pg_engine", "render_context", "rrf_fuse"]

MEMORY = "memory"
DOCUMENT = "document"
CONTEXT_HEADER = "Sources (cite memories as [M1] and documents as [D1]):"


def rrf_fuse(
    rankings: Sequence[Sequence[str]], *, rrf_k: int, weights: Sequence[float]
) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of ranked key lists: ``(key, score)`` best first.

    Ties keep the order of ``rankings`` (the first list wins), so the result is deterministic.
    """
    scores: dict[str, float] = {}
    order: dict[str, tuple[int, int]] = {}
    for source, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (rrf_k + rank)
            order.setdefault(key, (rank, source))
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def pg_engine(conn_string: str | None = None) -> Any:
    """A langchain-postgres ``PGEngine`` on the same database as the store: ``conn_string``,
    else ``$LANGMEM_VAULT_DSN``, else the embedded server (needs the ``[docs]`` extra).

    >>> engine = pg_engine()  # doctest: +SKIP
    >>> engine.init_vectorstore_table("docs", 384)  # doctest: +SKIP
    """
    try:
        from langchain_postgres import PGEngine
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "pg_engine needs langchain-postgres: pip install 'langmem-vault[docs]'"
        ) from exc
    dsn = resolve_dsn(conn_string)
    scheme, sep, rest = dsn.partition("://")
    if not sep or scheme not in ("postgresql", "postgres", "postgresql+psycopg"):
        raise ValueError(f"conn_string must be a postgresql:// URL for pg_engine, got {scheme!r}")
    return PGEngine.from_connection_string(f"postgresql+psycopg://{rest}")


def _memory_document(memory: Memory[SemanticFact]) -> Document:
    fact = memory.value
    return Document(
        page_content=fact.text,
        id=memory.key,
        metadata={
            "source": MEMORY,
            "key": memory.key,
            "category": fact.category,
            "confidence": fact.confidence,
            "status": fact.status,
            "score": memory.score,
        },
    )


def render_context(documents: Sequence[Document]) -> str:
    """The retrieved documents as a prompt block, one ``- [M1] text`` line each.

    >>> doc = Document("Refunds take 5 days", metadata={"source": "document", "ref": "D1"})
    >>> print(render_context([doc]))
    Sources (cite memories as [M1] and documents as [D1]):
    - [D1] Refunds take 5 days
    """
    if not documents:
        return ""
    lines = [CONTEXT_HEADER]
    for doc in documents:
        text = " ".join(doc.page_content.split())
        lines.append(f"- [{doc.metadata.get('ref', '?')}] {text}")
    return "\n".join(lines)


class VaultRetriever(BaseRetriever):
    """Fuses a user's memories with a document collection (see the module docstring).

    - ``store`` and ``user_id`` (or a ``namespaces`` template set) name the memories;
    - ``documents``: a LangChain ``VectorStore`` (``PGVectorStore``; ``None`` for memories
      only);
    - ``k``: results returned; ``memory_k`` / ``document_k``: candidates asked of each source;
    - ``rrf_k`` (60, the usual constant) and ``memory_weight`` / ``document_weight`` tune the
      fusion.

    >>> retriever = VaultRetriever(store=store, user_id="ana", documents=docs)  # doctest: +SKIP
    >>> [d.metadata["ref"] for d in retriever.invoke("refund for my order?")]  # doctest: +SKIP
    ['M1', 'D1', 'D2']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: BaseStore
    user_id: str
    documents: VectorStore | None = None
    namespaces: MemoryNamespaces = Field(default_factory=MemoryNamespaces)
    k: int = Field(6, ge=1, le=100)
    memory_k: int = Field(10, ge=1, le=100)
    document_k: int = Field(10, ge=1, le=100)
    rrf_k: int = Field(60, ge=1)
    memory_weight: float = Field(1.0, ge=0.0)
    document_weight: float = Field(1.0, ge=0.0)

    def _vault(self) -> MemoryVault:
        return MemoryVault(self.store, user_id=self.user_id, namespaces=self.namespaces)

    def _fuse(
        self, memories: Sequence[Memory[SemanticFact]], documents: Sequence[Document]
    ) -> list[Document]:
        # Private facts never leave through a retriever, whether or not a key opened them.
        shown = [_memory_document(m) for m in memories if not m.value.private]
        by_key: dict[str, Document] = {f"m:{d.id}": d for d in shown}
        for rank, doc in enumerate(documents):
            tagged = doc.model_copy(update={"metadata": {**doc.metadata, "source": DOCUMENT}})
            by_key[f"d:{doc.id or rank}"] = tagged
        ranked = rrf_fuse(
            [[k for k in by_key if k.startswith("m:")], [k for k in by_key if k.startswith("d:")]],
            rrf_k=self.rrf_k,
            weights=[self.memory_weight, self.document_weight],
        )[: self.k]
        out: list[Document] = []
        counts = {MEMORY: 0, DOCUMENT: 0}
        for key, score in ranked:
            doc = by_key[key]
            source = doc.metadata["source"]
            counts[source] += 1
            ref = f"{'M' if source == MEMORY else 'D'}{counts[source]}"
            out.append(
                doc.model_copy(
                    update={"metadata": {**doc.metadata, "ref": ref, "rrf_score": score}}
                )
            )
        return out

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        memories = self._vault().recall(query, limit=self.memory_k)
        docs = (
            []
            if self.documents is None
            else self.documents.similarity_search(query, k=self.document_k)
        )
        return self._fuse(memories, docs)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        memories = await self._vault().arecall(query, limit=self.memory_k)
        docs: list[Document] = []
        if self.documents is not None:
            docs = await self.documents.asimilarity_search(query, k=self.document_k)
        return self._fuse(memories, docs)

    def context(self, query: str) -> str:
        """The fused results for ``query`` rendered for a prompt (:func:`render_context`)."""
        return render_context(self.invoke(query))

    async def acontext(self, query: str) -> str:
        """Async :meth:`context`."""
        return render_context(await self.ainvoke(query))
