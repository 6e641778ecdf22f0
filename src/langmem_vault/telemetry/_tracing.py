"""OpenTelemetry spans of the memory stages and model calls; a no-op without the extra.

``pip install "langmem-vault[otel]"`` adds ``opentelemetry-api``; the app configures a tracer
provider and an exporter as usual (``docs/observability.md``). Without the API installed,
nothing of OpenTelemetry is imported and every span here is one shared no-op object. With it
installed but no provider set, spans are OpenTelemetry's own non-recording spans: no
attribute is computed for them.

One span per stage (``langmem_vault.inject``, ``.search``, ``.extract``, ``.reconcile``,
``.compact``, ``.consolidate``) and one per memory model call (``chat <model>``, after the
GenAI semantic conventions: ``gen_ai.operation.name``, ``gen_ai.request.model``,
``gen_ai.usage.input_tokens`` / ``output_tokens``). Code deep inside a stage adds its counts
to the stage's span with :func:`annotate` (numbers add up: two searches' cache hits sum).

User ids are never written in clear: ``langmem_vault.user.hash`` is a keyed hash
(HMAC-SHA256, first 16 hex digits) under ``$LANGMEM_VAULT_TRACE_KEY``; without that key, a
random key drawn per process, so a hash correlates one user's spans within a process only
and cannot be reversed by hashing guessed ids (as a plain or publicly salted hash could).

>>> with stage_span("inject", user_id="alice") as span:
...     annotate(injected=3)
>>> len(hash_user("alice")), hash_user("alice") == hash_user("bob")
(16, False)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

__all__ = [
    "TRACE_KEY_ENV",
    "Span",
    "annotate",
    "hash_user",
    "model_span",
    "stage_span",
    "tracing_enabled",
]

TRACE_KEY_ENV = "LANGMEM_VAULT_TRACE_KEY"
PREFIX = "langmem_vault"
#: counts named here go to GenAI attributes; any other to ``langmem_vault.<name>``
_GENAI = {
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
}

_tracer: Any = None  # None: not looked up yet; False: OpenTelemetry is not installed
_current: ContextVar[Span | None] = ContextVar("langmem_vault_span", default=None)


def _get_tracer() -> Any:
    global _tracer
    if _tracer is None:
        try:
            from opentelemetry import trace
        except ImportError:
            _tracer = False
        else:
            # A proxy until the app sets a provider, then the provider's tracer.
            _tracer = trace.get_tracer(PREFIX)
    return _tracer or None


def tracing_enabled() -> bool:
    """Whether spans go anywhere: the API is installed (a provider may still be unset)."""
    return _get_tracer() is not None


@lru_cache(maxsize=1)
def _key() -> bytes:
    configured = os.environ.get(TRACE_KEY_ENV)
    return configured.encode() if configured else secrets.token_bytes(32)


@lru_cache(maxsize=4096)
def hash_user(user_id: str) -> str:
    """The keyed hash spans carry instead of a user id (see the module's docstring)."""
    return hmac.new(_key(), user_id.encode(), hashlib.sha256).hexdigest()[:16]


class Span:
    """One stage or model call: its OpenTelemetry span (None: not recording) and the counts
    added to it while it runs, written as attributes when it ends."""

    __slots__ = ("counts", "otel")

    def __init__(self, otel: Any) -> None:
        self.otel = otel
        self.counts: dict[str, int | float] = {}

    @property
    def recording(self) -> bool:
        return self.otel is not None

    def add(self, **counts: int | float) -> None:
        for name, amount in counts.items():
            self.counts[name] = self.counts.get(name, 0) + amount

    def set(self, attributes: Mapping[str, Any]) -> None:
        if self.otel is not None:
            self.otel.set_attributes({k: v for k, v in attributes.items() if v is not None})

    def _close(self, seconds: float) -> None:
        attributes: dict[str, Any] = {
            _GENAI.get(name, f"{PREFIX}.{name}"): amount for name, amount in self.counts.items()
        }
        attributes[f"{PREFIX}.duration_ms"] = round(seconds * 1000.0, 3)
        self.set(attributes)


@contextmanager
def _span(name: str, attributes: Mapping[str, Any]) -> Iterator[Span]:
    tracer = _get_tracer()
    start = time.perf_counter()
    if tracer is None:
        # Counts are still kept: the stage's LangSmith run and accounting read them.
        span = Span(None)
        token = _current.set(span)
        try:
            yield span
        finally:
            _current.reset(token)
        return
    from opentelemetry import context, trace
    from opentelemetry.trace import Status, StatusCode

    # What start_as_current_span does, without its two context-manager layers (a third of a
    # no-op-exported span's cost); the attributes given at the start are built into one set.
    given = {k: v for k, v in attributes.items() if v is not None}
    otel = tracer.start_span(name, attributes=given)
    attached = context.attach(trace.set_span_in_context(otel))
    span = Span(otel if otel.is_recording() else None)
    token = _current.set(span)
    try:
        yield span
    except BaseException as exc:
        if span.recording:
            otel.record_exception(exc)
            otel.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        _current.reset(token)
        context.detach(attached)
        span._close(time.perf_counter() - start)
        otel.end()


def stage_span(
    stage: str, *, user_id: str | None = None, **attributes: Any
) -> AbstractContextManager[Span]:
    """The span of one memory stage, ``langmem_vault.<stage>``, as a context manager
    yielding a :class:`Span`; the user id goes in hashed."""
    if _get_tracer() is None:
        return _span("", {})
    attrs = {f"{PREFIX}.{k}": v for k, v in attributes.items()}
    attrs[f"{PREFIX}.stage"] = stage
    if user_id is not None:
        attrs[f"{PREFIX}.user.hash"] = hash_user(user_id)
    return _span(f"{PREFIX}.{stage}", attrs)


def model_span(operation: str, model: str) -> AbstractContextManager[Span]:
    """The span of one memory model call (GenAI conventions: ``chat <model>``)."""
    if _get_tracer() is None:
        return _span("", {})
    return _span(
        f"chat {model}",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            f"{PREFIX}.operation": operation,
        },
    )


def annotate(**counts: int | float) -> None:
    """Add counts to the innermost open stage or model span (nothing outside one)."""
    span = _current.get()
    if span is not None:
        span.add(**counts)
