"""Offline stand-ins for the two model calls, so demos and tests run without an API key.

- :class:`~langmem_vault.offline._model.RecallChatModel`: a chat model that answers from the
  memories inject puts in state;
- :class:`~langmem_vault.offline._extractor.OfflineExtractor`: rule-based extraction (regular
  expressions and an optional spaCy model);
- :func:`~langmem_vault.offline._entities.find_entities`: the entities and relations a text
  names (spaCy's parser and NER, role and pet patterns), for ``MemoryVault(entity_finder=...)``.

This package sits just above :mod:`langmem_vault.extraction` and below the nodes and graphs,
which may import it; it imports neither.

>>> from langmem_vault.offline import OfflineExtractor, RecallChatModel, find_entities
"""

from langmem_vault.offline._entities import find_entities
from langmem_vault.offline._extractor import OfflineExtractor, SpacyModelError
from langmem_vault.offline._model import RecallChatModel

__all__ = ["OfflineExtractor", "RecallChatModel", "SpacyModelError", "find_entities"]
