"""Everything inbound and deliverability, built once from the settings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import httpx

from homing.clock import Clock, as_datetime
from homing.crypto import Sealer
from homing.domains import Domains
from homing.inbound.alerts import InboundAlerts
from homing.inbound.billing import parse_prices
from homing.inbound.receiver import Receiver
from homing.inbound.report import ReportRow, summarize
from homing.inbound.secrets import InboundSecrets
from homing.settings import Settings
from homing.store.database import Database
from homing.store.delivery import DeliveryStore
from homing.store.domains import DomainStore
from homing.store.inbound import Entry, InboundStore
from homing.store.inbound_secrets import InboundSecretStore
from homing.store.providers import ProviderStore
from homing.store.suppressions import SuppressionStore


@dataclass
class Inbound:
    journal: InboundStore
    receiver: Receiver
    secrets: InboundSecrets
    suppressions: SuppressionStore
    domains: Domains
    alerts: InboundAlerts
    clock: Clock

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
) -> Inbound:
    journal = InboundStore(db, clock)
    alerts = InboundAlerts(http, settings.alert_slack_webhook_url)
    receiver = Receiver(
        journal, DeliveryStore(db, clock), alerts, parse_prices(settings.billing_prices)
    )
    return Inbound(
        journal=journal,
        receiver=receiver,
        secrets=InboundSecrets(InboundSecretStore(db), providers, sealer, clock),
        suppressions=SuppressionStore(db, clock),
        domains=Domains(
            DomainStore(db),
            providers,
            sealer,
            http,
            clock,
            deadline_seconds=settings.provider_deadline_seconds,
        ),
        alerts=alerts,
        clock=clock,
    )
