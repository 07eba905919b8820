"""Resolve once, check every address, connect to the one checked: every outbound call.

The one outbound HTTP stack (``homing.providers.transport``) opens its connections
through aiohttp's resolver, and the resolver here (``CheckedResolver``) is where the
address guard sits: a host is looked up once per connection, every address it returns
must pass the caller's ``AddressPolicy`` (``homing.providers.webhook.ssrf`` classifies
them) or none is used, and aiohttp connects to the addresses returned, still verifying
TLS against the URL's host name, so no second lookup can rebind it. IP literals never
reach a resolver: each guard's ``check_url``, run before every request, judges them.

Two guards, one mechanism, two policies. ``EndpointGuard`` holds provider calls to the
vendor's hosts, the operator's allowed networks and the sandbox URLs (refusals are
``EndpointRefused``; a redirect is refused too). ``WebhookGuard`` holds deliveries to
public addresses and the webhook allowed networks (refusals are ``AddressRefused``;
a redirect is returned, and the sender fails the job on its status). For a mail server,
``EndpointGuard.open_server`` opens the socket itself and hands it to the mail client.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Protocol
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult

from homing.errors import EndpointRefused
from homing.providers.endpoints import EndpointPolicy, refuse
from homing.providers.webhook.ssrf import (
    AddressPolicy,
    IPAddress,
    Refusal,
    ends_in_number,
    literal_address,
)

__all__ = [
    "AddressRefused",
    "CheckedResolver",
    "EndpointGuard",
    "Guard",
    "Resolver",
    "SystemResolver",
    "WebhookGuard",
    "checked_addresses",
]


class AddressRefused(Exception):
    """The webhook's host resolves to an address Homing will not connect to.

    The message names the class of address, never the address, so a tenant cannot
    use the error to map an internal network's DNS.
    """

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(f"the host resolves to a {refusal.value} address")
        self.refusal = refusal


class Resolver(Protocol):
    """Resolves a host name to addresses, so the guard checks the very addresses it
    then connects to (tests inject a stub; ``SystemResolver`` asks the system)."""

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


async def checked_addresses(
    host: str, port: int, policy: AddressPolicy, resolver: Resolver, timeout: float | None = None
) -> list[IPAddress]:
    """Resolve ``host`` once; every address must pass ``policy``, or none is used.

    Raises ``AddressRefused`` (naming the class of address, never the address) or
    ``OSError`` when the name does not resolve (in time): never sent, so transient.
    """
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            addresses = await asyncio.wait_for(resolver.resolve(host, port), timeout)
        except TimeoutError:
            raise OSError("name resolution timed out") from None
        except (OSError, UnicodeError):
            raise OSError("the host name does not resolve") from None
    if not addresses:
        raise OSError("the host name does not resolve")
    for address in addresses:
        refusal = policy.refusal(address)
        if refusal is not None:
            raise AddressRefused(refusal)
    return addresses


class Guard(Protocol):
    """What the transport asks of a guard: the URL before a request, the addresses
    of a name before a connection, and what a redirect means."""

    def check_url(self, url: str) -> object:
        """Raise unless a request to ``url`` may be made (IP literals judged here)."""
        ...

    async def checked(self, host: str, port: int) -> list[IPAddress]:
        """The addresses of ``host`` a connection may go to; raise if none may."""
        ...

    def redirected(self, status: int) -> Exception | None:
        """The error a redirect answer is, or None to return it to the caller."""
        ...

    def resolver(self) -> CheckedResolver:
        """aiohttp's resolver under this guard."""
        ...


class EndpointGuard:
    """Provider calls: the endpoint policy with the resolver it checks names through
    (a stub in tests)."""

    def __init__(self, policy: EndpointPolicy, resolver: Resolver | None = None) -> None:
        self.policy = policy
        self._resolver = resolver or SystemResolver()

    def __repr__(self) -> str:
        return f"EndpointGuard({self.policy!r})"

    def check_url(self, url: str) -> object:
        return self.policy.check_url(url)

    async def checked(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        addresses: AddressPolicy | None = None,
    ) -> list[IPAddress]:
        """Resolve ``host`` once; every address must pass ``addresses`` (by default the
        policy's for HTTP to ``host:port``) or none is used. Raises ``EndpointRefused``
        (naming the class of address, never the address) or ``OSError``."""
        policy = addresses or self.policy.http_addresses(host, port)
        try:
            return await checked_addresses(host, port, policy, self._resolver, timeout)
        except AddressRefused as exc:
            reason = exc.refusal.value
            raise refuse(reason, f"the provider's host resolves to a {reason} address") from None
        except OSError:
            raise OSError("the provider's host does not resolve") from None

    def redirected(self, status: int) -> EndpointRefused:
        return refuse("redirect", _REDIRECTED.format(status))

    def resolver(self) -> CheckedResolver:
        """aiohttp's resolver under this guard (``homing.providers.transport``)."""
        return CheckedResolver(self)

    async def open_server(self, host: str, port: int, timeout: float | None) -> socket.socket:
        """A connected socket to a checked address of the mail server ``host:port``."""
        self.policy.check_server(host, port)
        allowed = self.policy.server_addresses(host, port)
        addresses = await self.checked(host, port, timeout, allowed)
        failure: OSError | None = None
        for address in addresses:
            family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                connecting = asyncio.get_running_loop().sock_connect(sock, (str(address), port))
                await asyncio.wait_for(connecting, timeout)
            except OSError as exc:  # TimeoutError included
                sock.close()
                failure = exc
                continue
            return sock
        assert failure is not None
        raise failure


_REDIRECTED = (
    "the provider endpoint answered a redirect (HTTP {}), which Homing does not follow: "
    "base_url must name the API itself"
)


class WebhookGuard:
    """Webhook deliveries: every address must pass ``addresses`` (the webhook policy
    for one scheme), and a redirect is returned, not followed."""

    def __init__(self, addresses: AddressPolicy, resolver: Resolver | None = None) -> None:
        self._addresses = addresses
        self._resolver = resolver or SystemResolver()

    def __repr__(self) -> str:
        return f"WebhookGuard({self._addresses!r})"

    def check_url(self, url: str) -> None:
        """An IP literal (in any spelling) must pass; names are judged at connect time.
        A host ending in a number that spells no address is no name either."""
        host = urlsplit(url).hostname or ""
        address = literal_address(host)
        refusal = Refusal.RESERVED if not host or ends_in_number(host) else None
        if address is not None:
            refusal = self._addresses.refusal(address)
        if refusal is not None:
            raise AddressRefused(refusal)

    async def checked(self, host: str, port: int) -> list[IPAddress]:
        return await checked_addresses(host, port, self._addresses, self._resolver)

    def redirected(self, status: int) -> None:
        return None

    def resolver(self) -> CheckedResolver:
        return CheckedResolver(self)


class CheckedResolver(AbstractResolver):
    """aiohttp's resolver under a guard: only addresses its policy allows."""

    def __init__(self, guard: Guard) -> None:
        self._guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = await self._guard.checked(host, port)
        wanted = {socket.AF_INET: 4, socket.AF_INET6: 6}.get(family)
        return [
            ResolveResult(
                hostname=host,
                host=str(address),
                port=port,
                family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for address in addresses
            if wanted is None or address.version == wanted
        ]

    async def close(self) -> None:
        return None
