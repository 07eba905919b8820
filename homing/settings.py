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

from homing.models import Plan


class Settings(BaseSettings):
    """Every setting Homing reads. The README documents each one."""

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
    # What one job may cost, whatever providers answer (README "Delivery rules").
    max_provider_calls_per_job: int = Field(default=50, ge=1, le=10_000)

    worker_concurrency: int = Field(default=512, ge=1, le=10000)
    claim_batch_size: int = Field(default=50, ge=1, le=1000)
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

    # Admission control (README "Admission").
    admin_token: SecretStr | None = None
    rate_limit_on_redis_error: Literal["open", "closed"] = "open"
    redis_key_prefix: str = Field(default="homing", min_length=1, max_length=100)
    redis_timeout_seconds: float = Field(default=0.5, gt=0, le=30)
    # Revocation and suspension must reach every API process within one second.
    auth_cache_seconds: float = Field(default=0.5, ge=0, le=0.9)
    sandbox_urls: str = ""
    # Provider endpoints (README "Provider endpoints"): ranges a provider's base_url or
    # SMTP host may reach besides the vendors' official API hosts.
    provider_allowed_networks: str = Field(default="", max_length=4096)

    # Outbound webhooks (README "Webhooks").
    webhook_require_https: bool = True
    webhook_allowed_networks: str = ""
    webhook_rotation_overlap_seconds: float = Field(default=86400.0, ge=0)
    webhook_max_payload_bytes: int = Field(default=262_144, ge=1)
    webhook_timeout_seconds: float = Field(default=15.0, gt=0)
    webhook_response_excerpt_bytes: int = Field(default=1024, ge=0, le=65_536)

    # Inbound provider events and billing (README "Inbound events, suppression and domains").
    inbound_max_body_bytes: int = Field(default=1_048_576, ge=1024)
    # A SendGrid batch (768 KB) of its smallest real events is about 2,500 of them.
    inbound_max_events_per_body: int = Field(default=5_000, ge=1, le=100_000)
    # Per provider account, over a moving minute (memory or Redis, as admission).
    inbound_events_per_minute: int = Field(default=20_000, ge=1, le=1_000_000)
    # Retention (README "Retention"): finished jobs, with their attempts, dead letters
    # and inbound events, are deleted after ``retention_days`` (0: kept for ever); their
    # bodies and sealed headers are scrubbed after ``payload_retention_days`` (0: never).
    retention_days: int = Field(default=30, ge=0, le=36_500)
    payload_retention_days: int = Field(default=7, ge=0, le=36_500)
    retention_interval_seconds: float = Field(default=300.0, ge=1, le=86_400)
    retention_batch_size: int = Field(default=500, ge=1, le=10_000)
    paystack_secret_key: SecretStr | None = None
    polar_webhook_secret: SecretStr | None = None
    billing_prices: str = ""

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

    # Prometheus metrics (README "Metrics").
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
