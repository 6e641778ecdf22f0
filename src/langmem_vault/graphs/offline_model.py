"""Deprecated path: the offline chat model now lives in :mod:`langmem_vault.offline.model`.

>>> from langmem_vault.graphs.offline_model import RecallChatModel  # still works
"""

from langmem_vault.offline.model import RecallChatModel

__all__ = ["RecallChatModel"]
