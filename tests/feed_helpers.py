"""Helpers of the in-app feed's tests: a recipient, an in-app send, a token, and a
Server-Sent Events reader over a real HTTP connection (docs/feed.md)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import html
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.conftest import TenantClient


async def put_recipient(tenant: TenantClient, external_id: str) -> None:
    response = await tenant.put(f"/v1/recipients/{external_id}", json={})
    assert response.status_code in (200, 201), response.text


async def send_item(tenant: TenantClient, recipient: str, **fields: Any) -> httpx.Response:
    headers = fields.pop("headers", {})
    body = {"recipient": recipient, "body": "Your report is ready", **fields}
    return await tenant.post("/v1/notifications/in-app", json=body, headers=headers)


async def sent(tenant: TenantClient, recipient: str, **fields: Any) -> str:
    """The job id of one in-app send, asserted 202 COMPLETED."""
    response = await send_item(tenant, recipient, **fields)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "COMPLETED"
    job_id: str = response.json()["id"]
    return job_id


async def feed_token(tenant: TenantClient, recipient: str) -> str:
    response = await tenant.get(f"/v1/recipients/{recipient}/feed-token")
    assert response.status_code == 200, response.text
    token: str = response.json()["token"]
    return token


def sign(secret: str, tenant_id: str, external_id: str, expires: int) -> str:
    """A feed token signed as docs/feed.md tells a tenant's backend to (Python)."""
    msg = base64.urlsafe_b64encode(f"{tenant_id}.{expires}.{external_id}".encode())
    msg_text = msg.rstrip(b"=").decode()
    mac = hmac.new(secret.encode(), msg_text.encode(), hashlib.sha256).hexdigest()
    return f"{msg_text}.{mac}"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Events:
    """The events of one open stream, parsed as they arrive."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    async def next(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        """The next event of ``kind`` (its data, with its ``id`` when it has one);
        heartbeats and other events are skipped. Fails past ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                event = await self._event()
                if event.get("event") == kind:
                    data: dict[str, Any] = orjson.loads(event["data"])
                    if "id" in event:
                        data["_event_id"] = event["id"]
                    return data

    async def following(self, timeout: float = 10.0) -> tuple[str, dict[str, Any]]:
        """The next event whatever its kind (heartbeats skipped): its kind and data."""
        async with asyncio.timeout(timeout):
            event = await self._event()
        data: dict[str, Any] = orjson.loads(event.get("data", "{}"))
        return event.get("event", "message"), data

    async def ended(self, timeout: float = 10.0) -> bool:
        """Whether the stream ends (its server closes it) within ``timeout`` seconds,
        with no event left (heartbeats aside)."""
        async with asyncio.timeout(timeout):
            try:
                await self._event()
            except AssertionError:
                return True
        return False

    async def _event(self) -> dict[str, str]:
        event: dict[str, str] = {}
        async for line in self._lines:
            if not line:
                if event:
                    return event
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            event[name] = value
        raise AssertionError("the stream ended")


def bell_page(homing_url: str, token: str) -> Starlette:
    """The tenant's own page: its product, with the bell script included."""
    script = (
        f'<script src="{html.escape(homing_url)}/feed/bell.js" '
        f'data-homing-url="{html.escape(homing_url)}" data-token="{html.escape(token)}"></script>'
    )

    async def page(_: Request) -> HTMLResponse:
        return HTMLResponse(f"<!doctype html><title>App</title><h1>My app</h1>{script}")

    return Starlette(routes=[Route("/", page)])
