"""An httpx transport on aiohttp: the adapters keep httpx's API, calls cost less CPU.

Profiling the worker showed three quarters of its CPU inside httpx's own connection
layer (httpcore + anyio); aiohttp's C-accelerated client does the same work for a
fraction (docs/benchmarks.md). The adapters, their MockTransport tests and every
``httpx.Response`` they read stay as they are.

The one thing this transport must get exactly right is *when* a failure happened,
because the dispatcher acts on it (DESIGN §3): a failure before the request left
(refused, DNS, TLS, connect timeout, no pool slot) is ``httpx.ConnectError`` or
``httpx.ConnectTimeout`` — safe to send elsewhere; a failure after it may have
reached the provider (read timeout, disconnect, reset) is ``httpx.ReadTimeout``,
``httpx.RemoteProtocolError`` or ``httpx.ReadError`` — uncertain.
"""

from __future__ import annotations

import asyncio
from http.cookiejar import CookieJar
from typing import Any

import aiohttp
import httpx

_BEFORE_SENDING: list[tuple[type[BaseException], type[httpx.TransportError]]] = [
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    (aiohttp.InvalidUrlClientError, httpx.UnsupportedProtocol),
    (aiohttp.NonHttpUrlClientError, httpx.UnsupportedProtocol),
]
_AFTER_SENDING: list[tuple[type[BaseException], type[httpx.TransportError]]] = [
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.ReadError),
    (aiohttp.ClientOSError, httpx.ReadError),
    (aiohttp.ClientConnectionError, httpx.ReadError),
    (asyncio.TimeoutError, httpx.ReadTimeout),
]


def translate(exc: BaseException, request: httpx.Request) -> httpx.TransportError | None:
    """The httpx error for an aiohttp failure, keeping before/after-sending apart."""
    for source, target in (*_BEFORE_SENDING, *_AFTER_SENDING):
        if isinstance(exc, source):
            return target(f"{type(exc).__name__}: {exc}", request=request)
    return None


def _timeout(request: httpx.Request) -> aiohttp.ClientTimeout:
    spec: dict[str, float | None] = request.extensions.get("timeout", {})
    connect, pool = spec.get("connect"), spec.get("pool")
    waiting = None if connect is None or pool is None else connect + pool
    return aiohttp.ClientTimeout(
        total=None, connect=waiting, sock_connect=connect, sock_read=spec.get("read")
    )


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One pooled aiohttp session, created on first use inside the running loop."""

    def __init__(self, *, max_connections: int = 100, keepalive_seconds: float = 5.0) -> None:
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections,
                keepalive_timeout=self._keepalive,
                ttl_dns_cache=60,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,
                skip_auto_headers=("User-Agent",),
                cookie_jar=aiohttp.DummyCookieJar(),  # see NoCookies
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        try:
            async with self._client().request(
                request.method,
                str(request.url),
                headers=list(request.headers.multi_items()),
                data=body or None,
                allow_redirects=False,
                timeout=_timeout(request),
            ) as response:
                content = await response.read()
                headers = [(k.decode(), v.decode()) for k, v in response.raw_headers]
                status = response.status
        except Exception as exc:
            translated = translate(exc, request)
            if translated is None:
                raise
            raise translated from exc
        return httpx.Response(status, headers=headers, content=content, request=request)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class NoCookies(CookieJar):
    """A cookie jar that keeps nothing. One client carries every tenant's provider calls:
    a cookie one response sets must never travel with another tenant's request."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None


def build_client(timeout: float, *, max_connections: int, **kw: Any) -> httpx.AsyncClient:
    """The pooled client the adapters share: aiohttp underneath, no redirects, no cookies."""
    return httpx.AsyncClient(
        transport=AiohttpTransport(max_connections=max_connections),
        timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)),
        follow_redirects=False,
        cookies=NoCookies(),
        **kw,
    )
