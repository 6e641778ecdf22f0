"""Privacy: PII detection and redaction (Presidio + a local spaCy model, fully offline).

Example:
    >>> from langmem_vault.privacy import redact, RedactionPolicy
    >>> redact("card 4111 1111 1111 1111", policy=RedactionPolicy().with_actions(
    ...     credit_card="mask")).text
    'card **** **** **** 1111'
"""

from langmem_vault.privacy.pii import DetectedEntity, RedactionResult, detect, preload, redact
from langmem_vault.privacy.policy import (
    DEFAULT_ACTIONS,
    DEFAULT_POLICY,
    Action,
    Entity,
    RedactionPolicy,
)

__all__ = [
    "DEFAULT_ACTIONS",
    "DEFAULT_POLICY",
    "Action",
    "DetectedEntity",
    "Entity",
    "RedactionPolicy",
    "RedactionResult",
    "detect",
    "preload",
    "redact",
]
