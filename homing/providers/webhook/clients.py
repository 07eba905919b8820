"""HTTP for webhooks: the one outbound stack under the webhook guard.

Deliveries go through the same aiohttp transport as provider calls
(``homing.providers.transport``): no redirects followed, no proxies or ``.netrc`` from
the environment, no cookies, per-phase timeouts, bodies capped at ``MAX_RESPONSE_BYTES``.
What differs is the policy: a ``WebhookGuard`` (``homing.providers.guard``) resolves
each host once per connection, refuses the connection unless every address passes the
webhook ``AddressPolicy`` for the URL's scheme, and connects to the address checked;
TLS still verifies the certificate against the URL's host name. Connections are pooled
per origin, so a reused connection is one that passed.
"""

from __future__ import annotations

import httpx

from homing import __version__
from homing.providers.guard import AddressRefused, Resolver, SystemResolver, WebhookGuard
from homing.providers.transport import MAX_RESPONSE_BYTES, SocketFactory, build_client
from homing.providers.webhook.ssrf import AddressPolicy

__all__ = [
    "MAX_RESPONSE_BYTES",
    "AddressRefused",
    "Resolver",
    "SystemResolver",
    "WebhookClients",
    "guarded_client",
    "read_capped",
]

USER_AGENT = f"homing-webhooks/{__version__}"


async def read_capped(response: httpx.Response, cap: int = MAX_RESPONSE_BYTES) -> bytes:
    """At most ``cap`` bytes of a response's body (never more than
    ``MAX_RESPONSE_BYTES``, the most the transport reads). A body that broke off is
    kept as far as it came: the status already says what happened."""
    cap = max(0, min(cap, MAX_RESPONSE_BYTES))
    try:
        body = await response.aread()
    except httpx.HTTPError:
        return b""
    return body[:cap]


def guarded_client(
    policy: AddressPolicy,
    resolver: Resolver,
    *,
    timeout: float,
    max_connections: int = 100,
    socket_factory: SocketFactory | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` for webhook deliveries under ``policy``, on the one
    outbound stack. ``socket_factory`` is for tests (see ``SocketFactory``)."""
    return build_client(
        timeout,
        max_connections=max_connections,
        guard=WebhookGuard(policy, resolver),
        connect_timeout=min(timeout, 10.0),
        socket_factory=socket_factory,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
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
