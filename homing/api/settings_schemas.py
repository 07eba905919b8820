"""Request and response bodies of ``/v1/settings``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from homing.api.base_schemas import Strict
from homing.api.schemas import TtlSeconds
from homing.store.tenant_settings import TenantSettings

SignatureFormatName = Literal["design", "notifykit"]
ChannelName = Literal["email", "webhook", "sms", "chat"]


class TenantSettingsPublic(BaseModel):
    """Every setting of the tenant, defaults included."""

    webhook_signature_format: SignatureFormatName
    # The ttl of a job that names none, by channel; a channel left out: no expiry.
    default_ttl_seconds: dict[str, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, settings: TenantSettings) -> TenantSettingsPublic:
        return cls(
            webhook_signature_format=settings.webhook_signature_format.value,
            default_ttl_seconds=dict(settings.default_ttl_seconds),
        )


class TenantSettingsPatch(Strict):
    """The settings to change; the ones left out keep their value. Strict: an
    unknown name, a null or a value of another type is refused."""

    model_config = ConfigDict(strict=True)

    webhook_signature_format: SignatureFormatName = "design"
    # Replaces the whole map; ``{}`` removes every default.
    default_ttl_seconds: dict[ChannelName, TtlSeconds] = Field(default_factory=dict)

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set}
