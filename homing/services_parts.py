"""The wiring of the inbound and webhook parts, for ``homing.services`` (the one
composition root) to call: each built once from the settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

import httpx

from homing.alerts import Alerter
from homing.clock import Clock, as_datetime
from homing.crypto import AddressRefs, Sealer
from homing.dispatch.webhook_delivery import WebhookDelivery
from homing.inbound.receiver import InboundLimits, Receiver
from homing.inbound.report import ReportRow, summarize
from homing.inbound.secrets import InboundSecrets, InboundTarget
from homing.inbound.verify import Nonce
from homing.managers.notices import Notices
from homing.managers.sending_domains import Domains
from homing.managers.webhook_secrets import WebhookSecrets
from homing.providers.transport import SocketFactory
from homing.providers.webhook.clients import (
    Resolver,
    SystemResolver,
    WebhookClients,
    guarded_client,
)
from homing.providers.webhook.sender import WebhookSender
from homing.providers.webhook.ssrf import UrlPolicy, check_url, normalise_url, parse_networks
from homing.ratelimit import RateLimiter
from homing.settings import Settings, parse_prices
from homing.store.database import Database
from homing.store.delivery import DeliveryStore
from homing.store.domain_rows import DomainStore
from homing.store.inbound import Entry, InboundStore
from homing.store.inbound_secrets import InboundSecretStore
from homing.store.providers import ProviderStore
from homing.store.suppressions import SuppressionStore
from homing.store.tenants import TenantStore
from homing.store.webhooks import WebhookStore


@dataclass
class Inbound:
    """Inbound provider events, suppressions and sending domains: the parts the
    inbound routes and the worker share, with the checks that need several of them."""

    journal: InboundStore
    receiver: Receiver
    secrets: InboundSecrets
    suppressions: SuppressionStore
    domains: Domains
    alerts: Alerter
    clock: Clock

    def verify(
        self, target: InboundTarget, body: bytes, headers: Mapping[str, str], url: str = ""
    ) -> Nonce | None:
        """Raise VerificationFailed unless the request is the account's provider's; the
        signature's one-time value (Mailgun's token), which ``receiver.receive`` claims
        with the body's journal. ``url``: the public URL the request was posted to
        (Twilio signs it)."""
        return target.verify(body, headers, self.clock.now(), url)

    async def history(self, tenant_id: str, job_id: str) -> list[Entry]:
        """The provider events applied to one of the tenant's jobs, oldest first."""
        return await self.journal.for_job(tenant_id, job_id)

    async def report(self, hours: int, tenant_id: str | None = None) -> list[ReportRow]:
        """Per hour and type over the last ``hours`` hours (the current one included)."""
        now = as_datetime(self.clock.now())
        since = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
        return await summarize(self.journal.window(since, tenant_id))

    async def aclose(self) -> None:
        await self.alerts.aclose()


def build_inbound(
    settings: Settings,
    db: Database,
    sealer: Sealer,
    clock: Clock,
    http: httpx.AsyncClient,
    providers: ProviderStore,
    limiter: RateLimiter,
    alerts: Alerter,
    *,
    notices: Notices | None = None,
) -> Inbound:
    """The inbound parts. ``http`` reaches providers (domain APIs); ``alerts`` is the
    process's one alerter (``homing.alerts``)."""
    journal = InboundStore(db, clock)
    limits = InboundLimits(
        max_events_per_body=settings.inbound_max_events_per_body,
        events_per_minute=settings.inbound_events_per_minute,
    )
    receiver = Receiver(
        journal,
        DeliveryStore(db, clock),
        alerts,
        parse_prices(settings.billing_prices),
        limiter,
        limits,
    )
    return Inbound(
        journal=journal,
        receiver=receiver,
        secrets=InboundSecrets(InboundSecretStore(db), providers, sealer, clock),
        suppressions=SuppressionStore(db, clock, AddressRefs.of(sealer)),
        domains=Domains(
            DomainStore(db, most=settings.max_domains_per_tenant),
            providers,
            sealer,
            http,
            clock,
            deadline_seconds=settings.provider_deadline_seconds,
            notices=notices,
            tenants=TenantStore(db),
        ),
        alerts=alerts,
        clock=clock,
    )


@dataclass
class Webhooks:
    """The webhook channel's parts: endpoint store, signing secrets, the guarded
    clients and the URL policy; ``sender`` builds the adapter the worker calls."""

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

    def check_url(self, url: str) -> str:
        """The normalised ``url``, or ``UrlRefused``: what the URL alone shows (the API
        checks it at accept; the guarded clients check the resolved addresses)."""
        return check_url(url, self.policy)

    @staticmethod
    def normalise_url(url: str) -> str:
        """``url`` as Homing stores and compares it."""
        return normalise_url(url)

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

    store = WebhookStore(db, clock, most_gone=settings.max_gone_endpoints_per_tenant)
    return Webhooks(
        store=store,
        secrets=WebhookSecrets(store, sealer, clock, settings.webhook_rotation_overlap_seconds),
        clients=WebhookClients(https=client("https"), http=client("http")),
        policy=policy,
        max_payload_bytes=settings.webhook_max_payload_bytes,
        excerpt_bytes=settings.webhook_response_excerpt_bytes,
    )
