"""What the extract node and the background extraction worker share.

Below both :mod:`langmem_vault.nodes` and :mod:`langmem_vault.jobs`, so neither imports the
other:

- :mod:`~.span`: :func:`extract_span`, the one extraction call over a span of messages, built
  from :mod:`~.messages`, :mod:`~.aliases`, :mod:`~.schema`, :mod:`~.prompt`,
  :mod:`~.protocol` (the :class:`Extractor` protocol) and :mod:`~.checks`;
- :mod:`~.redaction`: PII redaction of what the model proposed, before anything is stored;
- :mod:`~.reconcile` and :mod:`~.apply`: the consent filter, then reconcile, in one write;
- :mod:`~.payload`: the extract job's kind, payload format and watermark namespace.

>>> from langmem_vault.extraction import EXTRACT_JOB, WATERMARK_NAMESPACE
>>> EXTRACT_JOB, WATERMARK_NAMESPACE
('extract', ('langmem_vault', 'watermarks', 'extract'))
"""

from langmem_vault.extraction._apply import aapply, apply
from langmem_vault.extraction._checks import Checked
from langmem_vault.extraction._payload import (
    EXTRACT_JOB,
    WATERMARK_NAMESPACE,
    messages_from_payload,
    namespaces_from_payload,
    payload_builder,
)
from langmem_vault.extraction._protocol import Extractor, ModelExtractor, as_extractor
from langmem_vault.extraction._span import aextract_span, extract_span

__all__ = [
    "EXTRACT_JOB",
    "WATERMARK_NAMESPACE",
    "Checked",
    "Extractor",
    "ModelExtractor",
    "aapply",
    "aextract_span",
    "apply",
    "as_extractor",
    "extract_span",
    "messages_from_payload",
    "namespaces_from_payload",
    "payload_builder",
]
