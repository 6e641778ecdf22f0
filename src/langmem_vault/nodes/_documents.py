"""Documents beside memories: inject's optional ``documents`` retriever.

An app that keeps its documents in a vector store (for example a langchain-postgres
``PGVectorStore`` on the same database) passes ``documents=vector_store.as_retriever()`` to
inject. Each turn the user's message is sent to it, and the documents it returns follow the
memories in the block as ``[D1]``, ``[D2]``..., so an answer cites memories ``[M1]`` and
documents ``[D1]`` side by side. Documents are not memories: they get no usage records and
no ``memory_refs`` entry. (``VaultRetriever`` fuses both for apps that retrieve outside the
graph; inside it, inject ranks the memories and this adds the documents.)

>>> from langchain_core.documents import Document
>>> print(render_documents([Document("Refunds take 5 days.")], max_tokens=100, count=len))
Documents (cite as [D1], [D2], ...):
[D1] Refunds take 5 days.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.documents import Document

__all__ = ["DOCUMENTS_HEADER", "append_documents", "render_documents"]

DOCUMENTS_HEADER = "Documents (cite as [D1], [D2], ...):"


def render_documents(
    documents: Sequence[Document], *, max_tokens: int, count: Callable[[str], int]
) -> str:
    """The documents section, best first, within ``max_tokens`` (empty when none fits)."""
    lines = [DOCUMENTS_HEADER]
    used = count(DOCUMENTS_HEADER)
    for document in documents:
        line = f"[D{len(lines)}] {' '.join(document.page_content.split())}"
        used += count(line)
        if used > max_tokens:
            break
        lines.append(line)
    return "\n".join(lines) if len(lines) > 1 else ""


def append_documents(context: str, section: str) -> str:
    """The memory block with the documents section after it."""
    if not section:
        return context
    return f"{context}\n\n{section}" if context else section
