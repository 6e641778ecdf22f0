"""PII redaction, a privacy primitive: Presidio with a local spaCy model, offline.

Imports nothing from :mod:`langmem_vault.memory`. The entry point is
:func:`~langmem_vault.privacy._redaction.pii.redact`; ``policy`` says what to do per entity,
``engine`` builds the analyzers, ``recognizers``, ``names`` and ``vocabulary`` add the
project's own recognisers, and ``sensitive`` finds sensitive topics and generalises amounts.
"""
