"""Privacy: PII redaction, encryption at rest, audit log, consent, export/import/erase, gate.

- :mod:`~langmem_vault.privacy.redaction`: ``redact()`` (Presidio + a local spaCy model,
  offline), its policy and recognisers; a primitive that imports nothing from the memory layer;
- sealing (``Keyring``, ``encrypt_fact``...): AES-GCM envelopes of private memories. It is how
  the memory layer stores a private fact, so it lives there
  (:mod:`langmem_vault.memory.sealing`) and is re-exported here;
  :mod:`~langmem_vault.privacy.rotation` re-seals every private fact under a new key.

And two rooms built on the memory model:

- :mod:`~langmem_vault.privacy.audit`: who did what to which memory, when (the log, its
  buffer, the audited store wrapper, the access recorder);
- :mod:`~langmem_vault.privacy.subject_rights`: per-user consent and the extraction filter,
  export and import, erase, and the gate that hands plugins tiered, sanitised answers.

The modules beyond redaction load on first use (``from langmem_vault.privacy import
AuditLog`` works), so the extraction path does not pay for them.

Example:
    >>> from langmem_vault.privacy import redact, RedactionPolicy
    >>> redact("card 4111 1111 1111 1111", policy=RedactionPolicy().with_actions(
    ...     credit_card="mask")).text
    'card **** **** **** 1111'
"""

from typing import TYPE_CHECKING

from langmem_vault.privacy.redaction.pii import (
    DetectedEntity,
    RedactionResult,
    detect,
    preload,
    redact,
)
from langmem_vault.privacy.redaction.policy import (
    DEFAULT_ACTIONS,
    DEFAULT_POLICY,
    Action,
    Entity,
    RedactionPolicy,
)

if TYPE_CHECKING:  # static types for the lazy names below
    from langmem_vault.memory.sealing import (
        DecryptionError,
        Keyring,
        decrypt_fact,
        default_keyring,
        encrypt_fact,
        is_sealed,
        open_item,
        open_value,
    )
    from langmem_vault.privacy.audit.access import AuditingAccessRecorder
    from langmem_vault.privacy.audit.buffer import AsyncAuditBuffer, AuditBuffer
    from langmem_vault.privacy.audit.log import (
        AsyncAuditLog,
        AuditAction,
        AuditEvent,
        AuditLog,
        AuditRecord,
    )
    from langmem_vault.privacy.audit.store import AuditedStore
    from langmem_vault.privacy.rotation import RotationReport, arotate_keys, rotate_keys
    from langmem_vault.privacy.subject_rights.consent import (
        ConsentSettings,
        afilter_for_namespaces,
        aget_consent,
        aset_consent,
        filter_extraction,
        filter_for_namespaces,
        get_consent,
        set_consent,
    )
    from langmem_vault.privacy.subject_rights.erase import (
        ErasureReport,
        aerase_user,
        apurge_erased,
        arestore_user,
        erase_user,
        purge_erased,
        restore_user,
    )
    from langmem_vault.privacy.subject_rights.gate import GateAnswer, PrivacyGate, Tier
    from langmem_vault.privacy.subject_rights.portability import (
        InvalidExportError,
        aexport_user,
        aimport_user,
        export_user,
        import_user,
        memories_csv,
    )

# name -> module, loaded on first attribute access (PEP 562)
_LAZY = {
    "AuditAction": "langmem_vault.privacy.audit.log",
    "AuditEvent": "langmem_vault.privacy.audit.log",
    "AuditLog": "langmem_vault.privacy.audit.log",
    "AsyncAuditLog": "langmem_vault.privacy.audit.log",
    "AuditRecord": "langmem_vault.privacy.audit.log",
    "AuditBuffer": "langmem_vault.privacy.audit.buffer",
    "AsyncAuditBuffer": "langmem_vault.privacy.audit.buffer",
    "AuditedStore": "langmem_vault.privacy.audit.store",
    "AuditingAccessRecorder": "langmem_vault.privacy.audit.access",
    "filter_for_namespaces": "langmem_vault.privacy.subject_rights.consent",
    "afilter_for_namespaces": "langmem_vault.privacy.subject_rights.consent",
    "Keyring": "langmem_vault.memory.sealing",
    "DecryptionError": "langmem_vault.memory.sealing",
    "encrypt_fact": "langmem_vault.memory.sealing",
    "decrypt_fact": "langmem_vault.memory.sealing",
    "default_keyring": "langmem_vault.memory.sealing",
    "is_sealed": "langmem_vault.memory.sealing",
    "open_item": "langmem_vault.memory.sealing",
    "open_value": "langmem_vault.memory.sealing",
    "rotate_keys": "langmem_vault.privacy.rotation",
    "arotate_keys": "langmem_vault.privacy.rotation",
    "RotationReport": "langmem_vault.privacy.rotation",
    "ConsentSettings": "langmem_vault.privacy.subject_rights.consent",
    "get_consent": "langmem_vault.privacy.subject_rights.consent",
    "aget_consent": "langmem_vault.privacy.subject_rights.consent",
    "set_consent": "langmem_vault.privacy.subject_rights.consent",
    "aset_consent": "langmem_vault.privacy.subject_rights.consent",
    "filter_extraction": "langmem_vault.privacy.subject_rights.consent",
    "export_user": "langmem_vault.privacy.subject_rights.portability",
    "aexport_user": "langmem_vault.privacy.subject_rights.portability",
    "import_user": "langmem_vault.privacy.subject_rights.portability",
    "aimport_user": "langmem_vault.privacy.subject_rights.portability",
    "memories_csv": "langmem_vault.privacy.subject_rights.portability",
    "InvalidExportError": "langmem_vault.privacy.subject_rights.portability",
    "ErasureReport": "langmem_vault.privacy.subject_rights.erase",
    "erase_user": "langmem_vault.privacy.subject_rights.erase",
    "aerase_user": "langmem_vault.privacy.subject_rights.erase",
    "restore_user": "langmem_vault.privacy.subject_rights.erase",
    "arestore_user": "langmem_vault.privacy.subject_rights.erase",
    "purge_erased": "langmem_vault.privacy.subject_rights.erase",
    "apurge_erased": "langmem_vault.privacy.subject_rights.erase",
    "PrivacyGate": "langmem_vault.privacy.subject_rights.gate",
    "GateAnswer": "langmem_vault.privacy.subject_rights.gate",
    "Tier": "langmem_vault.privacy.subject_rights.gate",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_vault.privacy' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)


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
    "RotationReport",
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
