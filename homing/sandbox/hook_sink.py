"""A webhook receiver: ``POST /hooks/{name}`` records what Homing delivered there, and
``GET /_sandbox/hooks`` lists it, newest last (``?name=`` for one receiver's).

The demo sends its tenant's webhooks here (``homing run --demo``), so a webhook job
has somewhere to go without a receiver of one's own. It answers 200 ``{"ok": true}``
to any POST of at most ``MAX_BODY`` bytes (413 past it) and keeps the body as text
with the headers a receiver checks (the Standard Webhooks ``webhook-*`` and Homing's
``X-Webhook-*``); it verifies no signature (it knows no tenant's secret). It keeps the
last ``KEPT`` deliveries.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.state import SandboxState

MAX_BODY: Final = 1024 * 1024
MAX_NAME: Final = 200
KEPT: Final = 1000
_HEADERS: Final = (
    "content-type",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "x-webhook-event",
    "x-webhook-timestamp",
    "x-webhook-signature",
)


async def _body(request: Request) -> bytes | None:
    """The body, or None past MAX_BODY (declared or read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY:
            return None
    return bytes(body)


def hooks_router(state: SandboxState) -> Router:
    """The receiver, to mount under ``/hooks``."""

    async def post(request: Request) -> Response:
        name = request.path_params["name"]
        body = await _body(request)
        if body is None or len(name) > MAX_NAME:
            return JSONResponse({"ok": False}, status_code=413)
        kept = {h: request.headers[h] for h in _HEADERS if h in request.headers}
        state.hooks.append(
            {
                "name": name,
                "headers": kept,
                "body": body.decode("utf-8", "replace"),
                "received_at": datetime.now(UTC).isoformat(),
            }
        )
        return JSONResponse({"ok": True})

    return Router(routes=[Route("/{name:path}", post, methods=["POST"])])


def hooks_listing(state: SandboxState) -> list[Route]:
    """``GET /_sandbox/hooks`` (``?name=``) and ``DELETE /_sandbox/hooks``."""

    async def listing(request: Request) -> Response:
        name = request.query_params.get("name")
        found: list[dict[str, Any]] = [h for h in state.hooks if name is None or h["name"] == name]
        return JSONResponse(found)

    async def clear(request: Request) -> Response:
        state.hooks.clear()
        return Response(status_code=204)

    return [
        Route("/hooks", listing, methods=["GET"]),
        Route("/hooks", clear, methods=["DELETE"]),
    ]
