"""One server span per API request while tracing is on (docs/tracing.md).

It continues the caller's trace when the request carries exactly one valid
``traceparent`` (``homing.tracing.valid_traceparent``: at most 512 bytes, one pass), and
is the span in progress while the request is served, so a job accepted by it keeps its
``traceparent``. It is named after the route's template (``POST /v1/jobs/{job_id}``),
never the path, which may carry a recipient's id. Off, a request costs one test.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing import tracing
from homing.api.middleware.direct_email import EMAIL_PATH
from homing.api.paths import routed_path

_TRACEPARENT = tracing.TRACEPARENT.encode()
_TRACESTATE = tracing.TRACESTATE.encode()


def trace_headers(headers: list[tuple[bytes, bytes]]) -> tuple[bytes | None, bytes | None]:
    """The request's ``traceparent`` and ``tracestate``, each when it came once; a
    header sent twice is as good as none (the W3C: a traceparent sent twice is invalid)."""
    found: dict[bytes, bytes | None] = {}
    for name, value in headers:
        if name in (_TRACEPARENT, _TRACESTATE):
            found[name] = None if name in found else value
    return found.get(_TRACEPARENT), found.get(_TRACESTATE)


def route_template(scope: Scope) -> str | None:
    """The template of the route that served the request, if one did."""
    route = scope.get("route")
    template = getattr(route, "path_format", None) or getattr(route, "path", None)
    if isinstance(template, str):
        return template
    if scope["method"] == "POST" and routed_path(scope) == EMAIL_PATH:
        return EMAIL_PATH  # served by homing.api.middleware.direct_email, before routing
    return None


class RequestTrace:
    """ASGI middleware: the request's server span (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not tracing.on():
            await self.app(scope, receive, send)
            return
        traceparent, tracestate = trace_headers(scope["headers"])
        with tracing.request(scope["method"], traceparent, tracestate) as span:

            async def send_status(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    span.set(tracing.HTTP_STATUS, status)
                    if status >= 500:
                        span.failed()
                await send(message)

            try:
                await self.app(scope, receive, send_status)
            finally:
                template = route_template(scope)
                if template is not None:
                    span.set(tracing.HTTP_ROUTE, template)
                    span.rename(f"{scope['method']} {template}")
