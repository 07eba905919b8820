"""Composition root: build every service once from the settings, close them once."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import httpx

from homing.accounts import ProviderAccounts
from homing.clock import Clock, SystemClock
from homing.crypto import MasterKey, Sealer, load_or_create_key_file
from homing.dispatch.alerts import Alerter
from homing.dispatch.dispatcher import Dispatcher
from homing.dispatch.passes import PassRunner
from homing.dispatch.policy import RetryPolicy
from homing.dispatch.senders import EmailSender
from homing.dispatch.worker import Worker, WorkerConfig, queues_for
from homing.errors import ConfigError
from homing.models import Channel
from homing.queue.wakeup import Wakeup
from homing.settings import Settings
from homing.store.database import Database
from homing.store.jobs import JobStore
from homing.store.migrate import migrate
from homing.store.providers import ProviderStore
from homing.store.queue import QueueStore
from homing.store.tenants import TenantStore

log = logging.getLogger("homing")


@dataclass
class Services:
    settings: Settings
    db: Database
    sealer: Sealer
    clock: Clock
    http: httpx.AsyncClient
    tenants: TenantStore
    providers: ProviderStore
    accounts: ProviderAccounts
    jobs: JobStore
    queue: QueueStore
    alerter: Alerter
    wakeup: Wakeup = field(default_factory=Wakeup)

    def retry_policy(self) -> RetryPolicy:
        s = self.settings
        return RetryPolicy(
            max_attempts=s.max_attempts,
            base_seconds=s.retry_base_seconds,
            max_seconds=s.retry_max_seconds,
            max_deferral_seconds=s.max_deferral_seconds,
        )

    def worker(self, channels: tuple[Channel, ...] = (Channel.EMAIL,)) -> Worker:
        """A worker for these channels, sharing this process's pools and wake-ups."""
        s = self.settings
        runner = PassRunner(EmailSender(self.sealer, self.http), self.clock)
        config = WorkerConfig(
            queues=queues_for(channels),
            concurrency=s.worker_concurrency,
            batch_size=s.claim_batch_size,
            lease_seconds=s.lease_seconds,
            poll_seconds=s.poll_interval_seconds,
        )
        dispatcher = Dispatcher(runner, self.retry_policy(), self.clock)
        return Worker(config, self.queue, self.providers, dispatcher, self.alerter, self.wakeup)

    async def aclose(self) -> None:
        await self.alerter.aclose()
        await self.http.aclose()
        await self.db.dispose()


def build_sealer(settings: Settings) -> Sealer:
    """The master key from HOMING_SECRET_KEY, or the embedded key file on SQLite."""
    if settings.secret_key is not None:
        encoded = settings.secret_key.get_secret_value()
    elif settings.is_sqlite:
        encoded, created = load_or_create_key_file(settings.data_dir)
        if created:
            log.warning(
                "created a new master key; back it up: without it stored secrets are lost",
                extra={"path": str(settings.data_dir / "secret.key")},
            )
    else:
        raise ConfigError("HOMING_SECRET_KEY is required when the database is PostgreSQL")
    previous = []
    if settings.previous_secret_keys is not None:
        raw = settings.previous_secret_keys.get_secret_value()
        previous = [MasterKey.from_b64(k) for k in raw.split(",") if k.strip()]
    return Sealer(MasterKey.from_b64(encoded), previous)


async def build(
    settings: Settings,
    *,
    clock: Clock | None = None,
    run_migrations: bool = True,
) -> Services:
    """Open the database (migrating it), the HTTP pool and every store."""
    if settings.is_sqlite:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    sealer = build_sealer(settings)
    clock = clock or SystemClock()
    db = Database(settings.resolved_database_url)
    if run_migrations:
        await migrate(db)
    http = httpx.AsyncClient(
        timeout=httpx.Timeout(settings.provider_timeout_seconds, connect=5.0),
        limits=httpx.Limits(max_connections=max(100, settings.worker_concurrency)),
        follow_redirects=False,
    )
    providers = ProviderStore(db)
    return Services(
        settings=settings,
        db=db,
        sealer=sealer,
        clock=clock,
        http=http,
        tenants=TenantStore(db),
        providers=providers,
        accounts=ProviderAccounts(providers, sealer, http),
        jobs=JobStore(db, clock),
        queue=QueueStore(db, clock),
        alerter=Alerter(http, settings.alert_slack_webhook_url, settings.alert_batch_seconds),
    )
