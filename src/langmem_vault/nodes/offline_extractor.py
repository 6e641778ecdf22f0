"""Deprecated path: the offline extractor now lives in :mod:`langmem_vault.offline.extractor`.

>>> from langmem_vault.nodes.offline_extractor import OfflineExtractor  # still works
"""

from langmem_vault.offline.extractor import OfflineExtractor, load_spacy

__all__ = ["OfflineExtractor", "load_spacy"]
