"""What the extract node and the background extraction worker share (internal: it exports
nothing; users reach extraction through the nodes, :func:`langmem_vault.add_memory` and
:class:`langmem_vault.jobs.ExtractionWorker`).

Below both :mod:`langmem_vault.nodes` and :mod:`langmem_vault.jobs`, so neither imports the
other:

- ``_span``: ``extract_span``, the one extraction call over a span of messages, built from
  ``_messages``, ``_aliases``, ``_schema``, ``_prompt``, ``_protocol`` (the ``Extractor``
  protocol) and ``_checks``;
- ``_redaction``: PII redaction of what the model proposed, before anything is stored;
- ``_reconcile`` and ``_apply``: the consent filter, then reconcile, in one write;
- ``_payload``: the extract job's kind, payload format and watermark namespace.
"""

__all__: list[str] = []
