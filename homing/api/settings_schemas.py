"""Request and response bodies of ``/v1/settings``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from homing.api.base_schemas import Strict
from homing.store.tenant_settings import TenantSettings

SignatureFormatName = Literal["design", "notifykit"]
# Bounded before anything parses them (README "Notices").
ContactEmail = Annotated[str, StringConstraints(min_length=3, max_length=400)]
OperationsUrl = Annotated[str, StringConstraints(min_length=1, max_length=2048)]


class TenantSettingsPublic(BaseModel):
    """Every setting of the tenant, defaults included."""

    webhook_signature_format: SignatureFormatName
    contact_email: str | None = None
    operations_url: str | None = None

    @classmethod
    def of(cls, settings: TenantSettings) -> TenantSettingsPublic:
        return cls(
            webhook_signature_format=settings.webhook_signature_format.value,
            contact_email=settings.contact_email,
            operations_url=settings.operations_url,
        )


class TenantSettingsPatch(Strict):
    """The settings to change; the ones left out keep their value. Strict: an
    unknown name, a value of another type, or a null for a setting that has no
    "unset" is refused; ``contact_email: null`` and ``operations_url: null`` clear them."""

    model_config = ConfigDict(strict=True)

    webhook_signature_format: SignatureFormatName = "design"
    contact_email: ContactEmail | None = None
    operations_url: OperationsUrl | None = None

    def changes(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in self.model_fields_set}
