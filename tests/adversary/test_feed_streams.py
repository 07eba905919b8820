"""A hostile browser against the feed's stream and CORS (docs/feed.md): too many open
streams (bounded per recipient, 429, and per process, 503), a reader that never reads
(its stream is dropped once a whole buffer behind, holding no more than the buffer,
while sends go on), and origins no tenant, or another tenant, allows (no CORS headers)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.api.app import create_app
from homing.api.routes.feed_stream import FeedStream
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.feed_helpers import Events, bearer, feed_token, put_recipient, sent
from tests.fixtures import serving, settings_for

BUFFER = 4


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        feed_streams_per_recipient=2,
        feed_streams_per_process=3,
        feed_stream_buffer=BUFFER,
    )


@pytest.fixture
async def live(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        serving(create_app(services)) as url,
        httpx.AsyncClient(base_url=url, timeout=10) as client,
    ):
        yield client


async def test_streams_are_bounded_per_recipient_and_per_process(
    services: Services, live: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, live, "acme")
    for name in ("user-1", "user-2"):
        await put_recipient(tenant, name)
    one = bearer(await feed_token(tenant, "user-1"))
    two = bearer(await feed_token(tenant, "user-2"))
    # Each reader kept: a line iterator collected closes its connection.
    readers: list[Events] = []
    async with contextlib.AsyncExitStack() as open_streams:
        for _ in range(2):
            stream = await open_streams.enter_async_context(
                live.stream("GET", "/feed/stream", headers=one)
            )
            assert stream.status_code == 200
            readers.append(Events(stream.aiter_lines()))
            await readers[-1].next("unread")
        third = await live.get("/feed/stream", headers=one)
        assert third.status_code == 429 and "Retry-After" in third.headers
        other = await open_streams.enter_async_context(
            live.stream("GET", "/feed/stream", headers=two)
        )
        assert other.status_code == 200
        assert services.feed.streams.open_count == 3
        full = await live.get("/feed/stream", headers=two)
        assert full.status_code == 503 and full.json()["error"]["code"] == "overloaded"
    # Closed streams give their places back.
    deadline = asyncio.get_running_loop().time() + 10
    while services.feed.streams.open_count and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)
    assert services.feed.streams.open_count == 0


async def test_a_reader_that_never_reads_is_dropped_with_a_bounded_buffer(
    services: Services, tenant: TenantClient
) -> None:
    await put_recipient(tenant, "user-1")
    reader = await services.feed.reader_of(tenant.tenant_id, "user-1")
    wake = services.feed.streams.open(reader.key)
    stream = FeedStream(services.feed, reader, 0, wake, {}, poll=1.0, heartbeat=60.0, buffer=BUFFER)
    stuck = asyncio.Event()  # never set: the client's socket never drains
    sent_bodies: list[Any] = []

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body" and message.get("more_body"):
            sent_bodies.append(message)
            await stuck.wait()

    async def receive() -> Any:
        await asyncio.Event().wait()  # the client never leaves either

    serving_stream = asyncio.create_task(stream({"type": "http"}, receive, send))
    for n in range(BUFFER * 3):
        # Every send is answered while the reader is stuck: delivery never waits on it.
        await asyncio.wait_for(sent(tenant, "user-1", body=f"item {n}"), timeout=10)
    await asyncio.wait_for(serving_stream, timeout=10)
    assert stream.dropped
    assert stream.buffer.qsize() <= BUFFER
    assert len(sent_bodies) == 1  # the one write it was stuck in
    assert services.feed.streams.open_count == 0


async def test_cors_answers_only_origins_the_tokens_tenant_allows(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    put = await tenant.put("/v1/feed-origins", json={"origins": ["http://127.0.0.1:8123"]})
    assert put.status_code == 200, put.text
    put = await other.put("/v1/feed-origins", json={"origins": ["https://other.example"]})
    assert put.status_code == 200
    await put_recipient(tenant, "user-1")
    headers = bearer(await feed_token(tenant, "user-1"))
    asked = {"Access-Control-Request-Method": "GET"}
    allowed = await api.options("/feed", headers={"Origin": "http://127.0.0.1:8123", **asked})
    assert allowed.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:8123"
    assert "Authorization" in allowed.headers["Access-Control-Allow-Headers"]
    for origin in ("https://evil.example", "null", "http://127.0.0.1:8123.evil.example"):
        refused = await api.options("/feed", headers={"Origin": origin, **asked})
        assert "Access-Control-Allow-Origin" not in refused.headers
        real = await api.get("/feed", headers={**headers, "Origin": origin})
        assert real.status_code == 200 and "Access-Control-Allow-Origin" not in real.headers
    # Another tenant's origin passes its preflight but never reads this tenant's feed.
    theirs = await api.get("/feed", headers={**headers, "Origin": "https://other.example"})
    assert "Access-Control-Allow-Origin" not in theirs.headers
    mine = await api.get("/feed", headers={**headers, "Origin": "http://127.0.0.1:8123"})
    assert mine.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:8123"
    # Nowhere but /feed: the tenant API answers no CORS at all.
    v1 = await tenant.get("/v1/feed-origins", headers={"Origin": "http://127.0.0.1:8123"})
    assert "Access-Control-Allow-Origin" not in v1.headers


async def test_a_backlog_larger_than_the_buffer_reaches_a_reader_that_reads(
    services: Services, live: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, live, "acme")
    await put_recipient(tenant, "user-1")
    token = await feed_token(tenant, "user-1")
    for n in range(BUFFER * 3):
        await sent(tenant, "user-1", body=f"item {n}")
    resume = {**bearer(token), "Last-Event-ID": "0"}
    async with live.stream("GET", "/feed/stream", headers=resume) as stream:
        events = Events(stream.aiter_lines())
        got = [(await events.next("item"))["body"] for _ in range(BUFFER * 3)]
    assert got == [f"item {n}" for n in range(BUFFER * 3)]
