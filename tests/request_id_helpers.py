"""A raw ASGI call for the request-id tests: headers go in as bytes, exactly as a
hostile client would put them on the wire (httpx refuses CR/LF in a header value)."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Message

GENERATED = re.compile(r"[0-9a-f]{32}")

log = logging.getLogger("homing.test.request_id")


def with_logging_route(app: FastAPI) -> FastAPI:
    """``app`` with ``GET /_test/log``, which writes one log line while it is served."""

    @app.get("/_test/log")
    async def _logs() -> dict[str, str]:
        log.info("test route served")
        return {"ok": "yes"}

    return app


@dataclass
class RawResponse:
    """What the app sent: status, headers as bytes, and the body."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def header_values(self, name: bytes) -> list[bytes]:
        return [v for k, v in self.headers if k == name]

    def json(self) -> Any:
        return json.loads(self.body)


async def call(
    app: ASGIApp,
    path: str,
    headers: list[tuple[bytes, bytes]],
    *,
    method: str = "GET",
    body: bytes = b"",
) -> RawResponse:
    """One request to ``app`` with exactly these raw headers."""
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"homing.test"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("homing.test", 80),
        "state": {},
    }
    sent: list[Message] = []
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> Message:
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return RawResponse(start["status"], list(start.get("headers", [])), content)
