"""HTTP for webhooks: resolve once, check every address, connect to the one checked.

The guard sits where httpcore opens a TCP connection (``GuardedBackend``), so it
holds for every new connection, whatever the URL looked like and however the name
resolves: DNS is asked once per connection, every address it returns must pass the
``AddressPolicy``, and the socket is opened to that very address (no second lookup
for a rebinding attack to win). TLS still verifies the certificate against the host
name, since httpcore starts TLS with the URL's host as ``server_hostname``.
Connections are pooled per URL origin, so a reused connection is one that passed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Any, Protocol

import httpcore
import httpx

from homing import __version__
from homing.providers.transport import NoCookies
from homing.providers.webhook.ssrf import AddressPolicy, IPAddress, Refusal

__all__ = [
    "MAX_RESPONSE_BYTES",
    "AddressRefused",
    "GuardedBackend",
    "GuardedTransport",
    "Resolver",
    "SystemResolver",
    "guarded_client",
    "read_capped",
]

USER_AGENT = f"homing-webhooks/{__version__}"
# The most of a receiver's body ever read: what is kept is an excerpt, and an endless
# answer must not fill the worker's memory (issue 12, item 4).
MAX_RESPONSE_BYTES = 64 * 1024


async def read_capped(response: httpx.Response, cap: int = MAX_RESPONSE_BYTES) -> bytes:
    """At most ``cap`` bytes of a streamed response's body (never more than
    ``MAX_RESPONSE_BYTES``); the caller closes the response, which drops a connection
    whose body was not read to the end. A body that breaks off is kept as far as it
    came: the status already says what happened."""
    cap = max(0, min(cap, MAX_RESPONSE_BYTES))
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_raw():
            if size >= cap:
                break
            parts.append(chunk[: cap - size])
            size += len(parts[-1])
    except httpx.HTTPError:
        pass
    return b"".join(parts)


class AddressRefused(Exception):
    """The webhook's host resolves to an address Homing will not connect to.

    The message names the class of address, never the address, so a tenant cannot
    use the error to map an internal network's DNS.
    """

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"the host resolves to a {refusal.value} address")
        self.refusal = refusal


class Resolver(Protocol):
    """Resolves a host name to addresses, so the guard checks the address it then
    connects to."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address ``host`` resolves to; raise ``OSError`` when it does not."""
        ...


class SystemResolver:
    """The operating system's resolver (``getaddrinfo``), off the event loop."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return _unique(ipaddress.ip_address(info[4][0]) for info in infos)


def _unique(addresses: Iterable[IPAddress]) -> list[IPAddress]:
    return list(dict.fromkeys(addresses))


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that refuses addresses outside ``policy``."""

    def __init__(
        self,
        policy: AddressPolicy,
        resolver: Resolver,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.checked_addresses(host, port, timeout)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def checked_addresses(
        self, host: str, port: int, timeout: float | None = None
    ) -> list[IPAddress]:
        """Resolve ``host`` once; every address must pass, or none is used."""
        addresses = await self._resolve(host, port, timeout)
        for address in addresses:
            refusal = self._policy.refusal(address)
            if refusal is not None:
                raise AddressRefused(refusal)
        return addresses

    async def _resolve(self, host: str, port: int, timeout: float | None) -> list[IPAddress]:
        try:
            return [ipaddress.ip_address(host)]
        except ValueError:
            pass
        try:
            addresses = await asyncio.wait_for(self._resolver.resolve(host, port), timeout)
        except TimeoutError:
            raise httpcore.ConnectTimeout("name resolution timed out") from None
        except (OSError, UnicodeError):
            raise httpcore.ConnectError("the host name does not resolve") from None
        if not addresses:
            raise httpcore.ConnectError("the host name does not resolve")
        return addresses

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused(Refusal.RESERVED)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, with its connection pool opening connections through the guard."""

    def __init__(self, backend: GuardedBackend, limits: httpx.Limits) -> None:
        super().__init__(trust_env=False, limits=limits)
        # httpx offers no public hook for the network backend, so the pool it just
        # built is replaced by the same pool with the guard as its backend.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=backend,
        )


def guarded_client(
    policy: AddressPolicy,
    resolver: Resolver,
    *,
    timeout: float,
    max_connections: int = 100,
    inner: httpcore.AsyncNetworkBackend | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` for webhook deliveries under ``policy``.

    No redirects, no proxies or ``.netrc`` from the environment, and every new
    connection checked by ``GuardedBackend``.
    """
    backend = GuardedBackend(policy, resolver, inner)
    limits = httpx.Limits(max_connections=max_connections)
    return httpx.AsyncClient(
        transport=GuardedTransport(backend, limits),
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": USER_AGENT},
        cookies=NoCookies(),  # one client for every tenant's endpoints
    )


class WebhookClients:
    """One guarded client per scheme: plain http may be held to the allowed networks."""

    def __init__(
        self,
        https: httpx.AsyncClient,
        http: httpx.AsyncClient,
    ) -> None:
        self._https = https
        self._http = http

    def for_scheme(self, scheme: str) -> httpx.AsyncClient:
        return self._https if scheme == "https" else self._http

    async def aclose(self) -> None:
        await self._https.aclose()
        await self._http.aclose()
