"""Composition root: build every service once from the settings, close them once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import httpx

from homing import tracing
from homing.alerts import Alerter
from homing.channels import Channel
from homing.clock import Clock, Heartbeat, SystemClock
from homing.crypto import AddressRefs, MasterKey, Sealer, load_or_create_key_file
from homing.dispatch.batching import BatchingEmailSender
from homing.dispatch.chat_sender import ChatSender
from homing.dispatch.dispatcher import Dispatcher
from homing.dispatch.passes import PassRunner
from homing.dispatch.policy import RetryPolicy
from homing.dispatch.sandbox_guard import SandboxGuard
from homing.dispatch.senders import EmailSender, SmsSender
from homing.dispatch.webhook_delivery import WebhookDelivery
from homing.dispatch.worker import Worker, WorkerConfig, queues_for
from homing.errors import ConfigError
from homing.inbound.intake import Intake
from homing.inbound.receiver import InboundLimits, Receiver
from homing.inbound.secrets import InboundSecrets
from homing.managers.accounts import ProviderAccounts
from homing.managers.admission import Admission
from homing.managers.alert_checks import AlertChecks, Thresholds
from homing.managers.audit import AuditLog
from homing.managers.check_rounds import CheckRounds
from homing.managers.dead_letters import DeadLetters
from homing.managers.delivery_notices import DeliveryNotices
from homing.managers.digests import Digests
from homing.managers.erasure import Erasure, ErasureLimits
from homing.managers.feed import Feed, FeedBounds
from homing.managers.feed_streams import FeedStreams, StreamBounds
from homing.managers.feed_watch import FeedWatch
from homing.managers.flashes import Flashes
from homing.managers.invitations import Invitations
from homing.managers.layouts import Layouts
from homing.managers.notice_checks import NoticeChecks
from homing.managers.notices import Notices
from homing.managers.notifications import Notifications
from homing.managers.optout_links import OptOutLinks
from homing.managers.optouts import LinkLimits, OptOuts
from homing.managers.people import People, SessionRules
from homing.managers.plans import load_plans
from homing.managers.platform_email import PlatformEmail
from homing.managers.provider_presence import ProviderPresence
from homing.managers.recipients import RecipientBounds, Recipients
from homing.managers.reconciler import ReconcilePolicy, Reconciler
from homing.managers.retention import Retention, RetentionPolicy
from homing.managers.scheduling import Scheduler
from homing.managers.sending_domains import Domains
from homing.managers.templates import TemplateBounds, Templates
from homing.managers.tenancy import TenantAdmin
from homing.managers.tenant_settings import TenantSettingsManager
from homing.managers.webhook_channel import WebhookChannel
from homing.managers.webhook_secrets import WebhookSecrets
from homing.models import Queue, new_id
from homing.providers.endpoints import EndpointPolicy
from homing.providers.guard import EndpointGuard, Resolver, SystemResolver
from homing.providers.transport import SocketFactory, build_client
from homing.providers.webhook.clients import WebhookClients, guarded_client
from homing.providers.webhook.sender import WebhookSender
from homing.providers.webhook.ssrf import UrlPolicy, parse_networks
from homing.ratelimit import RateLimiter, memory_limiter, redis_limiter
from homing.rendering.pool import RenderPool, pool_from
from homing.settings import Settings, parse_prices
from homing.store.alert_signals import AlertSignalStore
from homing.store.audit import AuditStore
from homing.store.batches import BatchStore
from homing.store.categories import CategoryStore
from homing.store.database import Database
from homing.store.dead_letters import DeadLetterStore
from homing.store.delivery import DeliveryStore
from homing.store.digests import DigestLimits, DigestStore
from homing.store.domain_rows import DomainStore
from homing.store.erasure import ErasureStore
from homing.store.feed import FeedStore
from homing.store.feed_access import FeedAccessStore
from homing.store.flashes import FlashStore
from homing.store.inbound import InboundStore
from homing.store.inbound_secrets import InboundSecretStore
from homing.store.invitations import InvitationStore
from homing.store.jobs import JobStore
from homing.store.keys import ApiKeyStore
from homing.store.layouts import LayoutStore
from homing.store.ledger import LedgerStore
from homing.store.members import MemberStore
from homing.store.migrate import migrate
from homing.store.notices import NoticeStore
from homing.store.notification_watch import NotificationWatch
from homing.store.notifications import NotificationStore
from homing.store.opt_outs import OptOutStore
from homing.store.people import PeopleStore
from homing.store.preferences import PreferenceStore
from homing.store.provider_health import ProviderHealthStore
from homing.store.providers import ProviderStore
from homing.store.queue import QueueStore
from homing.store.recipients import RecipientStore
from homing.store.retention import RetentionStore
from homing.store.schedules import ScheduleStore
from homing.store.suppressions import SuppressionStore
from homing.store.templates import TemplateStore
from homing.store.tenant_settings import TenantSettingsStore
from homing.store.tenants import TenantStore
from homing.store.usage import UsageStore
from homing.store.volume import VolumeStore
from homing.store.webhooks import WebhookStore
from homing.timing.pacing import Pacer
from homing.timing.wakeups import PostgresWakeups, Wakeup, asyncpg_dsn

log = logging.getLogger("homing")


@dataclass(kw_only=True)
class Services:
    """Every service of one process, built once from the settings by ``build`` and
    closed once by ``aclose``; the entry points and the API take what they need from
    it."""

    settings: Settings
    db: Database
    sealer: Sealer
    clock: Clock
    http: httpx.AsyncClient
    endpoints: EndpointGuard
    tenants: TenantStore
    providers: ProviderStore
    accounts: ProviderAccounts
    jobs: JobStore
    queue: QueueStore
    alerter: Alerter
    webhooks: WebhookChannel
    limiter: RateLimiter
    admission: Admission
    dead_letters: DeadLetters
    dead_letter_store: DeadLetterStore
    keys: ApiKeyStore
    usage: UsageStore
    batches: BatchStore
    tenant_admin: TenantAdmin
    sandbox: SandboxGuard
    # The operator's Slack URL is not a provider endpoint: its own client, unguarded.
    alert_http: httpx.AsyncClient | None = None
    wakeup: Wakeup = field(default_factory=Wakeup)
    pg_wakeups: PostgresWakeups | None = None
    # Beaten by this process's worker loop; /readyz reads it.
    heartbeat: Heartbeat = field(default_factory=Heartbeat)

    @cached_property
    def inbound(self) -> Intake:
        """Inbound provider events: verification, the receiver, the journal."""
        s = self.settings
        journal = InboundStore(self.db, self.clock)
        limits = InboundLimits(
            max_events_per_body=s.inbound.max_events_per_body,
            events_per_minute=s.inbound.events_per_minute,
        )
        receiver = Receiver(
            journal,
            DeliveryStore(self.db, self.clock),
            self.alerter,
            parse_prices(s.billing.prices),
            self.limiter,
            limits,
        )
        secrets = InboundSecrets(
            InboundSecretStore(self.db), self.providers, self.sealer, self.clock
        )
        return Intake(journal=journal, receiver=receiver, secrets=secrets, clock=self.clock)

    @cached_property
    def suppressions(self) -> SuppressionStore:
        """Addresses a tenant must not send to (docs/inbound.md)."""
        return SuppressionStore(self.db, self.clock, AddressRefs.of(self.sealer))

    @cached_property
    def domains(self) -> Domains:
        """Sending domains and their DNS records (docs/inbound.md)."""
        return Domains(
            DomainStore(self.db, most=self.settings.limits.domains),
            self.providers,
            self.sealer,
            self.http,
            self.clock,
            deadline_seconds=self.settings.provider_calls.deadline_seconds,
            notices=self.notices,
            tenants=self.tenants,
        )

    @cached_property
    def tenant_settings(self) -> TenantSettingsManager:
        """The tenant settings resource (``/v1/settings``)."""
        return TenantSettingsManager(
            TenantSettingsStore(self.db, self.clock), self.webhooks.check_url
        )

    @cached_property
    def scheduler(self) -> Scheduler:
        """Rescheduling jobs that wait (docs/scheduling.md)."""
        return Scheduler(ScheduleStore(self.db, self.clock), self.clock)

    @cached_property
    def recipients(self) -> Recipients:
        """Recipients, categories and preferences (docs/recipients.md)."""
        s = self.settings
        bounds = RecipientBounds(
            max_recipients=s.limits.recipients,
            max_categories=s.limits.categories,
            data_max_bytes=s.limits.recipient_data_bytes,
        )
        return Recipients(
            RecipientStore(self.db, self.clock),
            CategoryStore(self.db, self.clock),
            PreferenceStore(self.db, self.clock),
            bounds,
        )

    @cached_property
    def feed(self) -> Feed:
        """Recipients' in-app feeds, their tokens and streams (docs/feed.md)."""
        s = self.settings
        bounds = FeedBounds(
            title_chars=s.feed.title_max_chars,
            body_chars=s.feed.body_max_chars,
            data_bytes=s.feed.data_max_bytes,
            items_per_recipient=s.feed.max_items_per_recipient,
            token_seconds=s.feed.token_max_seconds,
            origins=s.feed.max_origins,
        )
        streams = FeedStreams(
            StreamBounds(
                per_recipient=s.feed.streams_per_recipient,
                per_tenant=s.feed.streams_per_tenant,
                per_process=s.feed.streams_per_process,
            )
        )
        store = FeedStore(self.db, self.clock)
        return Feed(
            store,
            FeedAccessStore(self.db),
            RecipientStore(self.db, self.clock),
            self.sealer,
            self.clock,
            bounds,
            streams,
            FeedWatch(store, streams, s.feed.poll_seconds),
        )

    @cached_property
    def notifications(self) -> Notifications:
        """Multi-channel notifications and their sweep (docs/notifications.md)."""
        return Notifications(
            NotificationStore(
                self.db,
                self.clock,
                self.settings.feed.max_items_per_recipient,
                trace=tracing.current_traceparent,
            ),
            NotificationWatch(self.db),
            self.admission,
            self.feed,
            self.clock,
            self.wakeup.notify,
        )

    @cached_property
    def digests(self) -> Digests:
        """Digests: notifications gathered and sent once a window closes
        (docs/notifications.md, "Digests")."""
        s = self.settings
        limits = DigestLimits(s.digests.max_items, max(1, s.templates.max_data_bytes - 1024))
        return Digests(
            DigestStore(self.db, self.clock, limits),
            self.notifications,
            self.tenants,
            self.clock,
            batch=s.digests.sweep_batch,
            per_tenant=s.digests.sweep_per_tenant,
        )

    @cached_property
    def erasure(self) -> Erasure:
        """Erasing a recipient or an address (docs/recipients.md, "Erasure")."""
        s = self.settings
        limits = ErasureLimits(s.erasure.batch_size, s.erasure.max_batches, s.erasure.per_minute)
        return Erasure(
            ErasureStore(self.db, self.clock, AddressRefs.of(self.sealer)),
            RecipientStore(self.db, self.clock),
            self.audit,
            self.limiter,
            limits,
        )

    @cached_property
    def optouts(self) -> OptOuts:
        """A recipient's links: one-click unsubscribe and the preference page
        (``homing.managers.optouts``)."""
        s = self.settings
        return OptOuts(
            OptOutLinks(self.sealer),
            OptOutStore(self.db, self.clock),
            PreferenceStore(self.db, self.clock),
            CategoryStore(self.db, self.clock),
            self.audit,
            self.limiter,
            self.clock,
            limits=LinkLimits(s.recipient_links.per_minute, s.recipient_links.misses_per_minute),
            public_url=s.public_url,
        )

    @cached_property
    def render_pool(self) -> RenderPool:
        """This process's render workers (docs/templates.md): built on first use, and
        its processes started by the first render; closed by ``aclose``."""
        return pool_from(self.settings)

    @cached_property
    def templates(self) -> Templates:
        """Templates, their versions, and rendering them for a send."""
        s = self.settings
        bounds = TemplateBounds(
            templates=s.templates.max_templates,
            versions=s.templates.max_versions,
            data_bytes=s.templates.max_data_bytes,
            cache_seconds=s.templates.cache_seconds,
            checks_per_minute=s.templates.checks_per_minute,
        )
        return Templates(
            TemplateStore(self.db, self.clock),
            self.render_pool,
            bounds,
            limiter=self.limiter,
            layouts=self.layouts,
            audit=self.audit,
        )

    @cached_property
    def layouts(self) -> Layouts:
        """Email layouts: the tenant's frames its email templates render inside."""
        s = self.settings
        bounds = TemplateBounds(
            templates=s.templates.max_layouts,
            versions=s.templates.max_versions,
            cache_seconds=s.templates.cache_seconds,
            checks_per_minute=s.templates.checks_per_minute,
        )
        store = LayoutStore(self.db, self.clock)
        return Layouts(
            store,
            self.render_pool,
            bounds,
            s.templates.layout_max_source_chars,
            limiter=self.limiter,
            audit=self.audit,
        )

    @cached_property
    def presence(self) -> ProviderPresence:
        """The accept routes' refusal of what no provider could deliver (its cache
        forgets a tenant whose providers change through ``providers``)."""
        return ProviderPresence(self.providers)

    # Notices and platform email (docs/operations.md, "Notices to tenants and platform email").
    @cached_property
    def platform_email(self) -> PlatformEmail:
        """Homing's own mail, sent by the platform tenant's providers."""
        s = self.settings
        return PlatformEmail(
            self.jobs, s.platform_email.tenant_id, s.platform_email.sender, self.wakeup.notify
        )

    @cached_property
    def notices(self) -> Notices:
        """Notices to tenants: recorded once, sent by operational webhook and email."""
        return Notices(
            NoticeStore(self.db, self.clock),
            TenantSettingsStore(self.db, self.clock),
            self.jobs,
            self.platform_email,
            self.sealer,
            self.clock,
            max_per_hour=self.settings.platform_email.notices_per_hour,
            wake=self.wakeup.notify,
        )

    @cached_property
    def signals(self) -> AlertSignalStore:
        """The alerts' signals and their firing state."""
        return AlertSignalStore(self.db, self.settings.alerts.history_rows)

    @cached_property
    def provider_health(self) -> ProviderHealthStore:
        """Provider calls by vendor and account, for the operator's console."""
        return ProviderHealthStore(self.db)

    def alert_checks(self) -> AlertChecks:
        """The conditions on missing signals under the HOMING_ALERT_* thresholds."""
        thresholds = Thresholds.of(self.settings)
        return AlertChecks(self.signals, self.jobs, self.alerter, self.clock, thresholds)

    def check_rounds(self) -> CheckRounds:
        """Alerts on missing signals and the periodic notices (docs/operations.md "Alerts")."""
        checks = NoticeChecks(self.notices, self.tenants, self.admission, self.clock)
        return CheckRounds(
            self.signals,
            self.alert_checks(),
            checks,
            self.clock,
            self.settings.alerts.interval_seconds,
        )

    def email_alerts(self) -> None:
        """Send the operator's alerts to HOMING_ALERT_EMAIL too, by platform email."""
        to = self.settings.alerts.email
        if to is None:
            return

        async def send(subject: str, text: str) -> None:
            await self.platform_email.send(to, subject, text, f"alert:{new_id()}")

        self.alerter.email_with(send, quiet_tenant=self.settings.platform_email.tenant_id)

    @cached_property
    def audit(self) -> AuditLog:
        """The audit log: events made here, written in their change's transaction."""
        return AuditLog(AuditStore(self.db), self.clock)

    @cached_property
    def people(self) -> People:
        """The console's users, memberships and sessions (``homing.managers.people``)."""
        s = self.settings
        rules = SessionRules(
            idle_seconds=s.console.session_idle_minutes * 60,
            max_seconds=s.console.session_hours * 3600,
            failures=s.console.login_failures,
            lockout_seconds=s.console.lockout_minutes * 60,
            per_minute=s.console.logins_per_minute,
        )
        return People(PeopleStore(self.db), self.audit, self.limiter, self.clock, rules)

    @cached_property
    def flashes(self) -> Flashes:
        """What the console's next page says was done (``homing.managers.flashes``)."""
        return Flashes(FlashStore(self.db), self.sealer, self.clock)

    @cached_property
    def invitations(self) -> Invitations:
        """Invitations to tenants, by link (``homing.managers.invitations``)."""
        s = self.settings
        return Invitations(
            InvitationStore(self.db),
            self.people,
            self.audit,
            self.platform_email,
            self.limiter,
            self.clock,
            ttl_hours=s.console.invitation_ttl_hours,
            per_minute=s.console.logins_per_minute,
            public_url=s.public_url,
        )

    @cached_property
    def members(self) -> MemberStore:
        """A tenant's members: listed, a role changed, removed."""
        return MemberStore(self.db)

    @cached_property
    def volume(self) -> VolumeStore:
        """Jobs by day, for the console's charts."""
        return VolumeStore(self.db)

    def retention(self, progress: Callable[[str], None] | None = None) -> Retention:
        """The purge under HOMING_RETENTION_DAYS, HOMING_PAYLOAD_RETENTION_DAYS,
        HOMING_AUDIT_RETENTION_DAYS and HOMING_INVITATION_RETENTION_DAYS."""
        s = self.settings
        policy = RetentionPolicy(
            days=s.retention.days,
            payload_days=s.retention.payload_days,
            batch_size=s.retention.batch_size,
            audit_days=s.retention.audit_days,
            invitation_days=s.retention.invitation_days,
        )
        audit = AuditStore(self.db)
        return Retention(RetentionStore(self.db), self.clock, policy, progress, audit)

    def reconciler(self, progress: Callable[[str], None] | None = None) -> Reconciler:
        """The ledger check under HOMING_RECONCILE_STALE_LEASE_SECONDS (docs/reliability.md)."""
        s = self.settings
        policy = ReconcilePolicy(
            stale_lease_seconds=s.reconcile.stale_lease_seconds,
            batch_size=s.reconcile.batch_size,
        )
        return Reconciler(
            LedgerStore(self.db, self.clock), self.clock, self.alerter, policy, progress
        )

    def retry_policy(self) -> RetryPolicy:
        s = self.settings
        return RetryPolicy(
            max_passes=s.retries.max_attempts,
            base_seconds=s.retries.base_seconds,
            max_seconds=s.retries.max_seconds,
            max_deferral_seconds=s.retries.max_deferral_seconds,
            max_provider_calls=s.retries.max_provider_calls,
        )

    def platform_retry_policy(self) -> RetryPolicy:
        """Homing's own email (CRITICAL): same passes, a much shorter backoff."""
        s = self.settings
        return RetryPolicy(
            max_passes=s.retries.max_attempts,
            base_seconds=s.retries.platform_base_seconds,
            max_seconds=s.retries.platform_max_seconds,
            max_deferral_seconds=s.retries.max_deferral_seconds,
            max_provider_calls=s.retries.max_provider_calls,
        )

    def worker(
        self,
        channels: tuple[Channel, ...] = (Channel.EMAIL, Channel.WEBHOOK, Channel.SMS, Channel.CHAT),
    ) -> Worker:
        """A worker for these channels, sharing this process's pools and wake-ups."""
        s = self.settings
        email: EmailSender = EmailSender(self.sealer, self.http, self.endpoints)
        if s.provider_calls.batch_window_seconds > 0:
            email = BatchingEmailSender(
                self.sealer,
                self.http,
                self.endpoints,
                window_seconds=s.provider_calls.batch_window_seconds,
                deadline_seconds=s.provider_calls.deadline_seconds,
            )
        runner = PassRunner(
            email,
            self.clock,
            {
                Channel.WEBHOOK: webhook_delivery(self.webhooks, self.sealer, self.clock),
                Channel.SMS: SmsSender(self.sealer, self.http, self.endpoints),
                Channel.CHAT: ChatSender(self.sealer, self.http, self.endpoints, self.suppressions),
            },
            guard=self.sandbox,
            pacer=Pacer(self.limiter, self.clock, s.provider_calls.pacing_margin_seconds),
            deadline_seconds=s.provider_calls.deadline_seconds,
            pacing_wait=s.provider_calls.pacing_wait_seconds,
        )
        config = WorkerConfig(
            queues=queues_for(channels),
            concurrency=s.worker.concurrency,
            batch_size=s.worker.claim_batch_size,
            lease_seconds=s.worker.lease_seconds,
            poll_seconds=s.worker.poll_interval_seconds,
            outcome_window=s.worker.outcome_window_seconds,
        )
        dispatcher = Dispatcher(
            runner,
            self.retry_policy(),
            self.clock,
            {Queue.PLATFORM_EMAIL: self.platform_retry_policy()},
        )
        return Worker(
            config,
            self.queue,
            dispatcher,
            self.alerter,
            self.wakeup,
            heartbeat=self.heartbeat,
            watcher=DeliveryNotices(self.notices, self.providers, self.webhooks.store, self.clock),
        )

    async def aclose(self) -> None:
        if "render_pool" in self.__dict__:  # built (and maybe started) by a render
            await self.render_pool.close()
        if self.pg_wakeups is not None:
            await self.pg_wakeups.aclose()
        await self.alerter.aclose()
        await self.limiter.aclose()
        await self.webhooks.aclose()
        await self.http.aclose()
        if self.alert_http is not None:
            await self.alert_http.aclose()
        await self.db.dispose()


def build_webhooks(
    settings: Settings,
    db: Database,
    sealer: Sealer,
    clock: Clock,
    *,
    resolver: Resolver | None = None,
    socket_factory: SocketFactory | None = None,
) -> WebhookChannel:
    """The webhook channel's parts. ``resolver`` and ``socket_factory`` are for tests: a
    stub DNS, and what opens a socket once the guard has passed an address."""
    policy = UrlPolicy(
        require_https=settings.webhooks.require_https,
        allowed_networks=parse_networks(settings.webhooks.allowed_network_list),
    )
    dns = resolver or SystemResolver()

    def client(scheme: str) -> httpx.AsyncClient:
        return guarded_client(
            policy.for_scheme(scheme),
            dns,
            timeout=settings.webhooks.timeout_seconds,
            max_connections=max(100, settings.worker.concurrency),
            socket_factory=socket_factory,
        )

    store = WebhookStore(db, clock, most_gone=settings.limits.gone_endpoints)
    return WebhookChannel(
        store=store,
        secrets=WebhookSecrets(store, sealer, clock, settings.webhooks.rotation_overlap_seconds),
        clients=WebhookClients(https=client("https"), http=client("http")),
        policy=policy,
        max_payload_bytes=settings.webhooks.max_payload_bytes,
        excerpt_bytes=settings.webhooks.response_excerpt_bytes,
    )


def webhook_delivery(webhooks: WebhookChannel, sealer: Sealer, clock: Clock) -> WebhookDelivery:
    """The webhook channel's Sender: the provider call and the state around it."""
    sender = WebhookSender(
        clients=webhooks.clients,
        policy=webhooks.policy,
        clock=clock,
        excerpt_bytes=webhooks.excerpt_bytes,
    )
    return WebhookDelivery(sender, webhooks.store, webhooks.secrets.open_all, sealer)


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
    provider_resolver: Resolver | None = None,
) -> Services:
    """Open the database (migrating it when ``run_migrations``), the HTTP pool and every store.

    The command line migrates only for ``homing migrate``, ``run``, ``api`` and
    ``worker`` (``homing.cli``); its other commands pass ``run_migrations=False``.

    ``provider_resolver`` replaces the system's DNS for provider endpoints (tests)."""
    if settings.is_sqlite:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    sealer = build_sealer(settings)
    clock = clock or SystemClock()
    db = Database(settings.resolved_database_url, pool_size=settings.database.pool_size)
    if run_migrations:
        await migrate(db)
    sandbox = SandboxGuard(settings.provider_calls.sandbox_url_list)
    endpoints = EndpointGuard(
        EndpointPolicy(parse_networks(settings.provider_calls.allowed_network_list), sandbox),
        provider_resolver,
    )
    http = build_client(
        settings.provider_calls.timeout_seconds,
        max_connections=max(100, settings.worker.concurrency),
        guard=endpoints,
    )
    alert_http = build_client(settings.provider_calls.timeout_seconds, max_connections=10)
    providers = ProviderStore(db, most=settings.limits.providers)
    tenants = TenantStore(db)
    limiter = build_limiter(settings, clock)
    refs = AddressRefs.of(sealer)
    # A new job keeps the traceparent of the span accepting it (docs/tracing.md).
    jobs = JobStore(db, clock, refs, trace=tracing.current_traceparent)
    batches = BatchStore(db, clock, refs, trace=tracing.current_traceparent)
    admission = Admission(
        tenants,
        limiter,
        load_plans(),
        jobs,
        batches,
        auth_cache_seconds=settings.admission.auth_cache_seconds,
        tenant_settings=TenantSettingsStore(db, clock),
        clock=clock,
    )
    usage = UsageStore(db)
    wakeup = Wakeup()
    pg_wakeups = None
    if not db.is_sqlite:
        pg_wakeups = PostgresWakeups(asyncpg_dsn(db.url), wakeup)
        await pg_wakeups.start()
    services = Services(
        settings=settings,
        db=db,
        sealer=sealer,
        clock=clock,
        http=http,
        endpoints=endpoints,
        tenants=tenants,
        providers=providers,
        accounts=ProviderAccounts(
            providers,
            sealer,
            http,
            endpoints,
            deadline_seconds=settings.provider_calls.deadline_seconds,
            tenants=tenants,
        ),
        jobs=jobs,
        queue=QueueStore(db, clock, tenant_inflight=settings.worker.tenant_inflight, refs=refs),
        alerter=Alerter(
            alert_http, settings.alerts.slack_webhook_url, settings.alerts.batch_seconds
        ),
        webhooks=build_webhooks(settings, db, sealer, clock),
        limiter=limiter,
        admission=admission,
        dead_letters=DeadLetters(DeadLetterStore(db), jobs, tenants, admission),
        dead_letter_store=DeadLetterStore(db),
        keys=ApiKeyStore(db, most=settings.limits.api_keys),
        usage=usage,
        batches=batches,
        tenant_admin=TenantAdmin(tenants, usage, admission, clock),
        sandbox=sandbox,
        alert_http=alert_http,
        wakeup=wakeup,
        pg_wakeups=pg_wakeups,
    )
    services.email_alerts()
    return services


def build_limiter(settings: Settings, clock: Clock | None = None) -> RateLimiter:
    """Shared windows in Redis when HOMING_REDIS_URL is set, else in process memory;
    both answer on ``clock``."""
    if settings.redis.url is None:
        return memory_limiter(clock=clock)
    return redis_limiter(
        settings.redis.url,
        key_prefix=settings.redis.key_prefix,
        timeout=settings.redis.timeout_seconds,
        on_error=settings.admission.rate_limit_on_redis_error,
        clock=clock,
    )
