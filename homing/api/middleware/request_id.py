"""``X-Request-Id``: one id per API request, echoed on its response and in its logs.

A client's id is kept only when it is one header of at most 128 characters of
``[A-Za-z0-9._:-]``; anything else (too long, CR/LF, non-ASCII, several headers) is
ignored, never echoed or logged, and a new id is made. The check is one pass over at
most 128 bytes.
"""

from __future__ import annotations

import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing.api.errors import unexpected_response
from homing.logs import request_context

HEADER = b"x-request-id"
MAX_LENGTH = 128
_ALLOWED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")


def accepted_id(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The client's request id, if it sent exactly one and a well-formed one."""
    found: bytes | None = None
    for name, value in headers:
        if name == HEADER:
            if found is not None:
                return None
            found = value
    if found is None or not 1 <= len(found) <= MAX_LENGTH:
        return None
    if not all(byte in _ALLOWED for byte in found):
        return None
    return found.decode("ascii")


class RequestId:
    """ASGI middleware, outermost: gives each request an id (the client's, when it is
    acceptable, else a new one), binds it to the request's log lines and adds it to
    every response, the short email path's and unexpected errors' included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = accepted_id(scope["headers"]) or uuid.uuid4().hex
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k != HEADER]
                headers.append((HEADER, request_id.encode("ascii")))
                message = {**message, "headers": headers}
            await send(message)

        with request_context(request_id):
            try:
                await self.app(scope, receive, send_with_id)
            except Exception:
                # Starlette answers an unexpected error outside every middleware, so
                # without this its 500 would go out without the id. The error goes on
                # up to be logged; the server sees the response already started.
                if not started:
                    await unexpected_response()(scope, receive, send_with_id)
                raise
