"""The feed's stream over real HTTP (uvicorn on loopback), on SQLite and PostgreSQL:
an item sent through the API arrives as an ``item`` event with the unread count; a
reconnect with ``Last-Event-ID`` gets what was sent while it was away, and nothing
twice, also from an empty feed (the unread event's ``id`` says where the stream is);
an item written by another process (another ``Services`` on the same database, which
wakes none of this process's streams) arrives by the poll; a graceful stop ends the
open streams and refuses new ones."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from homing.api.app import create_app
from homing.services import Services, build
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.feed_helpers import Events, bearer, feed_token, put_recipient, sent
from tests.fixtures import serving


@pytest.fixture
async def site(services: Services) -> AsyncIterator[str]:
    async with serving(create_app(services)) as url:
        yield url


@pytest.fixture
async def live(site: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=site, timeout=10) as client:
        yield client


async def _acme(services: Services, live: httpx.AsyncClient) -> tuple[TenantClient, str]:
    tenant = await make_tenant(services, live, "acme")
    await put_recipient(tenant, "user-1")
    return tenant, await feed_token(tenant, "user-1")


async def test_a_sent_item_arrives_on_the_stream_with_the_unread_count(
    services: Services, live: httpx.AsyncClient
) -> None:
    tenant, token = await _acme(services, live)
    async with live.stream("GET", "/feed/stream", headers=bearer(token)) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        events = Events(stream.aiter_lines())
        assert (await events.next("unread"))["unread_count"] == 0
        job_id = await sent(tenant, "user-1", title="Hello")
        item = await events.next("item")
        assert (item["title"], item["job_id"], item["_event_id"]) == ("Hello", job_id, "1")
        assert (await events.next("unread"))["unread_count"] == 1


async def test_a_reconnect_with_last_event_id_misses_nothing(
    services: Services, live: httpx.AsyncClient
) -> None:
    tenant, token = await _acme(services, live)
    async with live.stream("GET", "/feed/stream", headers=bearer(token)) as stream:
        events = Events(stream.aiter_lines())
        await sent(tenant, "user-1", body="first")
        first = await events.next("item")
    for body in ("while away 1", "while away 2"):  # the stream is closed
        await sent(tenant, "user-1", body=body)
    resume = {**bearer(token), "Last-Event-ID": first["_event_id"]}
    async with live.stream("GET", "/feed/stream", headers=resume) as stream:
        events = Events(stream.aiter_lines())
        got = [(await events.next("item"))["body"] for _ in range(2)]
        assert got == ["while away 1", "while away 2"]
        await sent(tenant, "user-1", body="live")
        assert (await events.next("item"))["body"] == "live"


async def test_an_item_written_by_another_process_arrives_by_the_poll(
    services: Services, settings: Settings, live: httpx.AsyncClient
) -> None:
    tenant, token = await _acme(services, live)
    other = await build(settings, run_migrations=False)
    try:
        async with live.stream("GET", "/feed/stream", headers=bearer(token)) as stream:
            events = Events(stream.aiter_lines())
            await events.next("unread")
            transport = httpx.ASGITransport(app=create_app(other))
            async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as api:
                elsewhere = TenantClient(api, tenant.tenant_id, tenant.key)
                await sent(elsewhere, "user-1", body="from the worker")
            assert (await events.next("item"))["body"] == "from the worker"
    finally:
        await other.aclose()


async def test_an_empty_feed_resumes_from_the_unread_events_id(
    services: Services, live: httpx.AsyncClient
) -> None:
    tenant, token = await _acme(services, live)
    async with live.stream("GET", "/feed/stream", headers=bearer(token)) as stream:
        unread = await Events(stream.aiter_lines()).next("unread")
        assert (unread["unread_count"], unread["_event_id"]) == (0, "0")
    await sent(tenant, "user-1", body="while away")  # the stream is closed
    resume = {**bearer(token), "Last-Event-ID": unread["_event_id"]}
    async with live.stream("GET", "/feed/stream", headers=resume) as stream:
        events = Events(stream.aiter_lines())
        assert (await events.next("item"))["body"] == "while away"
        assert (await events.next("unread")) == {"unread_count": 1, "_event_id": "1"}


async def test_a_graceful_stop_ends_the_open_streams_and_refuses_new_ones(
    services: Services, live: httpx.AsyncClient
) -> None:
    _, token = await _acme(services, live)
    async with live.stream("GET", "/feed/stream", headers=bearer(token)) as stream:
        events = Events(stream.aiter_lines())
        await events.next("unread")
        services.feed.streams.end_all()
        with pytest.raises(AssertionError, match="the stream ended"):
            await events.next("item")
    refused = await live.get("/feed/stream", headers=bearer(token))
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "overloaded"
