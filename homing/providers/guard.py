"""Resolve once, check every address, connect to the one checked: provider calls.

The webhook stack's guard (``homing.providers.webhook.transport.GuardedBackend``) does
the resolving and checking; this module puts it where the provider clients open
connections. For HTTP it is aiohttp's resolver (``CheckedResolver``): aiohttp connects
to the addresses a resolver returns and still verifies TLS against the host name, so
a host is looked up once per connection and no second lookup can rebind it. IP
literals never reach a resolver; ``EndpointPolicy.check_url``, run before every request,
has judged them already. For SMTP, ``EndpointGuard.open_smtp`` opens the socket itself
and hands it to aiosmtplib, which starts TLS with the host name.
"""

from __future__ import annotations

import asyncio
import socket

import httpcore
from aiohttp.abc import AbstractResolver, ResolveResult

from homing.providers.endpoints import EndpointPolicy, refuse
from homing.providers.webhook.ssrf import AddressPolicy, IPAddress
from homing.providers.webhook.transport import (
    AddressRefused,
    GuardedBackend,
    Resolver,
    SystemResolver,
)

__all__ = ["CheckedResolver", "EndpointGuard"]


class EndpointGuard:
    """The endpoint policy with the resolver it checks names through (a stub in tests)."""

    def __init__(self, policy: EndpointPolicy, resolver: Resolver | None = None) -> None:
        self.policy = policy
        self._resolver = resolver or SystemResolver()

    def __repr__(self) -> str:
        return f"EndpointGuard({self.policy!r})"

    async def checked(
        self, host: str, port: int, addresses: AddressPolicy, timeout: float | None = None
    ) -> list[IPAddress]:
        """Resolve ``host`` once; every address must pass ``addresses`` or none is used.

        Raises ``EndpointRefused`` (naming the class of address, never the address) or
        ``OSError`` when the name does not resolve.
        """
        backend = GuardedBackend(addresses, self._resolver)
        try:
            return await backend.checked_addresses(host, port, timeout)
        except AddressRefused as exc:
            reason = exc.refusal.value
            raise refuse(reason, f"the provider's host resolves to a {reason} address") from None
        except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
            raise OSError(f"the provider's host does not resolve ({type(exc).__name__})") from None

    def resolver(self) -> CheckedResolver:
        """aiohttp's resolver under this guard (``homing.providers.transport``)."""
        return CheckedResolver(self)

    async def open_smtp(self, host: str, port: int, timeout: float | None) -> socket.socket:
        """A connected socket to a checked address of the SMTP server ``host:port``."""
        self.policy.check_smtp(host, port)
        addresses = await self.checked(host, port, self.policy.smtp_addresses(host, port), timeout)
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


class CheckedResolver(AbstractResolver):
    """aiohttp's resolver for provider calls: only addresses the policy allows."""

    def __init__(self, guard: EndpointGuard) -> None:
        self._guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        policy = self._guard.policy.http_addresses(host, port)
        addresses = await self._guard.checked(host, port, policy)
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
