"""Settings from ``HOMING_*`` environment variables.

Built once by the entry point (``Settings()``) and passed down; nothing here is
instantiated at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every setting Homing reads. The README documents each one."""

    model_config = SettingsConfigDict(env_prefix="HOMING_", extra="ignore")

    data_dir: Path = Path("homing-data")
    database_url: str | None = None
    secret_key: SecretStr | None = None
    previous_secret_keys: SecretStr | None = None
    redis_url: str | None = None

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    max_attempts: int = Field(default=3, ge=1, le=50)
    retry_base_seconds: float = Field(default=5.0, gt=0)
    retry_max_seconds: float = Field(default=3600.0, gt=0)
    lease_seconds: float = Field(default=60.0, gt=0)
    max_deferral_seconds: float = Field(default=86400.0, gt=0)

    worker_concurrency: int = Field(default=100, ge=1, le=10000)
    claim_batch_size: int = Field(default=50, ge=1, le=1000)
    poll_interval_seconds: float = Field(default=1.0, gt=0)
    provider_timeout_seconds: float = Field(default=10.0, gt=0)

    alert_slack_webhook_url: str | None = None
    alert_batch_seconds: float = Field(default=10.0, ge=0)

    max_body_bytes: int = Field(default=1_048_576, ge=1024)

    @field_validator("database_url", "redis_url", "alert_slack_webhook_url", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def resolved_database_url(self) -> str:
        """The database URL in force: the setting, or SQLite in the data directory."""
        if self.database_url:
            return self.database_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'homing.db').resolve()}"

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")
