"""Admission on the sending endpoints: every ``POST /v1/notifications/…`` and
``POST /v1/jobs/{id}/retry`` (a retry sends again, so it counts like a new accept).

An ASGI middleware, so it runs before FastAPI reads the body and before anything else
touches the database for the request: authenticate (through the admission cache),
refuse a suspended tenant, take one request from the tenant's 60-second window. Every
response of a sending endpoint that gets that far (202, 4xx, 429, 503) carries
``RateLimit-Limit``, ``RateLimit-Remaining``, ``RateLimit-Reset`` and
``RateLimit-Policy``; a 429 also ``Retry-After``. The principal is left in
``request.state`` so the route does not authenticate again, and the rate decision so a
retry does not pay the rate twice (``Admission.retry`` takes it when no edge did).

The suspension of a tenant is refused here for sending, from the principal of the
admission cache: accepting stays free of a database round trip for it, while every
other change is refused in its own transaction (docs/architecture.md, "Admission").
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing.api.errors import error_response
from homing.api.paths import routed_path
from homing.api.refusals import count_refusal
from homing.domain.tenants import Principal
from homing.errors import HomingError, TenantSuspended, Unauthenticated
from homing.managers.admission import Admission
from homing.managers.plans import RATE_WINDOW_SECONDS
from homing.ratelimit import RateDecision

SENDING_PREFIX = "/v1/notifications/"
# A multi-channel notification (docs/notifications.md) is sending too.
NOTIFICATIONS_PATH = "/v1/notifications"
JOBS_PREFIX = "/v1/jobs/"
RETRY_SUFFIX = "/retry"
PRINCIPAL_STATE = "principal"
RATE_STATE = "sending_rate"


async def principal_for(admission: Admission, authorization: str | None) -> Principal:
    """The principal of an ``Authorization: Bearer <key>`` header value.

    Raises Unauthenticated for a missing or unknown key, TenantSuspended for a
    suspended tenant.
    """
    scheme, _, key = (authorization or "").partition(" ")
    key = key.strip()
    if scheme.lower() != "bearer" or not key:
        raise Unauthenticated("send an API key as 'Authorization: Bearer hk_…'")
    principal = await admission.authenticate(key)
    if principal is None:
        raise Unauthenticated("this API key is not valid")
    if principal.tenant.suspended:
        raise TenantSuspended("this tenant is suspended; its queued jobs are held")
    return principal


def rate_headers(decision: RateDecision) -> dict[str, str]:
    return {
        "RateLimit-Limit": str(decision.limit),
        "RateLimit-Remaining": str(decision.remaining),
        "RateLimit-Reset": str(decision.reset_in()),
        "RateLimit-Policy": f"{decision.limit};w={RATE_WINDOW_SECONDS}",
    }


class SendingAdmission:
    """ASGI middleware that admits ``POST /v1/notifications/…`` and job retries: it
    checks the key and the tenant's rate window before the body is read, answers 429
    past it, and adds the ``RateLimit-*`` headers to every answer of those routes."""

    def __init__(self, app: ASGIApp, admission: Admission) -> None:
        self.app = app
        self.admission = admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not _is_sending(scope):
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        try:
            principal = await principal_for(self.admission, _authorization(scope))
            decision = await self.admission.hit(principal.tenant)
            headers = rate_headers(decision)
            Admission.enforce(decision)
        except HomingError as exc:
            count_refusal(scope, exc)
            response = error_response(exc)
            response.headers.update(headers)
            await response(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state[PRINCIPAL_STATE] = principal
        state[RATE_STATE] = decision
        extra = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _is_sending(scope: Scope) -> bool:
    # The routed path: under a root path the raw one would skip admission.
    return scope["type"] == "http" and is_sending(scope["method"], routed_path(scope))


def is_sending(method: str, path: str) -> bool:
    """Whether a request of ``method`` on ``path`` (or a route's path template) passes
    this gate."""
    if method != "POST":
        return False
    return path.startswith(SENDING_PREFIX) or path == NOTIFICATIONS_PATH or _is_retry(path)


def _is_retry(path: str) -> bool:
    """``/v1/jobs/{id}/retry``, as the jobs router matches it (one segment for the id)."""
    if not (path.startswith(JOBS_PREFIX) and path.endswith(RETRY_SUFFIX)):
        return False
    job_id = path[len(JOBS_PREFIX) : -len(RETRY_SUFFIX)]
    return bool(job_id) and "/" not in job_id


def _authorization(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return bytes(value).decode("latin-1")
    return None
