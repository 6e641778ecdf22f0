"""Privacy: PII redaction, audit log, encryption at rest, consent, export/import/erase, gate.

- :mod:`~langmem_vault.privacy.pii`: ``redact()`` (Presidio + a local spaCy model, offline);
- :mod:`~langmem_vault.privacy.audit`, ``audit_buffer``, ``audited_store``: who did what to
  which memory, when;
- :mod:`~langmem_vault.privacy.crypto`: AES-GCM sealing of private memories, key rotation;
- :mod:`~langmem_vault.privacy.consent`: per-user consent and the extraction filter;
- :mod:`~langmem_vault.privacy.portability` and ``erase``: export, import, erase per user;
- :mod:`~langmem_vault.privacy.gate`: tiered, sanitised answers for plugins.

The modules beyond redaction load on first use (``from langmem_vault.privacy import
AuditLog`` works), so the extraction path does not pay for them.

Example:
    >>> from langmem_vault.privacy import redact, RedactionPolicy
    >>> redact("card 4111 1111 1111 1111", policy=RedactionPolicy().with_actions(
    ...     credit_card="mask")).text
    'card **** **** **** 1111'
"""

from typing import TYPE_CHECKING

from langmem_vault.privacy.pii import DetectedEntity, RedactionResult, detect, preload, redact
from langmem_vault.privacy.policy import (
    DEFAULT_ACTIONS,
    DEFAULT_POLICY,
    Action,
    Entity,
    RedactionPolicy,
)

if TYPE_CHECKING:  # static types for the lazy names below
    from langmem_vault.privacy.audit import (
        AsyncAuditLog,
        AuditAction,
        AuditEvent,
        AuditLog,
        AuditRecord,
    )
    from langmem_vault.privacy.audit_access import AuditingAccessRecorder
    from langmem_vault.privacy.audit_buffer import AsyncAuditBuffer, AuditBuffer
    from langmem_vault.privacy.audited_store import AuditedStore
    from langmem_vault.privacy.consent import (
        ConsentSettings,
        afilter_for_namespaces,
        aget_consent,
        aset_consent,
        filter_extraction,
        filter_for_namespaces,
        get_consent,
        set_consent,
    )
    from langmem_vault.privacy.crypto import (
        DecryptionError,
        Keyring,
        arotate_keys,
        decrypt_fact,
        default_keyring,
        encrypt_fact,
        is_sealed,
        open_item,
        open_value,
        rotate_keys,
    )
    from langmem_vault.privacy.erase import (
        ErasureReport,
        aerase_user,
        apurge_erased,
        arestore_user,
        erase_user,
        purge_erased,
        restore_user,
    )
    from langmem_vault.privacy.gate import GateAnswer, PrivacyGate, Tier
    from langmem_vault.privacy.portability import (
        InvalidExportError,
        aexport_user,
        aimport_user,
        export_user,
        import_user,
        memories_csv,
    )

# name -> module, loaded on first attribute access (PEP 562)
_LAZY = {
    "AuditAction": "audit",
    "AuditEvent": "audit",
    "AuditLog": "audit",
    "AsyncAuditLog": "audit",
    "AuditRecord": "audit",
    "AuditBuffer": "audit_buffer",
    "AsyncAuditBuffer": "audit_buffer",
    "AuditedStore": "audited_store",
    "AuditingAccessRecorder": "audit_access",
    "filter_for_namespaces": "consent",
    "afilter_for_namespaces": "consent",
    "Keyring": "crypto",
    "DecryptionError": "crypto",
    "encrypt_fact": "crypto",
    "decrypt_fact": "crypto",
    "default_keyring": "crypto",
    "is_sealed": "crypto",
    "open_item": "crypto",
    "open_value": "crypto",
    "rotate_keys": "crypto",
    "arotate_keys": "crypto",
    "ConsentSettings": "consent",
    "get_consent": "consent",
    "aget_consent": "consent",
    "set_consent": "consent",
    "aset_consent": "consent",
    "filter_extraction": "consent",
    "export_user": "portability",
    "aexport_user": "portability",
    "import_user": "portability",
    "aimport_user": "portability",
    "memories_csv": "portability",
    "InvalidExportError": "portability",
    "ErasureReport": "erase",
    "erase_user": "erase",
    "aerase_user": "erase",
    "restore_user": "erase",
    "arestore_user": "erase",
    "purge_erased": "erase",
    "apurge_erased": "erase",
    "PrivacyGate": "gate",
    "GateAnswer": "gate",
    "Tier": "gate",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_vault.privacy' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"langmem_vault.privacy.{module}"), name)


__all__ = [
    "DEFAULT_ACTIONS",
    "DEFAULT_POLICY",
    "Action",
    "AsyncAuditBuffer",
    "AsyncAuditLog",
    "AuditAction",
    "AuditBuffer",
    "AuditEvent",
    "AuditLog",
    "AuditRecord",
    "AuditedStore",
    "AuditingAccessRecorder",
    "ConsentSettings",
    "DecryptionError",
    "DetectedEntity",
    "Entity",
    "ErasureReport",
    "GateAnswer",
    "InvalidExportError",
    "Keyring",
    "PrivacyGate",
    "RedactionPolicy",
    "RedactionResult",
    "Tier",
    "aerase_user",
    "aexport_user",
    "afilter_for_namespaces",
    "aget_consent",
    "aimport_user",
    "apurge_erased",
    "arestore_user",
    "arotate_keys",
    "aset_consent",
    "decrypt_fact",
    "default_keyring",
    "detect",
    "encrypt_fact",
    "erase_user",
    "export_user",
    "filter_extraction",
    "filter_for_namespaces",
    "get_consent",
    "import_user",
    "is_sealed",
    "memories_csv",
    "open_item",
    "open_value",
    "preload",
    "purge_erased",
    "redact",
    "restore_user",
    "rotate_keys",
    "set_consent",
]
