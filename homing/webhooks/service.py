"""The webhook channel's parts, built once from the settings (see ``homing.services``)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from homing.clock import Clock
from homing.crypto import Sealer
from homing.dispatch.webhook_delivery import WebhookDelivery
from homing.providers.transport import SocketFactory
from homing.providers.webhook.sender import WebhookSender
from homing.providers.webhook.ssrf import UrlPolicy, parse_networks
from homing.providers.webhook.transport import (
    Resolver,
    SystemResolver,
    WebhookClients,
    guarded_client,
)
from homing.settings import Settings
from homing.store.database import Database
from homing.store.webhooks import WebhookStore
from homing.webhooks.secrets import WebhookSecrets


@dataclass
class Webhooks:
    store: WebhookStore
    secrets: WebhookSecrets
    clients: WebhookClients
    policy: UrlPolicy
    max_payload_bytes: int
    excerpt_bytes: int

    def sender(self, sealer: Sealer, clock: Clock) -> WebhookDelivery:
        """The webhook channel's Sender: the provider call and the state around it."""
        sender = WebhookSender(
            clients=self.clients, policy=self.policy, clock=clock, excerpt_bytes=self.excerpt_bytes
        )
        return WebhookDelivery(sender, self.store, self.secrets.open_all, sealer)

    async def aclose(self) -> None:
        await self.clients.aclose()


def build_webhooks(
    settings: Settings,
    db: Database,
    sealer: Sealer,
    clock: Clock,
    *,
    resolver: Resolver | None = None,
    socket_factory: SocketFactory | None = None,
) -> Webhooks:
    """The webhook parts. ``resolver`` and ``socket_factory`` are for tests: a stub DNS,
    and what opens a socket once the guard has passed an address."""
    policy = UrlPolicy(
        require_https=settings.webhook_require_https,
        allowed_networks=parse_networks(settings.webhook_allowed_network_list),
    )
    resolver = resolver or SystemResolver()

    def client(scheme: str) -> httpx.AsyncClient:
        return guarded_client(
            policy.for_scheme(scheme),
            resolver,
            timeout=settings.webhook_timeout_seconds,
            max_connections=max(100, settings.worker_concurrency),
            socket_factory=socket_factory,
        )

    store = WebhookStore(db, clock)
    return Webhooks(
        store=store,
        secrets=WebhookSecrets(store, sealer, clock, settings.webhook_rotation_overlap_seconds),
        clients=WebhookClients(https=client("https"), http=client("http")),
        policy=policy,
        max_payload_bytes=settings.webhook_max_payload_bytes,
        excerpt_bytes=settings.webhook_response_excerpt_bytes,
    )
