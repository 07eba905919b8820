"""Request and response bodies of ``/v1/settings``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from homing.api.schemas.recipients import QuietHours
from homing.api.schemas.shared import Strict, TtlSeconds
from homing.domain.tenant_settings import TenantSettings

SignatureFormatName = Literal["design", "notifykit"]
# Bounded before anything parses them (docs/operations.md "Notices").
ContactEmail = Annotated[str, StringConstraints(min_length=3, max_length=400)]
OperationsUrl = Annotated[str, StringConstraints(min_length=1, max_length=2048)]
ChannelName = Literal["email", "webhook", "sms", "chat"]


class TenantSettingsPublic(BaseModel):
    """Every setting of the tenant, defaults included."""

    webhook_signature_format: SignatureFormatName
    contact_email: str | None = None
    operations_url: str | None = None
    # The ttl of a job that names none, by channel; a channel left out: no expiry.
    default_ttl_seconds: dict[str, int] = Field(default_factory=dict)
    # The mailto: of a marketing email's List-Unsubscribe, besides its link.
    unsubscribe_mailbox: str | None = None
    # Quiet hours of a category that has none, in each recipient's time zone
    # (docs/scheduling.md); null: none.
    quiet_hours: QuietHours | None = None

    @classmethod
    def of(cls, settings: TenantSettings) -> TenantSettingsPublic:
        return cls(
            webhook_signature_format=settings.webhook_signature_format.value,
            contact_email=settings.contact_email,
            operations_url=settings.operations_url,
            default_ttl_seconds=dict(settings.default_ttl_seconds),
            unsubscribe_mailbox=settings.unsubscribe_mailbox,
            quiet_hours=None
            if settings.quiet_hours is None
            else QuietHours(**settings.quiet_hours),
        )


class TenantSettingsPatch(Strict):
    """The settings to change; the ones left out keep their value. Strict: an
    unknown name, a value of another type, or a null for a setting that has no
    "unset" is refused; ``contact_email: null`` and ``operations_url: null`` clear them."""

    model_config = ConfigDict(strict=True)

    webhook_signature_format: SignatureFormatName = "design"
    contact_email: ContactEmail | None = None
    operations_url: OperationsUrl | None = None
    # A plain address; ``null`` clears it (docs/recipients.md "Links").
    unsubscribe_mailbox: ContactEmail | None = None

    # Replaces the whole map; ``{}`` removes every default.
    default_ttl_seconds: dict[ChannelName, TtlSeconds] = Field(default_factory=dict)
    # Quiet hours of a category that has none; ``null`` clears them.
    quiet_hours: QuietHours | None = None

    def changes(self) -> dict[str, Any]:
        changes = {name: getattr(self, name) for name in self.model_fields_set}
        if self.quiet_hours is not None:
            changes["quiet_hours"] = self.quiet_hours.model_dump()
        return changes
