"""The one cap on request bodies, and the one way a body is read under it.

Every request body is capped at ``HOMING_MAX_BODY_BYTES`` (``BodyLimit``, below); a route
that reads its body itself caps it tighter where it should (inbound events at
``HOMING_INBOUND_MAX_BODY_BYTES``, ``/v1/settings`` at 4 KiB). Either way a body is
refused first by its declared Content-Length, before a byte of it is read, and then by
the bytes that arrive, counted as they pass: a body with no declared length (chunked)
is never read past its cap. The refusal is ``PayloadTooLarge`` (413).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing.api.errors import PassedOn, error_response
from homing.errors import PayloadTooLarge

__all__ = ["BodyLimit", "capped", "declared_length", "over_declared", "read_body", "too_large"]


def too_large(limit: int) -> PayloadTooLarge:
    """The refusal of a body over ``limit`` bytes."""
    return PayloadTooLarge(f"the request body is over {limit} bytes", {"limit": limit})


def declared_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    """The body's Content-Length, or None unless exactly one is given, all digits."""
    length: int | None = None
    for name, value in headers:
        if name == b"content-length":
            if length is not None or not value.isdigit():
                return None
            length = int(value)
    return length


def over_declared(headers: Iterable[tuple[bytes, bytes]], limit: int) -> bool:
    """Whether a Content-Length header declares more than ``limit`` bytes."""
    return any(
        name == b"content-length" and value.isdigit() and int(value) > limit
        for name, value in headers
    )


def capped(receive: Receive, limit: int) -> Receive:
    """``receive``, raising ``too_large(limit)`` as soon as the body it has passed on
    is over ``limit`` bytes (the message that goes past is not passed on)."""
    seen = 0

    async def limited() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise too_large(limit)
        return message

    return limited


async def read_body(headers: Iterable[tuple[bytes, bytes]], receive: Receive, limit: int) -> bytes:
    """The whole body, read through ``receive`` up to ``limit`` bytes: PayloadTooLarge
    when its Content-Length or the bytes that arrive are over it, ClientDisconnect
    when the client goes away first."""
    if over_declared(headers, limit):
        raise too_large(limit)
    chunks: list[bytes] = []
    receive = capped(receive, limit)
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, before they are parsed
    (``homing.api.middleware.body_limit``)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if over_declared(scope["headers"], self.limit):
            await error_response(too_large(self.limit))(scope, receive, send)
            return
        receive_capped = capped(receive, self.limit)

        async def limited() -> Message:
            try:
                return await receive_capped()
            except PayloadTooLarge as exc:
                # Raised inside the route's body parsing: passed on as an HTTPException,
                # FastAPI hands it to the error handlers rather than making it a 400.
                raise PassedOn(exc) from None

        await self.app(scope, limited, send)
