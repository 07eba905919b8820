"""An httpx transport on aiohttp: the adapters keep httpx's API, calls cost less CPU.

Profiling the worker showed three quarters of its CPU inside httpx's own connection
layer (httpcore + anyio); aiohttp's C-accelerated client does the same work for a
fraction (docs/benchmarks.md). The adapters, their MockTransport tests and every
``httpx.Response`` they read stay as they are. ``ProviderClient`` goes one step further
for the one request every send makes (JSON to an absolute URL): it skips httpx's
request building and hands the request to aiohttp itself.

The one thing this transport must get exactly right is *when* a failure happened,
because the dispatcher acts on it (docs/architecture.md, "Failure classes"): a failure
before the request left (refused, DNS, TLS, connect timeout, no pool slot) is
``httpx.ConnectError`` or ``httpx.ConnectTimeout`` — safe to send elsewhere; a failure
after it may have reached the provider (read timeout, disconnect, reset) is ``httpx.ReadTimeout``,
``httpx.RemoteProtocolError`` or ``httpx.ReadError`` — uncertain.

This is the one outbound HTTP stack: provider calls (``build_client``) and webhook
deliveries (``homing.providers.webhook.clients.guarded_client``) both go through it,
each with its own guard (``homing.providers.guard``). What holds for every call: no
redirect followed, no proxy or ``.netrc`` from the environment, no cookie kept,
per-phase timeouts (connect, read), and a response body read up to
``MAX_RESPONSE_BYTES`` with the connection closed after: a provider error or a webhook
excerpt fits in far less, and an endless answer must not fill the process's memory.
With a guard, each URL passes its ``check_url`` before the request, each connection
goes only to addresses its resolver allows (``CheckedResolver``), and a redirect is
what the guard says: refused for providers (``EndpointRefused``), returned for webhooks.
"""

from __future__ import annotations

import asyncio
import json as json_module
import socket
from collections.abc import Callable, Mapping
from http.cookiejar import CookieJar
from typing import TYPE_CHECKING, Any, Final

import aiohttp
import httpx

if TYPE_CHECKING:
    from homing.providers.guard import Guard

# Opens the socket for one address aiohttp connects to (aiohttp's ``socket_factory``):
# tests pass one that records the address and refuses, so nothing is ever connected.
SocketFactory = Callable[[tuple[Any, ...]], socket.socket]

MAX_RESPONSE_BYTES: Final = 64 * 1024
_REDIRECTS: Final = range(300, 400)

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


def _timeout(spec: dict[str, float | None]) -> aiohttp.ClientTimeout:
    """aiohttp's timeouts for httpx's (``httpx.Timeout.as_dict()``)."""
    connect, pool = spec.get("connect"), spec.get("pool")
    waiting = None if connect is None or pool is None else connect + pool
    return aiohttp.ClientTimeout(
        total=None, connect=waiting, sock_connect=connect, sock_read=spec.get("read")
    )


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One pooled aiohttp session, created on first use inside the running loop; with
    ``guard``, its connector resolves through the guard's resolver."""

    def __init__(
        self,
        *,
        max_connections: int = 100,
        keepalive_seconds: float = 5.0,
        guard: Guard | None = None,
        socket_factory: SocketFactory | None = None,
    ) -> None:
        self._max_connections = max_connections
        self._keepalive = keepalive_seconds
        self._guard = guard
        self._socket_factory = socket_factory
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections,
                keepalive_timeout=self._keepalive,
                ttl_dns_cache=60,
                resolver=self._guard.resolver() if self._guard is not None else None,
                socket_factory=self._socket_factory,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,
                skip_auto_headers=("User-Agent",),
                cookie_jar=aiohttp.DummyCookieJar(),  # see NoCookies
                trust_env=False,  # no proxy or .netrc from the environment
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        headers = list(request.headers.multi_items())
        timeout = _timeout(request.extensions.get("timeout", {}))
        status, answer, content = await self.exchange(
            request.method, str(request.url), headers, body, timeout, lambda: request
        )
        return httpx.Response(status, headers=answer, content=content, request=request)

    async def exchange(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes,
        timeout: aiohttp.ClientTimeout,
        request: Callable[[], httpx.Request],
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """One request and its response: status, headers, body (at most
        ``MAX_RESPONSE_BYTES``). A failure is raised as the httpx error ``translate``
        gives for it (``request`` makes the httpx request it names, only then); what the
        guard refuses (a URL, an address, a redirect), as the guard's own error."""
        if self._guard is not None:
            self._guard.check_url(url)
        try:
            async with self._client().request(
                method,
                url,
                headers=headers,
                data=body or None,
                allow_redirects=False,
                timeout=timeout,
            ) as response:
                if self._guard is not None and response.status in _REDIRECTS:
                    refused = self._guard.redirected(response.status)
                    if refused is not None:
                        response.close()
                        raise refused
                content = await read_capped(response, MAX_RESPONSE_BYTES)
                answer = [
                    (k.decode(), v.decode())
                    for k, v in response.raw_headers
                    if k.lower() != b"content-encoding"  # the body is kept as it came
                ]
                return response.status, answer, content
        except Exception as exc:
            translated = translate(exc, request())
            if translated is None:
                raise
            raise translated from exc

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


async def read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes:
    """At most ``cap`` bytes of the body; past that the connection is closed, so the
    rest is never downloaded (nor kept for reuse)."""
    parts: list[bytes] = []
    size = 0
    while size < cap:
        chunk = await response.content.read(cap - size)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
    if not response.content.at_eof():
        response.close()
    return b"".join(parts)


class NoCookies(CookieJar):
    """A cookie jar that keeps nothing. One client carries every tenant's provider calls:
    a cookie one response sets must never travel with another tenant's request."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def add_cookie_header(self, request: Any) -> None:
        return None


class ProviderClient(httpx.AsyncClient):
    """The adapters' client. What every send is — a JSON body and headers to an absolute
    URL, no redirects — goes straight to the aiohttp session, with the headers httpx
    would send; anything else goes through httpx as before. httpx's own request and
    response building was about 30% of a worker's CPU per delivery (docs/benchmarks.md).
    The answer is the same ``httpx.Response`` (without ``.request``), and a failure the
    same httpx error, before or after sending (``translate``)."""

    def __init__(self, transport: AiohttpTransport, timeout: httpx.Timeout, **kw: Any) -> None:
        kw.setdefault("headers", {"Accept-Encoding": "identity"})
        super().__init__(
            transport=transport,
            timeout=timeout,
            follow_redirects=False,
            cookies=NoCookies(),
            trust_env=False,
            **kw,
        )
        self._aiohttp = transport
        self._aiohttp_timeout = _timeout(timeout.as_dict())
        self._defaults = {k.lower(): v for k, v in self.headers.items()}

    async def request(  # type: ignore[override]
        self,
        method: str,
        url: httpx.URL | str,
        *,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        follow_redirects: Any = False,
        **kwargs: Any,
    ) -> httpx.Response:
        direct = (
            json is not None
            and not kwargs
            and follow_redirects is False
            and isinstance(url, str)
            and url.startswith(("https://", "http://"))
        )
        if not direct:
            return await super().request(
                method, url, json=json, headers=headers, follow_redirects=follow_redirects, **kwargs
            )
        assert isinstance(url, str)
        body = json_module.dumps(
            json, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode()
        merged = {**self._defaults, "content-type": "application/json"}
        merged.update((k.lower(), v) for k, v in (headers or {}).items())
        status, answer, content = await self._aiohttp.exchange(
            method,
            url,
            list(merged.items()),
            body,
            self._aiohttp_timeout,
            lambda: httpx.Request(method, url),
        )
        return httpx.Response(status, headers=answer, content=content)


def build_client(
    timeout: float,
    *,
    max_connections: int,
    guard: Guard | None = None,
    connect_timeout: float = 5.0,
    socket_factory: SocketFactory | None = None,
    **kw: Any,
) -> httpx.AsyncClient:
    """The pooled client on the one outbound stack: aiohttp underneath, no redirects, no
    cookies, bodies capped; with ``guard``, only what it allows. ``timeout`` is each
    phase's (reading, writing), ``connect_timeout`` caps connecting."""
    return ProviderClient(
        AiohttpTransport(
            max_connections=max_connections, guard=guard, socket_factory=socket_factory
        ),
        httpx.Timeout(timeout, connect=min(connect_timeout, timeout)),
        **kw,
    )
