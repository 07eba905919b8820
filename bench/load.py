"""Load and meters shared by Homing's and the peer's runs, so both see the same client.

``closed_loop`` is N clients each sending its next request when the last is answered;
``open_loop`` offers a fixed rate. Both use aiohttp: on this machine an httpx
``AsyncClient`` with 64 connections sends a tenth of what aiohttp does (encode/httpx#3215),
and the client would be what is measured. ``SandboxCounter`` and ``window`` measure
deliveries by the sandbox's own count of what it accepted.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import aiohttp
import httpx

MESSAGE = {"to": "ada@example.com", "from": "bench@example.com", "subject": "Hi", "text": "x"}
POLL_SECONDS = 0.05


@dataclass(frozen=True, slots=True)
class Post:
    """One kind of request: a JSON body serialised once, headers made per request."""

    url: str
    body: bytes
    headers: Callable[[], dict[str, str]]


def post(url: str, body: object, api_key: str, idempotency_keys: bool = False) -> Post:
    """A JSON POST with a bearer key; each request with its own Idempotency-Key if asked."""
    fixed = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}

    def headers() -> dict[str, str]:
        return {**fixed, "Idempotency-Key": uuid.uuid4().hex} if idempotency_keys else fixed

    return Post(url, json.dumps(body).encode(), headers)


@asynccontextmanager
async def session(connections: int = 64) -> AsyncIterator[aiohttp.ClientSession]:
    connector = aiohttp.TCPConnector(limit=connections)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as client:
        yield client


@dataclass
class Load:
    accepted: int = 0
    refused: int = 0
    seconds: float = 0.0
    statuses: dict[int, int] = field(default_factory=dict)

    @property
    def per_second(self) -> float:
        return self.accepted / self.seconds if self.seconds else 0.0

    async def send(self, client: aiohttp.ClientSession, request: Post) -> None:
        try:
            async with client.post(request.url, data=request.body, headers=request.headers()) as r:
                await r.read()
                status = r.status
        except (aiohttp.ClientError, TimeoutError):
            status = 0
        if status == 202:
            self.accepted += 1
        else:
            self.refused += 1
            self.statuses[status] = self.statuses.get(status, 0) + 1


async def closed_loop(
    client: aiohttp.ClientSession, clients: int, seconds: float, request: Post
) -> Load:
    """``clients`` lanes, each sending ``request`` back to back for ``seconds``."""
    load = Load()
    stop_at = time.perf_counter() + seconds

    async def lane() -> None:
        while time.perf_counter() < stop_at:
            await load.send(client, request)

    started = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(clients)))
    load.seconds = time.perf_counter() - started
    return load


async def open_loop(
    client: aiohttp.ClientSession, rate: float, seconds: float, request: Post, in_flight: int = 64
) -> Load:
    """Offer ``rate`` requests/s for ``seconds``; at most ``in_flight`` wait at once."""
    load = Load()
    gate = asyncio.Semaphore(in_flight)

    async def one() -> None:
        try:
            await load.send(client, request)
        finally:
            gate.release()

    tasks = []
    started = time.perf_counter()
    for i in range(int(rate * seconds)):
        delay = started + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await gate.acquire()
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)
    load.seconds = time.perf_counter() - started
    return load


async def until_healthy(base_url: str, timeout: float = 60) -> None:
    """Return once ``GET {base_url}/healthz`` answers 200."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(base_url=base_url) as client:
        while time.monotonic() < deadline:
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{base_url} did not answer /healthz")


class SandboxCounter:
    """How many sends the sandbox has accepted for ``provider`` so far."""

    def __init__(self, client: httpx.AsyncClient, provider: str = "resend") -> None:
        self._client = client
        self._provider = provider

    async def __call__(self) -> int:
        stats = (await self._client.get("/_sandbox/stats")).json()
        return int(stats["received"].get(self._provider, 0))

    async def reach(self, count: int, timeout: float = 120) -> None:
        """Return once the count is at least ``count``."""
        deadline = time.monotonic() + timeout
        while await self() < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the sandbox never reached {count} deliveries")
            await asyncio.sleep(POLL_SECONDS)


@dataclass(frozen=True, slots=True)
class Window:
    delivered: int
    seconds: float
    drained: bool

    @property
    def per_second(self) -> float:
        return self.delivered / self.seconds if self.seconds else 0.0


async def window(counter: SandboxCounter, seconds: float, until: int | None = None) -> Window:
    """Deliveries over ``seconds``, cut short when the count reaches ``until`` (drained)."""
    first = await counter()
    started = time.perf_counter()
    count = first
    while time.perf_counter() - started < seconds:
        await asyncio.sleep(POLL_SECONDS)
        count = await counter()
        if until is not None and count >= until:
            return Window(count - first, time.perf_counter() - started, True)
    return Window(count - first, time.perf_counter() - started, False)


async def drain_rate(
    counter: SandboxCounter, total: int, warmup: float, seconds: float, start: int = 0
) -> Window:
    """The sustained rate of a worker draining ``total`` jobs: skip the first delivery
    and ``warmup`` seconds (process start, connection pools), then one window."""
    await counter.reach(start + 1)
    await asyncio.sleep(warmup)
    return await window(counter, seconds, until=start + total)


async def ingest(
    base_url: str, api_key: str, clients: int, seconds: float, batch_size: int
) -> tuple[Load, Load]:
    """``clients`` lanes on ``POST /v1/notifications/email`` (each request with its own
    Idempotency-Key) after a 2 s warm-up, then on ``…/batch`` with ``batch_size``
    messages a request. Returns (single, batch) loads; a batch counts once per request."""
    single = post(f"{base_url}/v1/notifications/email", MESSAGE, api_key, idempotency_keys=True)
    body = {"messages": [MESSAGE] * batch_size}
    batch = post(f"{base_url}/v1/notifications/email/batch", body, api_key)
    async with session(clients) as client:
        await closed_loop(client, clients, 2, single)
        one = await closed_loop(client, clients, seconds, single)
        many = await closed_loop(client, clients, seconds, batch)
    return one, many
