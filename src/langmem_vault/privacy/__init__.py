"""Privacy: PII redaction, encryption at rest, audit log, consent, export/import/erase, gate.

- :mod:`~langmem_vault.privacy._redaction`: ``redact()`` (Presidio + a local spaCy model,
  offline), its policy and recognisers; a primitive that imports nothing from the memory layer;
- :mod:`~langmem_vault.privacy._rotation` re-seals every private fact under a new key (the
  sealing itself, ``Keyring`` and the AES-GCM envelopes, is how the memory layer stores a
  private fact, so it lives there: :mod:`langmem_vault.memory._sealing`).

And two rooms built on the memory model:

- :mod:`~langmem_vault.privacy._audit`: who did what to which memory, when (the log, its
  buffer, the audited store wrapper, the access recorder);
- :mod:`~langmem_vault.privacy._subject_rights`: per-user consent and the extraction filter,
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

from langmem_vault._lazy import LazyNames
from langmem_vault.privacy._redaction.pii import detect_many, preload, redact, redact_many
from langmem_vault.privacy._redaction.policy import RedactionPolicy

if TYPE_CHECKING:  # static types for the lazy names below
    from langmem_vault.privacy._audit.access import AuditingAccessRecorder
    from langmem_vault.privacy._audit.buffer import AsyncAuditBuffer, AuditBuffer
    from langmem_vault.privacy._audit.log import AsyncAuditLog, AuditLog
    from langmem_vault.privacy._audit.store import AuditedStore
    from langmem_vault.privacy._rotation import arotate_keys, rotate_keys
    from langmem_vault.privacy._subject_rights.consent import aset_consent, set_consent
    from langmem_vault.privacy._subject_rights.erase import aerase_user, erase_user
    from langmem_vault.privacy._subject_rights.gate import PrivacyGate
    from langmem_vault.privacy._subject_rights.portability import (
        InvalidExportError,
        aexport_user,
        aimport_user,
        export_user,
        import_user,
        memories_csv,
    )

# module -> the names it gives this package, loaded on first attribute access (PEP 562)
_LAZY = {
    "langmem_vault.privacy._audit.log": ("AuditLog", "AsyncAuditLog"),
    "langmem_vault.privacy._audit.buffer": ("AuditBuffer", "AsyncAuditBuffer"),
    "langmem_vault.privacy._audit.store": ("AuditedStore",),
    "langmem_vault.privacy._audit.access": ("AuditingAccessRecorder",),
    "langmem_vault.privacy._subject_rights.consent": ("set_consent", "aset_consent"),
    "langmem_vault.privacy._rotation": ("rotate_keys", "arotate_keys"),
    "langmem_vault.privacy._subject_rights.portability": (
        "export_user",
        "aexport_user",
        "import_user",
        "aimport_user",
        "memories_csv",
        "InvalidExportError",
    ),
    "langmem_vault.privacy._subject_rights.erase": ("erase_user", "aerase_user"),
    "langmem_vault.privacy._subject_rights.gate": ("PrivacyGate",),
}


_NAMES = LazyNames(globals(), _LAZY)


def __getattr__(name: str) -> object:
    return _NAMES.load(name)


def __dir__() -> list[str]:
    return _NAMES.listing()


# The entry points: what the docs use and what wiring privacy into an app needs. Results,
# events, policies' parts and the lower-level consent and erase steps stay in their modules.
__all__ = [
    "AsyncAuditBuffer",
    "AsyncAuditLog",
    "AuditBuffer",
    "AuditLog",
    "AuditedStore",
    "AuditingAccessRecorder",
    "InvalidExportError",
    "PrivacyGate",
    "RedactionPolicy",
    "aerase_user",
    "aexport_user",
    "aimport_user",
    "arotate_keys",
    "aset_consent",
    "detect_many",
    "erase_user",
    "export_user",
    "import_user",
    "memories_csv",
    "preload",
    "redact",
    "redact_many",
    "rotate_keys",
    "set_consent",
]
