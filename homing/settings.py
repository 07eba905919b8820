"""Settings from ``HOMING_*`` environment variables, grouped by concern.

``Settings`` holds the few settings of the whole process (where the data lives, the
keys, the public URL) and one frozen group per concern, each a ``…Settings`` class
(``settings.retries``, ``settings.worker``, ``settings.templates`` …), as httpx groups
``Timeout`` and ``Limits``. A setting's environment name is unchanged and flat: it is
``HOMING_`` and the field's alias, by default the group's prefix and the field's name
(``HOMING_TEMPLATE_MAX_SOURCE_CHARS`` is ``settings.templates.max_source_chars``).
Every default is written once, here; a component that takes a setting defaults to its
group's default rather than repeat it. ``settings.changed(max_attempts=5)`` takes the
flat names and validates them (so does ``Settings(max_attempts=5)``, though a type
checker knows only the groups' names there).

Built once by the entry point (``Settings()``) and passed down; importing this module
reads no environment. docs/settings.md documents each setting (tests/unit/test_docs.py
checks it against ``env_fields()``).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from homing.addresses import canonical
from homing.hosts import AllowedHosts, parse_allowed_hosts
from homing.models import Plan

ENV_PREFIX = "HOMING_"


def _prefixed(prefix: str) -> Callable[[str], str]:
    return lambda name: prefix + name


def _group(prefix: str = "") -> ConfigDict:
    """A group's config: frozen, no unknown field, each field's alias (its environment
    name without ``HOMING_``) the prefix and its name unless the field names another."""
    return ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=True,
        alias_generator=_prefixed(prefix),
    )


def _blank_is_none(value: object) -> object:
    return None if value == "" else value


# An optional setting set to "" in the environment is unset.
_BLANK_IS_NONE = BeforeValidator(_blank_is_none)


def _cidrs(value: str) -> list[str]:
    """A comma-separated list of CIDRs (ValueError for one that is not)."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    for item in items:
        ipaddress.ip_network(item, strict=False)
    return items


class DatabaseSettings(BaseModel):
    """The database: ``HOMING_DATABASE_URL`` unset is SQLite in the data directory."""

    model_config = _group("database_")

    url: Annotated[str | None, _BLANK_IS_NONE] = None
    # PostgreSQL connections per process (a fixed pool: no connection is opened per burst).
    pool_size: int = Field(default=10, ge=1, le=1000)


class RedisSettings(BaseModel):
    """Shared rate-limit state across processes (never the source of truth)."""

    model_config = _group("redis_")

    url: Annotated[str | None, _BLANK_IS_NONE] = None
    key_prefix: str = Field(default="homing", min_length=1, max_length=100)
    timeout_seconds: float = Field(default=0.5, gt=0, le=30)


class ServerSettings(BaseModel):
    """The HTTP server: where it listens, its processes, what a request may carry."""

    model_config = _group()

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    # PostgreSQL with Redis: processes serving the API on one port (None: one per core for
    # homing api, one per two cores for homing run).
    api_processes: int | None = Field(default=None, ge=1, le=64)
    # homing run on PostgreSQL: worker child processes (None: one per two cores).
    run_worker_processes: int | None = Field(default=None, ge=0, le=64)
    max_body_bytes: int = Field(default=1_048_576, ge=1024)


class AdmissionSettings(BaseModel):
    """Admission control (docs/architecture.md "Admission")."""

    model_config = _group()

    rate_limit_on_redis_error: Literal["open", "closed"] = "open"
    # Revocation and suspension must reach every API process within one second.
    auth_cache_seconds: float = Field(default=0.5, ge=0, le=0.9)


class RetrySettings(BaseModel):
    """How a job is retried, and what one job may cost (docs/sending.md, "Delivery
    rules")."""

    model_config = _group()

    max_attempts: int = Field(default=3, ge=1, le=50)
    base_seconds: float = Field(default=5.0, gt=0, alias="retry_base_seconds")
    max_seconds: float = Field(default=3600.0, gt=0, alias="retry_max_seconds")
    platform_base_seconds: float = Field(default=1.0, gt=0, alias="platform_retry_base_seconds")
    platform_max_seconds: float = Field(default=60.0, gt=0, alias="platform_retry_max_seconds")
    max_deferral_seconds: float = Field(default=86400.0, gt=0)
    max_provider_calls: int = Field(default=50, ge=1, le=10_000, alias="max_provider_calls_per_job")


class WorkerSettings(BaseModel):
    """A worker process: its slots, its claims, its leases and its sweeps."""

    model_config = _group()

    concurrency: int = Field(default=512, ge=1, le=10000, alias="worker_concurrency")
    claim_batch_size: int = Field(default=50, ge=1, le=1000)
    # Outcomes of deliveries that finish within this long are written in one transaction
    # (or as soon as claim_batch_size of them wait, or nothing is in flight).
    outcome_window_seconds: float = Field(default=0.02, ge=0, le=10)
    tenant_inflight: int = Field(default=256, ge=1, le=100_000)
    lease_seconds: float = Field(default=60.0, gt=0)
    poll_interval_seconds: float = Field(default=1.0, gt=0)
    # /readyz: a worker loop of this process silent for longer than this is stalled.
    ready_stall_seconds: float = Field(
        default=30.0, ge=1, le=3600, alias="ready_worker_stall_seconds"
    )
    # Multi-channel notifications (docs/notifications.md): how often each worker
    # process looks for steps whose outcome is known or whose window ran out.
    notification_sweep_seconds: float = Field(
        default=1.0,
        ge=0.1,
        le=3600,
        description="seconds between two sweeps of multi-channel notifications' steps",
    )


class ProviderCallSettings(BaseModel):
    """Calls to providers: timeouts, where they may go, pacing and batching."""

    model_config = _group("provider_")

    timeout_seconds: float = Field(default=10.0, gt=0)
    # One total deadline per provider or webhook call (connect, send, read the answer),
    # credential checks and domain calls included; the timeouts above bound each phase.
    deadline_seconds: float = Field(default=30.0, gt=0, le=300)
    # Provider endpoints (docs/architecture.md "Provider endpoints"): ranges a provider's
    # base_url or SMTP host may reach besides the vendors' official API hosts.
    allowed_networks: str = Field(default="", max_length=4096)
    sandbox_urls: str = Field(default="", alias="sandbox_urls")
    # Pacing (docs/channels.md, "Pacing presets"): how long a job waits in the worker for
    # a full rate rule to free a slot before it is deferred, and the seconds added to
    # every rule's window so that jitter on the way never makes a vendor count one too many.
    pacing_wait_seconds: float = Field(
        default=10.0,
        ge=0,
        le=60,
        alias="pacing_wait_seconds",
        description="Seconds a job may wait in the worker for a pacing slot before it "
        "is deferred (no attempt is spent either way).",
    )
    pacing_margin_seconds: float = Field(
        default=0.5,
        ge=0,
        le=5,
        alias="pacing_margin_seconds",
        description="Seconds added to every pacing window, against network jitter.",
    )
    # Provider batch APIs (docs/architecture.md, "Batch sends"): how long an email
    # waits for others of the same provider account to leave with it in one batch
    # call (Resend, Postmark, SendGrid, Mailgun). 0 sends every email alone.
    batch_window_seconds: float = Field(
        default=0.0,
        ge=0,
        le=1,
        alias="batch_window_seconds",
        description="Seconds an email waits for others to share a vendor batch call "
        "(0: no batching).",
    )

    @field_validator("allowed_networks")
    @classmethod
    def _cidr_list(cls, value: str) -> str:
        _cidrs(value)
        return value

    @property
    def allowed_network_list(self) -> list[str]:
        """HOMING_PROVIDER_ALLOWED_NETWORKS, comma-separated CIDRs."""
        return _cidrs(self.allowed_networks)

    @property
    def sandbox_url_list(self) -> list[str]:
        """HOMING_SANDBOX_URLS, comma-separated: where test-key jobs may be sent."""
        return [u.strip() for u in self.sandbox_urls.split(",") if u.strip()]


class LimitSettings(BaseModel):
    """What one tenant may hold (docs/settings.md, "Configuration bounds";
    docs/recipients.md, "Bounds")."""

    model_config = _group()

    recipients: int = Field(
        default=1_000_000, ge=1, le=100_000_000, alias="max_recipients_per_tenant"
    )
    categories: int = Field(default=100, ge=1, le=1000, alias="max_categories_per_tenant")
    recipient_data_bytes: int = Field(
        default=16_384, ge=2, le=262_144, alias="recipient_data_max_bytes"
    )
    api_keys: int = Field(default=100, ge=1, le=1000, alias="max_api_keys_per_tenant")
    domains: int = Field(default=50, ge=1, le=1000, alias="max_domains_per_tenant")
    providers: int = Field(default=50, ge=1, le=1000, alias="max_providers_per_tenant")
    # Gone marks (410) a tenant keeps, the newest.
    gone_endpoints: int = Field(default=200, ge=1, le=1000, alias="max_gone_endpoints_per_tenant")


class ErasureSettings(BaseModel):
    """Erasure (docs/recipients.md, "Erasure"): rows per batch (one short transaction
    each), batches per call, and calls per tenant a minute."""

    model_config = _group("erasure_")

    batch_size: int = Field(default=500, ge=1, le=10_000)
    max_batches: int = Field(default=100, ge=1, le=10_000)
    per_minute: int = Field(default=30, ge=1, le=10_000, alias="erasures_per_minute")


class TemplateSettings(BaseModel):
    """Templates and layouts (docs/templates.md, "Bounds")."""

    model_config = _group("template_")

    max_source_chars: int = Field(default=65_536, ge=1024, le=1_048_576)
    max_rendered_chars: int = Field(default=262_144, ge=1024, le=4_194_304)
    render_timeout_seconds: float = Field(default=1.0, gt=0, le=30)
    render_workers: int = Field(default=2, ge=1, le=64)
    # The most render workers one tenant holds at once (0: all but one).
    workers_per_tenant: int = Field(default=0, ge=0, le=64)
    # Previews and version writes (templates and layouts) a tenant makes a minute.
    checks_per_minute: int = Field(default=60, ge=1, le=100_000)
    worker_memory_mb: int = Field(default=512, ge=128, le=65_536)
    max_templates: int = Field(default=500, ge=1, le=100_000)
    max_versions: int = Field(default=200, ge=1, le=10_000)
    max_data_bytes: int = Field(default=65_536, ge=1024, le=1_048_576)
    cache_seconds: float = Field(default=2.0, ge=0, le=60)
    max_layouts: int = Field(default=20, ge=1, le=1000, alias="layout_max_layouts")
    layout_max_source_chars: int = Field(
        default=65_536, ge=1024, le=1_048_576, alias="layout_max_source_chars"
    )


class FeedSettings(BaseModel):
    """The in-app feed (docs/feed.md, "Bounds")."""

    model_config = _group("feed_")

    title_max_chars: int = Field(default=200, ge=1, le=2000)
    body_max_chars: int = Field(default=2000, ge=1, le=20_000)
    data_max_bytes: int = Field(default=4096, ge=2, le=65_536)
    max_items_per_recipient: int = Field(default=500, ge=10, le=100_000)
    token_max_seconds: int = Field(default=2_592_000, ge=60, le=2_592_000)
    max_origins: int = Field(default=20, ge=1, le=100)
    streams_per_recipient: int = Field(default=5, ge=1, le=100)
    streams_per_tenant: int = Field(default=100, ge=1, le=100_000)
    streams_per_process: int = Field(default=1000, ge=1, le=100_000)
    poll_seconds: float = Field(default=1.0, gt=0, le=1.0)
    heartbeat_seconds: float = Field(default=15.0, gt=0, le=300)
    stream_buffer: int = Field(default=64, ge=2, le=10_000)


class WebhookSettings(BaseModel):
    """Outbound webhooks (docs/webhooks.md "Webhooks")."""

    model_config = _group("webhook_")

    require_https: bool = True
    allowed_networks: str = ""
    rotation_overlap_seconds: float = Field(default=86400.0, ge=0)
    max_payload_bytes: int = Field(default=262_144, ge=1)
    timeout_seconds: float = Field(default=15.0, gt=0)
    response_excerpt_bytes: int = Field(default=1024, ge=0, le=65_536)

    @field_validator("allowed_networks")
    @classmethod
    def _cidr_list(cls, value: str) -> str:
        _cidrs(value)
        return value

    @property
    def allowed_network_list(self) -> list[str]:
        """HOMING_WEBHOOK_ALLOWED_NETWORKS, comma-separated CIDRs."""
        return _cidrs(self.allowed_networks)


class InboundSettings(BaseModel):
    """Inbound provider events (docs/inbound.md "Inbound events, suppression and
    domains")."""

    model_config = _group("inbound_")

    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    # A SendGrid batch (768 KB) of its smallest real events is about 2,500 of them.
    max_events_per_body: int = Field(default=5_000, ge=1, le=100_000)
    # Per provider account, over a moving minute (memory or Redis, as admission).
    events_per_minute: int = Field(default=20_000, ge=1, le=1_000_000)


class RetentionSettings(BaseModel):
    """Retention (docs/operations.md "Retention"): finished jobs, with their attempts,
    dead letters and inbound events, are deleted after ``days`` (0: kept for ever); their
    bodies and sealed headers are scrubbed after ``payload_days`` (0: never)."""

    model_config = _group("retention_")

    days: int = Field(default=30, ge=0, le=36_500)
    payload_days: int = Field(default=7, ge=0, le=36_500, alias="payload_retention_days")
    interval_seconds: float = Field(default=300.0, ge=1, le=86_400)
    batch_size: int = Field(default=500, ge=1, le=10_000)
    # The audit log (docs/operations.md "Audit log"), separately from job retention,
    # which is much shorter.
    audit_days: int = Field(
        default=400,
        ge=0,
        le=36_500,
        alias="audit_retention_days",
        description="Days an audit event is kept (0: for ever); independent of "
        "HOMING_RETENTION_DAYS.",
    )
    # Ended invitations (accepted, revoked or expired) go this many days after they
    # ended, with the retention purge; pending ones always stay.
    invitation_days: int = Field(default=30, ge=1, le=3650, alias="invitation_retention_days")


class PlatformEmailSettings(BaseModel):
    """Notices to tenants and Homing's own mail (docs/operations.md, "Notices to tenants
    and platform email")."""

    model_config = _group("platform_")

    tenant_id: Annotated[str | None, _BLANK_IS_NONE] = Field(
        default=None,
        max_length=36,
        description="The tenant whose email providers send Homing's own mail (notices, "
        "operator alerts) on the platform-email queue; unset: no platform email.",
    )
    sender: Annotated[str | None, _BLANK_IS_NONE] = Field(
        alias="platform_email_from",
        default=None,
        max_length=400,
        description="The sender of Homing's own mail, e.g. 'Homing <ops@example.com>'.",
    )
    notices_per_hour: int = Field(
        default=20,
        ge=1,
        le=10_000,
        alias="notice_max_per_hour",
        description="Notices sent to one tenant in an hour at most; more are recorded, "
        "held, and counted in the next dead-letter digest.",
    )

    @field_validator("sender")
    @classmethod
    def _mailbox(cls, value: str | None) -> str | None:
        return None if value is None else canonical(value)


class AlertSettings(BaseModel):
    """Alerts on missing signals (docs/operations.md, "Alerts"). Every threshold has a
    default."""

    model_config = _group("alert_")

    slack_webhook_url: Annotated[str | None, _BLANK_IS_NONE] = None
    batch_seconds: float = Field(default=10.0, ge=0)
    email: Annotated[str | None, _BLANK_IS_NONE] = Field(
        default=None,
        max_length=400,
        description="The operator's address: alerts go there too, by platform email.",
    )
    interval_seconds: float = Field(
        default=60.0, ge=1, le=3600, description="How often one worker evaluates the alerts."
    )
    queue_stuck_seconds: float = Field(
        default=600.0,
        ge=1,
        description="Alert when a queue's oldest claimable entry is older than this.",
    )
    worker_silent_seconds: float = Field(
        default=300.0,
        ge=1,
        description="Alert when no job finished for this long while entries are claimable.",
    )
    window_seconds: float = Field(
        default=900.0,
        ge=10,
        le=86_400,
        description="The window the ratio, lag and spike alerts look back over.",
    )
    provider_failure_ratio: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Alert when this share of a provider's calls in the window failed.",
    )
    provider_min_calls: int = Field(
        default=20, ge=1, description="A provider's failure ratio counts from this many calls."
    )
    inbound_lag_p95_seconds: float = Field(
        default=600.0,
        gt=0,
        description="Alert when inbound events' p95 of received - occurred exceeds this.",
    )
    inbound_quarantine_ratio: float = Field(
        default=0.05,
        gt=0,
        le=1,
        description="Alert when this share of the window's inbound events is quarantined.",
    )
    dead_letter_spike: int = Field(
        default=50, ge=1, description="Alert when this many jobs dead-lettered in the window."
    )
    history_rows: int = Field(
        default=1000,
        ge=10,
        le=100_000,
        description="Fired alerts the operator's console keeps (the oldest are dropped).",
    )

    @field_validator("email")
    @classmethod
    def _mailbox(cls, value: str | None) -> str | None:
        return None if value is None else canonical(value)


class ReconcileSettings(BaseModel):
    """The reconciler (docs/operations.md "The ledger invariant"): a pass every interval
    in worker processes (one process at a time) checks that every job is terminal with
    no queue entry or live with one; a lease that ran out longer ago than
    ``stale_lease_seconds`` on a PROCESSING job is released."""

    model_config = _group("reconcile_")

    interval_seconds: float = Field(
        default=300.0, ge=1, le=86_400, description="seconds between two reconciler passes"
    )
    stale_lease_seconds: float = Field(
        default=300.0,
        ge=1,
        le=86_400,
        description="a lease expired longer ago than this on a PROCESSING job is released",
    )
    batch_size: int = Field(
        default=1000, ge=1, le=10_000, description="jobs or entries one reconciler batch reads"
    )


class DigestSettings(BaseModel):
    """Digests (docs/notifications.md, "Digests"): items a window holds before the next
    opens, and how many digests one sweep sends, in all and of one tenant."""

    model_config = _group("digest_")

    max_items: int = Field(
        default=1000, ge=1, le=10_000, description="notifications one digest window holds"
    )
    sweep_batch: int = Field(
        default=100, ge=1, le=10_000, description="digests one sweep of a worker sends at most"
    )
    sweep_per_tenant: int = Field(
        default=10, ge=1, le=10_000, description="digests of one tenant one sweep sends at most"
    )


class ConsoleSettings(BaseModel):
    """The console (docs/console.md "Console"): sessions, sign-in lockout, invitations."""

    model_config = _group("console_")

    # A signed-in session ends after this many idle minutes, and after this many hours
    # whatever the activity.
    session_idle_minutes: int = Field(default=30, ge=1, le=10_080)
    session_hours: int = Field(default=12, ge=1, le=720)
    # Failed sign-ins to one email within the lockout window lock it for the window;
    # one client address may try this many sign-ins a minute, whoever it names.
    login_failures: int = Field(default=5, ge=1, le=100)
    lockout_minutes: int = Field(default=15, ge=1, le=1440)
    logins_per_minute: int = Field(default=30, ge=1, le=10_000)
    # An invitation to a tenant can be accepted for this many hours.
    invitation_ttl_hours: int = Field(default=72, ge=1, le=720, alias="invitation_ttl_hours")


class RecipientLinkSettings(BaseModel):
    """A recipient's links (docs/recipients.md "Links"): those that open count against
    their tenant's window, those that do not against the client address's."""

    model_config = _group()

    per_minute: int = Field(default=600, ge=1, le=100_000, alias="recipient_links_per_minute")
    misses_per_minute: int = Field(
        default=30, ge=1, le=10_000, alias="recipient_link_misses_per_minute"
    )


class BillingSettings(BaseModel):
    """Billing webhooks and prices (docs/operations.md)."""

    model_config = _group()

    paystack_secret_key: Annotated[SecretStr | None, _BLANK_IS_NONE] = None
    polar_webhook_secret: Annotated[SecretStr | None, _BLANK_IS_NONE] = None
    prices: str = Field(default="", alias="billing_prices")

    @field_validator("prices")
    @classmethod
    def _price_list(cls, value: str) -> str:
        parse_prices(value)
        return value


class MetricsSettings(BaseModel):
    """Prometheus metrics (docs/architecture.md "Metrics")."""

    model_config = _group("metrics_")

    port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="A worker-only process (`homing worker`) serves /metrics and /readyz "
        "on this port; unset: it serves no HTTP. 0 picks a free port.",
    )
    host: str = Field(
        default="127.0.0.1",
        min_length=1,
        max_length=255,
        description="The address a worker-only process's metrics server binds.",
    )
    token: Annotated[SecretStr | None, _BLANK_IS_NONE] = Field(
        default=None,
        description="When set, /metrics (API and worker) answers only "
        "'Authorization: Bearer <token>'; 401 otherwise.",
    )


class _FlatEnvironment(PydanticBaseSettingsSource):
    """The ``HOMING_*`` variables by their flat names (case-insensitive), for
    ``Settings``' before-validator to place in their groups."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        raise NotImplementedError  # __call__ reads every variable at once

    def __call__(self) -> dict[str, Any]:
        environ = {key.upper(): value for key, value in os.environ.items()}
        found: dict[str, Any] = {}
        for flat in _BY_FLAT:
            variable = ENV_PREFIX + flat.upper()
            if variable in environ:
                found[flat] = environ[variable]
        return found


class Settings(BaseSettings):
    """Every setting Homing reads, grouped; docs/settings.md documents each one."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=False)

    # The groups, and the attribute each is at (the class names the concern).
    GROUPS: ClassVar[dict[str, type[BaseModel]]] = {}

    data_dir: Path = Path("homing-data")
    secret_key: SecretStr | None = None
    previous_secret_keys: SecretStr | None = None
    admin_token: Annotated[SecretStr | None, _BLANK_IS_NONE] = None
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # SMS (docs/channels.md "SMS"). Twilio signs the exact URL it posted a callback to:
    # behind a proxy that is the public one, not the one this process sees.
    public_url: str | None = Field(
        default=None,
        max_length=2000,
        description="The public base URL Homing is reached at (https://homing.example.com);"
        " the URL a vendor signs is this plus /inbound/<provider>/<account id>",
    )
    # The Host names a request may carry besides loopback and HOMING_PUBLIC_URL's host
    # (homing.hosts); any other is refused before anything else is done.
    allowed_hosts: str = Field(
        default="",
        max_length=4096,
        description="Comma-separated host names or IP addresses (no port) that requests"
        " may name in their Host header, besides loopback and HOMING_PUBLIC_URL's host",
    )

    database: DatabaseSettings = DatabaseSettings()
    redis: RedisSettings = RedisSettings()
    server: ServerSettings = ServerSettings()
    admission: AdmissionSettings = AdmissionSettings()
    retries: RetrySettings = RetrySettings()
    worker: WorkerSettings = WorkerSettings()
    provider_calls: ProviderCallSettings = ProviderCallSettings()
    limits: LimitSettings = LimitSettings()
    erasure: ErasureSettings = ErasureSettings()
    templates: TemplateSettings = TemplateSettings()
    feed: FeedSettings = FeedSettings()
    webhooks: WebhookSettings = WebhookSettings()
    inbound: InboundSettings = InboundSettings()
    retention: RetentionSettings = RetentionSettings()
    platform_email: PlatformEmailSettings = PlatformEmailSettings()
    alerts: AlertSettings = AlertSettings()
    reconcile: ReconcileSettings = ReconcileSettings()
    digests: DigestSettings = DigestSettings()
    console: ConsoleSettings = ConsoleSettings()
    recipient_links: RecipientLinkSettings = RecipientLinkSettings()
    billing: BillingSettings = BillingSettings()
    metrics: MetricsSettings = MetricsSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _FlatEnvironment(settings_cls))

    @model_validator(mode="before")
    @classmethod
    def _grouped(cls, data: Any) -> Any:
        """Flat names (``max_attempts``, as in the environment) placed in their groups."""
        if not isinstance(data, dict):
            return data
        placed: dict[str, Any] = {}
        for key, value in data.items():
            spot = _BY_FLAT.get(key)
            if spot is None or not spot[0]:
                placed[key] = value
                continue
            # By its flat name (the field's alias): an error names what the operator set.
            group = placed.get(spot[0])
            if isinstance(group, BaseModel):
                group = group.model_dump(by_alias=True)
            placed[spot[0]] = {**(group or {}), key: value}
        return placed

    def changed(self, **flat: Any) -> Settings:
        """These settings with some changed, named as in the environment (``max_attempts``,
        ``retention_days``), validated as at startup."""
        unknown = set(flat) - set(_BY_FLAT)
        if unknown:
            raise TypeError(f"no such setting: {sorted(unknown)}")
        return type(self).model_validate({**self.flat(), **flat})

    def flat(self) -> dict[str, Any]:
        """Every setting by its flat name (a secret stays a ``SecretStr``)."""
        values: dict[str, Any] = {}
        for flat, (group, name) in _BY_FLAT.items():
            owner = getattr(self, group) if group else self
            values[flat] = getattr(owner, name)
        return values

    @field_validator("allowed_hosts")
    @classmethod
    def _host_list(cls, value: str) -> str:
        parse_allowed_hosts(value)
        return value

    @field_validator("public_url", mode="before")
    @classmethod
    def _public_base_url(cls, value: object) -> object:
        if value == "" or value is None:
            return None
        text = str(value)
        if not text.startswith(("https://", "http://")) or "?" in text or "#" in text:
            raise ValueError("HOMING_PUBLIC_URL is an http(s) URL without query or fragment")
        return text

    @property
    def allowed_host_set(self) -> AllowedHosts:
        """Every host a request may name: loopback, the public URL's, the list's."""
        return AllowedHosts.of(self.public_url, parse_allowed_hosts(self.allowed_hosts))

    @property
    def resolved_database_url(self) -> str:
        """The database URL in force: the setting, or SQLite in the data directory."""
        if self.database.url:
            return self.database.url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'homing.db').resolve()}"

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")


def _places() -> Iterator[tuple[str, tuple[str, str]]]:
    for name, field in Settings.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            Settings.GROUPS[name] = kind
            for inner, info in kind.model_fields.items():
                yield ENV_PREFIX + (info.alias or inner).upper(), (name, inner)
        else:
            yield ENV_PREFIX + name.upper(), ("", name)


# HOMING_X -> (group attribute, or "" at the top; field name)
_PLACES: dict[str, tuple[str, str]] = dict(_places())
# flat name -> the same
_BY_FLAT: dict[str, tuple[str, str]] = {
    variable.removeprefix(ENV_PREFIX).lower(): spot for variable, spot in _PLACES.items()
}
assert len(_BY_FLAT) == len(_PLACES), "two settings share an environment name"


def env_fields() -> dict[str, FieldInfo]:
    """Every setting's environment variable and its field (its default, its bounds)."""
    return {
        variable: (Settings.GROUPS[group] if group else Settings).model_fields[name]
        for variable, (group, name) in _PLACES.items()
    }


def explained(error: ValidationError) -> list[str]:
    """Each error of a ``Settings`` validation as ``HOMING_X: why``, named as the operator
    set it and without the value (it may be a secret)."""
    lines = []
    for item in error.errors(include_url=False, include_input=False):
        lines.append(f"{_variable_of(item['loc'])}: {item['msg']}")
    return lines


def _variable_of(loc: tuple[int | str, ...]) -> str:
    head = str(loc[0]) if loc else ""
    group = Settings.GROUPS.get(head)
    if group is not None and len(loc) > 1:
        key = str(loc[1])
        for name, field in group.model_fields.items():
            if key in (name, field.alias):
                return ENV_PREFIX + (field.alias or name).upper()
    if head in Settings.model_fields:
        return ENV_PREFIX + head.upper()
    return ".".join(str(part) for part in loc) or "settings"


def parse_prices(value: str) -> dict[tuple[Plan, str], int]:
    """``"INDIE:NGN:500000,STARTUP:USD:2900"`` → {(INDIE, "NGN"): 500000, …}; ValueError."""
    prices: dict[tuple[Plan, str], int] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        try:
            plan, currency, amount = item.split(":")
            prices[(Plan(plan.strip().upper()), currency.strip().upper())] = int(amount)
        except ValueError:
            raise ValueError(f"a billing price is PLAN:CURRENCY:AMOUNT, not {item!r}") from None
    return prices
