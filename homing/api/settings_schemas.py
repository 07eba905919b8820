"""Request and response bodies of ``/v1/settings``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from homing.api.base_schemas import Strict
from homing.store.tenant_settings import TenantSettings

SignatureFormatName = Literal["design", "notifykit"]


class TenantSettingsPublic(BaseModel):
    """Every setting of the tenant, defaults included."""

    webhook_signature_format: SignatureFormatName

    @classmethod
    def of(cls, settings: TenantSettings) -> TenantSettingsPublic:
        return cls(webhook_signature_format=settings.webhook_signature_format.value)


class TenantSettingsPatch(Strict):
    """The settings to change; the ones left out keep their value. Strict: an
    unknown name, a null or a value of another type is refused."""

    model_config = ConfigDict(strict=True)

    webhook_signature_format: SignatureFormatName = "design"

    def changes(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in self.model_fields_set}
