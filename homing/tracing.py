"""OpenTelemetry traces: off unless the standard ``OTEL_*`` variables ask for them.

One trace follows a notification (docs/tracing.md): the API request that accepted it
(continuing the caller's ``traceparent``), each delivery pass of a worker and each
provider call in it, and each provider event applied to the job. The job keeps its
accept's ``traceparent`` (``jobs.traceparent``, 55 characters, written only while
tracing is on): that is how a worker in another process, seconds or days later,
parents its spans. An outbound webhook carries the ``traceparent`` of its call.

Off (the default), every function here tests one module global and returns ``None``
or a shared no-op, and Homing imports nothing of the SDK: a process without tracing
pays a function call per accept, pass and provider call. (redis-py imports the SDK's
metrics part when it is installed, for its own optional metrics: docs/tracing.md.)

What a span holds: ids (job, tenant, provider account), kinds (channel, provider,
event type), outcome classes, pass numbers and HTTP status codes. Never an address,
a body, a subject, an error's text or a URL path (a path may carry a recipient's id):
an API span is named after its route's template.

A caller's ``traceparent`` is read only when it is one header of the W3C form
(``version-trace_id-parent_id-flags``, lowercase hex, at most 512 bytes, ids not all
zero); anything else starts a new trace. Its sampled flag is a caller's wish: with
``OTEL_TRACES_SAMPLER=traceidratio`` the ratio decides for every trace, whatever the
caller says (docs/tracing.md, "Sampling").
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import Token
from typing import TYPE_CHECKING, Any, Final

from homing.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "SpanHandle",
    "current_traceparent",
    "delivery",
    "event_applied",
    "exporters_wanted",
    "on",
    "provider_call",
    "request",
    "start",
    "start_from_environment",
    "stop",
    "valid_traceparent",
]

# The W3C trace-context header, and how much of one Homing reads at all.
TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
MAX_TRACEPARENT: Final = 512  # the W3C allows later versions to append fields
MAX_TRACESTATE: Final = 512  # what the W3C asks every vendor to propagate at least
_TRACEPARENT_FORM: Final = re.compile(
    r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?"
)
EXPORTERS: Final = frozenset({"otlp", "console"})

# Attribute names: OpenTelemetry's where one fits, homing.* for the domain's own.
JOB_ID: Final = "homing.job_id"
TENANT_ID: Final = "homing.tenant_id"
CHANNEL: Final = "homing.channel"
# The number of a delivery pass (its public name predates "pass": docs/tracing.md).
ATTEMPT: Final = "homing.attempt"
OUTCOME: Final = "homing.outcome"
ERROR_CLASS: Final = "homing.error_class"
PROVIDER: Final = "homing.provider"
PROVIDER_ACCOUNT: Final = "homing.provider_account_id"
EVENT_TYPE: Final = "homing.event_type"
EVENT_SOURCE: Final = "homing.event_source"
HTTP_METHOD: Final = "http.request.method"
HTTP_ROUTE: Final = "http.route"
HTTP_STATUS: Final = "http.response.status_code"


class _State:
    """The process's tracer while tracing is on; ``None`` off."""

    tracer: Tracer | None = None
    provider: TracerProvider | None = None


_state = _State()


def on() -> bool:
    """Whether this process records traces."""
    return _state.tracer is not None


# --- configuration --------------------------------------------------------------


def exporters_wanted(environ: Mapping[str, str]) -> frozenset[str]:
    """The span exporters the ``OTEL_*`` variables of ``environ`` ask for; empty: off.

    Off unless asked: ``OTEL_TRACES_EXPORTER`` naming ``otlp`` and/or ``console``, or,
    with it unset, an OTLP endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``). ``OTEL_SDK_DISABLED=true`` and
    ``OTEL_TRACES_EXPORTER=none`` turn it off. ConfigError for an exporter or an OTLP
    protocol Homing does not ship (only ``http/protobuf``).
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return frozenset()
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if named:
        wanted = frozenset(n.strip() for n in named.split(",") if n.strip()) - {"none"}
        unknown = sorted(wanted - EXPORTERS)
        if unknown:
            raise ConfigError(
                f"OTEL_TRACES_EXPORTER: {', '.join(unknown)[:100]} is not an exporter Homing"
                " ships (otlp, console or none)"
            )
    elif environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    ):
        wanted = frozenset({"otlp"})
    else:
        return frozenset()
    if "otlp" in wanted:
        for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            protocol = environ.get(name, "").strip().lower()
            if protocol and protocol != "http/protobuf":
                raise ConfigError(
                    f"{name}: only http/protobuf is shipped (OTLP over HTTP, port 4318)"
                )
            if protocol:
                break
    return wanted


def start_from_environment(environ: Mapping[str, str] | None = None) -> bool:
    """Start tracing as the ``OTEL_*`` variables ask (``exporters_wanted``); whether
    it started. The SDK reads the rest of them itself: the endpoint, headers, timeout
    and compression of the OTLP exporter, the sampler, the batch processor's queue and
    delay, the resource's attributes."""
    wanted = exporters_wanted(os.environ if environ is None else environ)
    if not wanted:
        return False
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    exporters: list[SpanExporter] = []
    if "otlp" in wanted:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporters.append(OTLPSpanExporter())
    if "console" in wanted:
        exporters.append(ConsoleSpanExporter())
    start(*exporters)
    return True


def start(*exporters: SpanExporter) -> None:
    """Record spans from now on, each exporter behind its own batch processor (a
    bounded queue, exported from a thread of its own: a slow collector drops spans,
    it never slows a delivery). Tests pass an in-memory exporter."""
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from homing import __version__

    stop()
    resource = Resource.create({SERVICE_VERSION: __version__})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "homing"}))
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    _state.provider = provider
    _state.tracer = provider.get_tracer("homing", __version__)


def flush(timeout_seconds: float = 5.0) -> bool:
    """Export what is recorded now; False when the exporters did not finish in time."""
    if _state.provider is None:
        return True
    return _state.provider.force_flush(int(timeout_seconds * 1000))


def stop() -> None:
    """Export what is recorded and stop recording (at a process's exit)."""
    provider = _state.provider
    _state.tracer = _state.provider = None
    if provider is not None:
        provider.shutdown()


# --- the W3C header ----------------------------------------------------------------


def valid_traceparent(value: str | bytes | None) -> str | None:
    """``value`` as a version-00 ``traceparent`` (55 characters), or None when it is
    not one Homing reads: over 512 bytes, not lowercase hex where hex belongs, version
    ``ff``, ids all zero, or a version-00 header with anything after it. A later
    version's first four fields are read (the W3C's rule for versions it does not
    know). Bounded first, then one regular expression without nested repetition: one
    pass over at most 512 characters."""
    text = _ascii(value, MAX_TRACEPARENT)
    if text is None:
        return None
    found = _TRACEPARENT_FORM.fullmatch(text)
    if found is None:
        return None
    version, trace_id, span_id, flags, rest = found.groups()
    if version == "ff" or (version == "00" and rest):
        return None
    if trace_id == "0" * 32 or span_id == "0" * 16:
        return None
    return f"00-{trace_id}-{span_id}-{flags}"


def _ascii(value: str | bytes | None, limit: int) -> str | None:
    """``value`` without the spaces and tabs around it, when it is at most ``limit``
    characters and the rest is printable ASCII."""
    if value is None or len(value) > limit:
        return None
    if isinstance(value, bytes):
        try:
            value = value.decode("ascii")
        except UnicodeDecodeError:
            return None
    value = value.strip(" \t")
    return value if value.isascii() and value.isprintable() else None


def _valid_tracestate(value: str | bytes | None) -> str | None:
    """A ``tracestate`` of at most 512 printable ASCII characters, else None (dropped)."""
    return _ascii(value, MAX_TRACESTATE)


def _sampled(traceparent: str | None) -> bool:
    """Whether a stored traceparent (Homing's own form) says its span was sampled; one
    with none, or unreadable, leaves the decision to the sampler (True)."""
    if traceparent is None or len(traceparent) != 55:
        return True
    return traceparent[54] in "13579bdf"


def current_traceparent() -> str | None:
    """The ``traceparent`` of the span in progress (None: off, or no span): what an
    accepted job keeps and an outbound webhook carries."""
    if _state.tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def _parent(traceparent: str | bytes | None, tracestate: str | None = None) -> Context | None:
    """The context of a remote parent, or None (a new trace) for no valid header."""
    valid = valid_traceparent(traceparent)
    if valid is None:
        return None
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState

    state = TraceState()
    if tracestate is not None:
        state = TraceState.from_header([tracestate])
    parent = SpanContext(
        trace_id=int(valid[3:35], 16),
        span_id=int(valid[36:52], 16),
        is_remote=True,
        trace_flags=TraceFlags(int(valid[53:55], 16) & TraceFlags.SAMPLED),
        trace_state=state,
    )
    return trace.set_span_in_context(NonRecordingSpan(parent))


# --- spans -------------------------------------------------------------------------


class SpanHandle:
    """What a ``with`` block tells its span: the outcome, a status code, a route.
    Off, the one shared handle ignores it all."""

    __slots__ = ("_span",)

    def __init__(self, span: Span | None = None) -> None:
        self._span = span

    def set(self, name: str, value: str | int | None) -> None:
        if self._span is not None and value is not None:
            self._span.set_attribute(name, value)

    def failed(self) -> None:
        """Mark the span's status as an error (with no description: a failure's text
        may name an address)."""
        if self._span is not None:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR))

    def rename(self, name: str) -> None:
        if self._span is not None:
            self._span.update_name(name)


_OFF: Final = SpanHandle()


class _Off(AbstractContextManager[SpanHandle]):
    """The context manager every span function returns while tracing is off."""

    def __enter__(self) -> SpanHandle:
        return _OFF

    def __exit__(self, *exc: object) -> None:
        return None


_NOTHING: Final = _Off()


class _Carried(AbstractContextManager[SpanHandle]):
    """A pass of a job whose accept was not sampled: no span is made (a standard
    sampler decides the same for its children: a parent-based one follows the flag,
    ``traceidratio`` the same trace id), but the accept's context is current, so an
    outbound webhook still carries the trace (with its flag off)."""

    def __init__(self, parent: Context) -> None:
        self._parent = parent
        self._token: Token[Context] | None = None

    def __enter__(self) -> SpanHandle:
        from opentelemetry import context

        self._token = context.attach(self._parent)
        return _OFF

    def __exit__(self, *exc: object) -> None:
        from opentelemetry import context

        if self._token is not None:
            context.detach(self._token)


@contextmanager
def _span(
    name: str,
    kind: str,
    attributes: dict[str, Any],
    parent: Context | None = None,
) -> Iterator[SpanHandle]:
    from opentelemetry.trace import SpanKind

    tracer = _state.tracer
    assert tracer is not None
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=SpanKind[kind],
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        handle = SpanHandle(span)
        try:
            yield handle
        except BaseException:
            handle.failed()
            raise


def request(
    method: str, traceparent: str | bytes | None, tracestate: str | bytes | None
) -> AbstractContextManager[SpanHandle]:
    """The server span of one API request (``with … as span``), continuing the
    caller's trace when its header is valid; named ``method`` until ``span.rename``
    gives it the route's template."""
    if _state.tracer is None:
        return _NOTHING
    parent = _parent(traceparent, _valid_tracestate(tracestate) if traceparent else None)
    return _span(method, "SERVER", {HTTP_METHOD: method}, parent)


def delivery(
    traceparent: str | None, *, job_id: str, tenant_id: str, channel: str, pass_number: int
) -> AbstractContextManager[SpanHandle]:
    """The span of one delivery pass of a job, a child of the span that accepted it
    (its stored ``traceparent``), or a trace of its own when it has none."""
    if _state.tracer is None:
        return _NOTHING
    parent = _parent(traceparent)
    if parent is not None and not _sampled(traceparent):
        return _Carried(parent)
    attributes = {JOB_ID: job_id, TENANT_ID: tenant_id, CHANNEL: channel, ATTEMPT: pass_number}
    return _span("deliver", "INTERNAL", attributes, parent)


def provider_call(provider: str, account_id: str) -> AbstractContextManager[SpanHandle]:
    """The span of one provider call inside a delivery pass (``provider``: the kind);
    none when the pass's span is not recorded (a standard sampler would not record its
    child either)."""
    if _state.tracer is None:
        return _NOTHING
    from opentelemetry import trace

    if not trace.get_current_span().is_recording():
        return _NOTHING
    attributes = {PROVIDER: provider, PROVIDER_ACCOUNT: account_id}
    return _span(f"send {provider}", "CLIENT", attributes)


def event_applied(
    traceparent: str | None,
    *,
    started_ns: int,
    job_id: str,
    source: str,
    event_type: str,
) -> None:
    """Record, in the job's trace, that a provider event was applied to it (from
    ``started_ns``, ``time.time_ns()`` when its handling began, to now), linked to the
    span of the request that brought it."""
    tracer = _state.tracer
    if tracer is None or not _sampled(traceparent):
        return
    from opentelemetry import trace
    from opentelemetry.trace import Link, SpanKind

    carrier = trace.get_current_span().get_span_context()
    links = [Link(carrier)] if carrier.is_valid else []
    span = tracer.start_span(
        "provider event",
        context=_parent(traceparent),
        kind=SpanKind.CONSUMER,
        attributes={JOB_ID: job_id, EVENT_SOURCE: source, EVENT_TYPE: event_type},
        links=links,
        start_time=started_ns,
    )
    span.end(end_time=max(started_ns, time.time_ns()))
