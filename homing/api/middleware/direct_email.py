"""``POST /v1/notifications/email`` served without FastAPI's machinery, when it is valid.

Accepting one email is the hot path of the API, and FastAPI's routing, dependency
solving and request/response handling cost about a third of an accept's CPU (profiled:
``docs/benchmarks.md``). This middleware runs inside ``SendingAdmission`` (the caller is
authenticated and within its rate) and serves a well-formed request itself: it reads
the body, validates it with the route's own model and calls the route's own
``accept_email``. Anything else goes on to FastAPI unchanged, its body replayed: another
path, a content type other than JSON, a body without a declared length or over the
limit, a body or an ``Idempotency-Key`` that does not validate, a send by ``recipient``
or in a ``category`` (the route looks those up first). So every refusal is the
route's own, word for word, and only a valid request takes the short way.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing.api.errors import error_response
from homing.api.middleware.body_limit import declared_length, read_body
from homing.api.middleware.sending_gate import PRINCIPAL_STATE
from homing.api.paths import routed_path
from homing.api.refusals import count_refusal
from homing.api.routes.email import accept_email
from homing.api.schemas.email import EmailCreate
from homing.domain.tenants import Principal
from homing.errors import HomingError, PayloadTooLarge
from homing.services import Services

EMAIL_PATH = "/v1/notifications/email"
_KEY_MAX = 255  # as the route's Idempotency-Key header


class DirectEmail:
    """ASGI middleware that accepts a well-formed ``POST /v1/notifications/email`` with
    the route's own model and function, without FastAPI's request machinery; anything
    else goes on to FastAPI with its body replayed, so every refusal is the route's."""

    def __init__(self, app: ASGIApp, services: Services, max_body_bytes: int) -> None:
        self.app = app
        self.services = services
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and routed_path(scope) == EMAIL_PATH
        ):
            await self.app(scope, receive, send)
            return
        plain, key = self._plain_request(scope)
        if not plain:
            await self.app(scope, receive, send)
            return
        try:
            body = await read_body(scope["headers"], receive, self.max_body_bytes)
        except ClientDisconnect:
            return
        except PayloadTooLarge as exc:  # more arrived than was declared
            count_refusal(scope, exc)
            await error_response(exc)(scope, receive, send)
            return
        email = _email(body)
        if email is None:
            await self.app(scope, _replaying(body, receive), send)
            return
        principal: Principal = scope["state"][PRINCIPAL_STATE]
        try:
            response = await accept_email(self.services, principal, email, key)
        except HomingError as exc:
            count_refusal(scope, exc)
            response = error_response(exc)
        await response(scope, receive, send)

    def _plain_request(self, scope: Scope) -> tuple[bool, str | None]:
        """Whether the request may take the short way (JSON, a Content-Length within
        the limit, at most one Idempotency-Key and one the route accepts), and the
        Idempotency-Key, if one was sent."""
        length = declared_length(scope["headers"])
        if length is None or length > self.max_body_bytes:
            return False, None
        key: str | None = None
        json = False
        for name, value in scope["headers"]:
            if name == b"content-type":
                kind = value.split(b";", 1)[0].strip().lower()
                json = kind == b"application/json"
            elif name == b"idempotency-key":
                if key is not None:
                    return False, None
                key = value.decode("latin-1")
                if not 1 <= len(key) <= _KEY_MAX:
                    return False, None
        return json, key


def _email(body: bytes) -> EmailCreate | None:
    """The plain email of ``body``; None for one FastAPI must serve (not valid, or
    sent by recipient or in a category: ``send_email`` addresses those)."""
    try:
        email = EmailCreate.model_validate_json(body)
    except ValidationError:
        return None
    if email.recipient is not None or email.category is not None:
        return None
    return email


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` with the body read already given again first."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
