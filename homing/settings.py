"""Settings from ``HOMING_*`` environment variables.

Built once by the entry point (``Settings()``) and passed down; nothing here is
instantiated at import time.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from homing.addresses import canonical
from homing.hosts import AllowedHosts, parse_allowed_hosts
from homing.models import Plan


class Settings(BaseSettings):
    """Every setting Homing reads; docs/settings.md documents each one
    (tests/unit/test_docs.py checks it)."""

    model_config = SettingsConfigDict(env_prefix="HOMING_", extra="ignore")

    data_dir: Path = Path("homing-data")
    database_url: str | None = None
    secret_key: SecretStr | None = None
    previous_secret_keys: SecretStr | None = None
    redis_url: str | None = None
    # PostgreSQL connections per process (a fixed pool: no connection is opened per burst).
    database_pool_size: int = Field(default=10, ge=1, le=1000)

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    max_attempts: int = Field(default=3, ge=1, le=50)
    retry_base_seconds: float = Field(default=5.0, gt=0)
    retry_max_seconds: float = Field(default=3600.0, gt=0)
    platform_retry_base_seconds: float = Field(default=1.0, gt=0)
    platform_retry_max_seconds: float = Field(default=60.0, gt=0)
    lease_seconds: float = Field(default=60.0, gt=0)
    max_deferral_seconds: float = Field(default=86400.0, gt=0)
    # What one job may cost, whatever providers answer (docs/sending.md, "Delivery rules").
    max_provider_calls_per_job: int = Field(default=50, ge=1, le=10_000)

    worker_concurrency: int = Field(default=512, ge=1, le=10000)
    claim_batch_size: int = Field(default=50, ge=1, le=1000)
    # Outcomes of deliveries that finish within this long are written in one transaction
    # (or as soon as claim_batch_size of them wait, or nothing is in flight).
    outcome_window_seconds: float = Field(default=0.02, ge=0, le=10)
    tenant_inflight: int = Field(default=256, ge=1, le=100_000)
    # PostgreSQL with Redis: processes serving the API on one port (None: one per core for
    # homing api, one per two cores for homing run).
    api_processes: int | None = Field(default=None, ge=1, le=64)
    # homing run on PostgreSQL: worker child processes (None: one per two cores).
    run_worker_processes: int | None = Field(default=None, ge=0, le=64)
    poll_interval_seconds: float = Field(default=1.0, gt=0)
    # /readyz: a worker loop of this process silent for longer than this is stalled.
    ready_worker_stall_seconds: float = Field(default=30.0, ge=1, le=3600)
    provider_timeout_seconds: float = Field(default=10.0, gt=0)
    # One total deadline per provider or webhook call (connect, send, read the answer),
    # credential checks and domain calls included; the timeouts above bound each phase.
    provider_deadline_seconds: float = Field(default=30.0, gt=0, le=300)

    alert_slack_webhook_url: str | None = None
    alert_batch_seconds: float = Field(default=10.0, ge=0)

    max_body_bytes: int = Field(default=1_048_576, ge=1024)

    # Recipients, categories and preferences (docs/recipients.md, "Bounds").
    max_recipients_per_tenant: int = Field(default=1_000_000, ge=1, le=100_000_000)
    max_categories_per_tenant: int = Field(default=100, ge=1, le=1000)
    recipient_data_max_bytes: int = Field(default=16_384, ge=2, le=262_144)
    # Erasure (docs/recipients.md, "Erasure"): rows per batch (one short transaction
    # each), batches per call, and calls per tenant a minute.
    erasure_batch_size: int = Field(default=500, ge=1, le=10_000)
    erasure_max_batches: int = Field(default=100, ge=1, le=10_000)
    erasures_per_minute: int = Field(default=30, ge=1, le=10_000)

    # Configuration a tenant may hold (docs/settings.md, "Configuration bounds"): live API keys,
    # sending domains, and provider accounts over all channels.
    max_api_keys_per_tenant: int = Field(default=100, ge=1, le=1000)
    max_domains_per_tenant: int = Field(default=50, ge=1, le=1000)
    max_providers_per_tenant: int = Field(default=50, ge=1, le=1000)

    # Templates (docs/templates.md, "Bounds").
    template_max_source_chars: int = Field(default=65_536, ge=1024, le=1_048_576)
    template_max_rendered_chars: int = Field(default=262_144, ge=1024, le=4_194_304)
    template_render_timeout_seconds: float = Field(default=1.0, gt=0, le=30)
    template_render_workers: int = Field(default=2, ge=1, le=64)
    template_worker_memory_mb: int = Field(default=512, ge=128, le=65_536)
    template_max_templates: int = Field(default=500, ge=1, le=100_000)
    template_max_versions: int = Field(default=200, ge=1, le=10_000)
    template_max_data_bytes: int = Field(default=65_536, ge=1024, le=1_048_576)
    template_cache_seconds: float = Field(default=2.0, ge=0, le=60)
    layout_max_layouts: int = Field(default=20, ge=1, le=1000)
    layout_max_source_chars: int = Field(default=65_536, ge=1024, le=1_048_576)

    # The in-app feed (docs/feed.md, "Bounds").
    feed_title_max_chars: int = Field(default=200, ge=1, le=2000)
    feed_body_max_chars: int = Field(default=2000, ge=1, le=20_000)
    feed_data_max_bytes: int = Field(default=4096, ge=2, le=65_536)
    feed_max_items_per_recipient: int = Field(default=500, ge=10, le=100_000)
    feed_token_max_seconds: int = Field(default=2_592_000, ge=60, le=2_592_000)
    feed_max_origins: int = Field(default=20, ge=1, le=100)
    feed_streams_per_recipient: int = Field(default=5, ge=1, le=100)
    feed_streams_per_process: int = Field(default=1000, ge=1, le=100_000)
    feed_poll_seconds: float = Field(default=1.0, gt=0, le=1.0)
    feed_heartbeat_seconds: float = Field(default=15.0, gt=0, le=300)
    feed_stream_buffer: int = Field(default=64, ge=2, le=10_000)

    # Admission control (docs/architecture.md "Admission").
    admin_token: SecretStr | None = None
    rate_limit_on_redis_error: Literal["open", "closed"] = "open"
    redis_key_prefix: str = Field(default="homing", min_length=1, max_length=100)
    redis_timeout_seconds: float = Field(default=0.5, gt=0, le=30)
    # Revocation and suspension must reach every API process within one second.
    auth_cache_seconds: float = Field(default=0.5, ge=0, le=0.9)
    sandbox_urls: str = ""
    # Provider endpoints (docs/architecture.md "Provider endpoints"): ranges a provider's
    # base_url or SMTP host may reach besides the vendors' official API hosts.
    provider_allowed_networks: str = Field(default="", max_length=4096)

    # Outbound webhooks (docs/webhooks.md "Webhooks").
    webhook_require_https: bool = True
    webhook_allowed_networks: str = ""
    webhook_rotation_overlap_seconds: float = Field(default=86400.0, ge=0)
    webhook_max_payload_bytes: int = Field(default=262_144, ge=1)
    webhook_timeout_seconds: float = Field(default=15.0, gt=0)
    webhook_response_excerpt_bytes: int = Field(default=1024, ge=0, le=65_536)
    # Gone marks (410) a tenant keeps, the newest (docs/settings.md, "Configuration bounds").
    max_gone_endpoints_per_tenant: int = Field(default=200, ge=1, le=1000)

    # Inbound provider events and billing
    # (docs/inbound.md "Inbound events, suppression and domains").
    inbound_max_body_bytes: int = Field(default=1_048_576, ge=1024)
    # A SendGrid batch (768 KB) of its smallest real events is about 2,500 of them.
    inbound_max_events_per_body: int = Field(default=5_000, ge=1, le=100_000)
    # Per provider account, over a moving minute (memory or Redis, as admission).
    inbound_events_per_minute: int = Field(default=20_000, ge=1, le=1_000_000)
    # Retention (docs/operations.md "Retention"): finished jobs, with their attempts, dead letters
    # and inbound events, are deleted after ``retention_days`` (0: kept for ever); their
    # bodies and sealed headers are scrubbed after ``payload_retention_days`` (0: never).
    retention_days: int = Field(default=30, ge=0, le=36_500)
    payload_retention_days: int = Field(default=7, ge=0, le=36_500)
    retention_interval_seconds: float = Field(default=300.0, ge=1, le=86_400)
    retention_batch_size: int = Field(default=500, ge=1, le=10_000)
    # Notices to tenants, platform email and alerts on missing signals (docs/operations.md,
    # "Notices to tenants and platform email", "Alerts"). Every threshold has a default.
    platform_tenant_id: str | None = Field(
        default=None,
        max_length=36,
        description="The tenant whose email providers send Homing's own mail (notices, "
        "operator alerts) on the platform-email queue; unset: no platform email.",
    )
    platform_email_from: str | None = Field(
        default=None,
        max_length=400,
        description="The sender of Homing's own mail, e.g. 'Homing <ops@example.com>'.",
    )
    notice_max_per_hour: int = Field(
        default=20,
        ge=1,
        le=10_000,
        description="Notices sent to one tenant in an hour at most; more are recorded, "
        "held, and counted in the next dead-letter digest.",
    )
    alert_email: str | None = Field(
        default=None,
        max_length=400,
        description="The operator's address: alerts go there too, by platform email.",
    )
    alert_interval_seconds: float = Field(
        default=60.0, ge=1, le=3600, description="How often one worker evaluates the alerts."
    )
    alert_queue_stuck_seconds: float = Field(
        default=600.0,
        ge=1,
        description="Alert when a queue's oldest claimable entry is older than this.",
    )
    alert_worker_silent_seconds: float = Field(
        default=300.0,
        ge=1,
        description="Alert when no job finished for this long while entries are claimable.",
    )
    alert_window_seconds: float = Field(
        default=900.0,
        ge=10,
        le=86_400,
        description="The window the ratio, lag and spike alerts look back over.",
    )
    alert_provider_failure_ratio: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Alert when this share of a provider's calls in the window failed.",
    )
    alert_provider_min_calls: int = Field(
        default=20, ge=1, description="A provider's failure ratio counts from this many calls."
    )
    alert_inbound_lag_p95_seconds: float = Field(
        default=600.0,
        gt=0,
        description="Alert when inbound events' p95 of received - occurred exceeds this.",
    )
    alert_inbound_quarantine_ratio: float = Field(
        default=0.05,
        gt=0,
        le=1,
        description="Alert when this share of the window's inbound events is quarantined.",
    )
    alert_dead_letter_spike: int = Field(
        default=50, ge=1, description="Alert when this many jobs dead-lettered in the window."
    )
    alert_history_rows: int = Field(
        default=1000,
        ge=10,
        le=100_000,
        description="Fired alerts the operator's console keeps (the oldest are dropped).",
    )

    # The reconciler (docs/operations.md "The ledger invariant"): a pass every interval in worker
    # processes (one process at a time) checks that every job is terminal with no queue
    # entry or live with one; a lease that ran out longer ago than
    # ``reconcile_stale_lease_seconds`` on a PROCESSING job is released.
    # Multi-channel notifications (docs/notifications.md): how often each worker
    # process looks for steps whose outcome is known or whose window ran out.
    notification_sweep_seconds: float = Field(
        default=1.0,
        ge=0.1,
        le=3600,
        description="seconds between two sweeps of multi-channel notifications' steps",
    )
    # Digests (docs/notifications.md, "Digests"): items a window holds before the next
    # opens, and how many digests one sweep sends, in all and of one tenant.
    digest_max_items: int = Field(
        default=1000, ge=1, le=10_000, description="notifications one digest window holds"
    )
    digest_sweep_batch: int = Field(
        default=100, ge=1, le=10_000, description="digests one sweep of a worker sends at most"
    )
    digest_sweep_per_tenant: int = Field(
        default=10, ge=1, le=10_000, description="digests of one tenant one sweep sends at most"
    )
    reconcile_interval_seconds: float = Field(
        default=300.0, ge=1, le=86_400, description="seconds between two reconciler passes"
    )
    reconcile_stale_lease_seconds: float = Field(
        default=300.0,
        ge=1,
        le=86_400,
        description="a lease expired longer ago than this on a PROCESSING job is released",
    )
    reconcile_batch_size: int = Field(
        default=1000, ge=1, le=10_000, description="jobs or entries one reconciler batch reads"
    )
    # The console (docs/console.md "Console"): a signed-in session ends after this many idle
    # minutes, and after this many hours whatever the activity.
    console_session_idle_minutes: int = Field(default=30, ge=1, le=10_080)
    console_session_hours: int = Field(default=12, ge=1, le=720)
    # Failed sign-ins to one email within the lockout window lock it for the window;
    # one client address may try this many sign-ins a minute, whoever it names.
    console_login_failures: int = Field(default=5, ge=1, le=100)
    console_lockout_minutes: int = Field(default=15, ge=1, le=1440)
    console_logins_per_minute: int = Field(default=30, ge=1, le=10_000)
    # An invitation to a tenant (docs/console.md "Console") can be accepted for this many hours.
    invitation_ttl_hours: int = Field(default=72, ge=1, le=720)
    # Ended invitations (accepted, revoked or expired) go this many days after they
    # ended, with the retention purge (docs/operations.md "Retention"); pending ones always stay.
    invitation_retention_days: int = Field(default=30, ge=1, le=3650)
    # A recipient's links (docs/recipients.md "Links"): those that open count against
    # their tenant's window, those that do not against the client address's.
    recipient_links_per_minute: int = Field(default=600, ge=1, le=100_000)
    recipient_link_misses_per_minute: int = Field(default=30, ge=1, le=10_000)
    paystack_secret_key: SecretStr | None = None
    polar_webhook_secret: SecretStr | None = None
    billing_prices: str = ""
    # SMS (docs/channels.md "SMS"). Twilio signs the exact URL it posted a callback to: behind a
    # proxy that is the public one, not the one this process sees.
    public_url: str | None = Field(
        default=None,
        max_length=2000,
        description="The public base URL Homing is reached at (https://homing.example.com);"
        " the URL Twilio signs is this plus /inbound/twilio/<account id>",
    )

    # The Host names a request may carry besides loopback and HOMING_PUBLIC_URL's host
    # (homing.hosts); any other is refused before anything else is done.
    allowed_hosts: str = Field(
        default="",
        max_length=4096,
        description="Comma-separated host names or IP addresses (no port) that requests"
        " may name in their Host header, besides loopback and HOMING_PUBLIC_URL's host",
    )

    @field_validator("allowed_hosts")
    @classmethod
    def _host_list(cls, value: str) -> str:
        parse_allowed_hosts(value)
        return value

    @property
    def allowed_host_set(self) -> AllowedHosts:
        """Every host a request may name: loopback, the public URL's, the list's."""
        return AllowedHosts.of(self.public_url, parse_allowed_hosts(self.allowed_hosts))

    @field_validator("public_url", mode="before")
    @classmethod
    def _public_base_url(cls, value: object) -> object:
        if value == "" or value is None:
            return None
        text = str(value)
        if not text.startswith(("https://", "http://")) or "?" in text or "#" in text:
            raise ValueError("HOMING_PUBLIC_URL is an http(s) URL without query or fragment")
        return text

    # The audit log (docs/operations.md "Audit log"): events are deleted after this many days
    # (0: kept for ever), separately from job retention, which is much shorter.
    audit_retention_days: int = Field(
        default=400,
        ge=0,
        le=36_500,
        description="Days an audit event is kept (0: for ever); independent of "
        "HOMING_RETENTION_DAYS.",
    )

    # Pacing (docs/channels.md, "Pacing presets"): how long a job waits in the worker for a full
    # rate rule to free a slot before it is deferred, and the seconds added to every
    # rule's window so that jitter on the way never makes a vendor count one too many.
    pacing_wait_seconds: float = Field(
        default=10.0,
        ge=0,
        le=60,
        description="Seconds a job may wait in the worker for a pacing slot before it "
        "is deferred (no attempt is spent either way).",
    )
    pacing_margin_seconds: float = Field(
        default=0.5,
        ge=0,
        le=5,
        description="Seconds added to every pacing window, against network jitter.",
    )
    # Provider batch APIs (docs/architecture.md, "Batch sends"): how long an email
    # waits for others of the same provider account to leave with it in one batch
    # call (Resend, Postmark, SendGrid, Mailgun). 0 sends every email alone.
    batch_window_seconds: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Seconds an email waits for others to share a vendor batch call "
        "(0: no batching).",
    )

    @field_validator("paystack_secret_key", "polar_webhook_secret", mode="before")
    @classmethod
    def _blank_billing_secret_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("billing_prices")
    @classmethod
    def _price_list(cls, value: str) -> str:
        parse_prices(value)
        return value

    @field_validator("webhook_allowed_networks", "provider_allowed_networks")
    @classmethod
    def _cidr_list(cls, value: str) -> str:
        for item in value.split(","):
            if item.strip():
                ipaddress.ip_network(item.strip(), strict=False)
        return value

    @property
    def webhook_allowed_network_list(self) -> list[str]:
        """HOMING_WEBHOOK_ALLOWED_NETWORKS, comma-separated CIDRs."""
        return [n.strip() for n in self.webhook_allowed_networks.split(",") if n.strip()]

    @property
    def provider_allowed_network_list(self) -> list[str]:
        """HOMING_PROVIDER_ALLOWED_NETWORKS, comma-separated CIDRs."""
        return [n.strip() for n in self.provider_allowed_networks.split(",") if n.strip()]

    @field_validator("database_url", "redis_url", "alert_slack_webhook_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    # Prometheus metrics (docs/architecture.md "Metrics").
    metrics_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="A worker-only process (`homing worker`) serves /metrics and /readyz "
        "on this port; unset: it serves no HTTP. 0 picks a free port.",
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        min_length=1,
        max_length=255,
        description="The address a worker-only process's metrics server binds.",
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        description="When set, /metrics (API and worker) answers only "
        "'Authorization: Bearer <token>'; 401 otherwise.",
    )

    @field_validator("platform_tenant_id", "platform_email_from", "alert_email", mode="before")
    @classmethod
    def _blank_notice_setting_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("platform_email_from", "alert_email")
    @classmethod
    def _mailbox(cls, value: str | None) -> str | None:
        return None if value is None else canonical(value)

    @field_validator("admin_token", "metrics_token", mode="before")
    @classmethod
    def _blank_token_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def sandbox_url_list(self) -> list[str]:
        """HOMING_SANDBOX_URLS, comma-separated: where test-key jobs may be sent."""
        return [u.strip() for u in self.sandbox_urls.split(",") if u.strip()]

    @property
    def resolved_database_url(self) -> str:
        """The database URL in force: the setting, or SQLite in the data directory."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'homing.db').resolve()}"

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")


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
