"""What memory reports about itself: OpenTelemetry spans (a no-op without the ``[otel]``
extra), the tokens of every memory model call, and the stages' runs for LangChain callbacks
(see ``docs/observability.md``).

The lowest layer that needs them (layer 0): stores, extraction, the consolidation judge and
the nodes all report through here; nothing here imports the rest of the package.
"""

from langmem_vault.telemetry._metering import Ledger, collecting, metered_call
from langmem_vault.telemetry._tracing import annotate, hash_user, stage_span, tracing_enabled

__all__ = [
    "Ledger",
    "annotate",
    "collecting",
    "hash_user",
    "metered_call",
    "stage_span",
    "tracing_enabled",
]
