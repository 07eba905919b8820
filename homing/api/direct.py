"""``POST /v1/notifications/email`` served without FastAPI's machinery, when it is valid.

Accepting one email is the hot path of the API, and FastAPI's routing, dependency
solving and request/response handling cost about a third of an accept's CPU (profiled:
``docs/benchmarks.md``). This middleware runs inside ``SendingAdmission`` (the caller is
authenticated and within its rate) and serves a well-formed request itself: it reads
the body, validates it with the route's own model and calls the route's own
``accept_email``. Anything else goes on to FastAPI unchanged, its body replayed: another
path, a content type other than JSON, a body without a declared length or over the
limit, a body or an ``Idempotency-Key`` that does not validate. So every refusal is the
route's own, word for word, and only a valid request takes the short way.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing.api.admission import PRINCIPAL_STATE
from homing.api.errors import error_response
from homing.api.paths import routed_path
from homing.api.routes.notifications import accept_email
from homing.api.schemas import EmailCreate
from homing.errors import HomingError
from homing.services import Services
from homing.store.tenants import Principal

EMAIL_PATH = "/v1/notifications/email"
_KEY_MAX = 255  # as the route's Idempotency-Key header


class DirectEmail:
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
        length, key = self._plain_request(scope)
        if length is None:
            await self.app(scope, receive, send)
            return
        body, more = await _read(receive, length)
        if body is None:  # the client went away
            return
        email = _email(body) if more is None else None
        if email is None:
            await self.app(scope, _replaying(body, more, receive), send)
            return
        principal: Principal = scope["state"][PRINCIPAL_STATE]
        try:
            response = await accept_email(self.services, principal, email, key)
        except HomingError as exc:
            response = error_response(exc)
        await response(scope, receive, send)

    def _plain_request(self, scope: Scope) -> tuple[int | None, str | None]:
        """The declared body length when the request may take the short way (JSON, a
        Content-Length within the limit, at most one Idempotency-Key and one the route
        accepts), else None; and the Idempotency-Key, if one was sent."""
        length: int | None = None
        key: str | None = None
        json = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                if length is not None or not value.isdigit():
                    return None, None
                length = int(value)
            elif name == b"content-type":
                kind = value.split(b";", 1)[0].strip().lower()
                json = kind == b"application/json"
            elif name == b"idempotency-key":
                if key is not None:
                    return None, None
                key = value.decode("latin-1")
                if not 1 <= len(key) <= _KEY_MAX:
                    return None, None
        if not json or length is None or length > self.max_body_bytes:
            return None, None
        return length, key


async def _read(receive: Receive, length: int) -> tuple[bytes | None, Message | None]:
    """The body (None if the client disconnected), and the message that went past the
    declared length, if one did (the request then goes to FastAPI as it came)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None, None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > length:
            return b"".join(chunks[:-1]), message
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _email(body: bytes) -> EmailCreate | None:
    try:
        return EmailCreate.model_validate_json(body)
    except ValidationError:
        return None


def _replaying(body: bytes, extra: Message | None, receive: Receive) -> Receive:
    """``receive`` with what was read already given again first."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": True}]
    if extra is not None:
        pending.append(extra)
    else:
        pending[0]["more_body"] = False

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
