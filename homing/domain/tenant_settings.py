"""Every setting of one tenant; the SQL is ``homing.store.tenant_settings``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from homing.models import SignatureFormat


@dataclass(kw_only=True, frozen=True, slots=True)
class TenantSettings:
    """Every setting of one tenant; ``updated_at`` is None while all are defaults."""

    webhook_signature_format: SignatureFormat = SignatureFormat.DESIGN
    # Where Homing's notices go (docs/operations.md "Notices"): None sends none that way.
    contact_email: str | None = None
    operations_url: str | None = None
    # Channel name -> ttl_seconds of a job of that channel that names none.
    default_ttl_seconds: dict[str, int] = field(default_factory=dict)
    # The mailto: of a marketing email's List-Unsubscribe (docs/recipients.md "Links").
    unsubscribe_mailbox: str | None = None
    # {"start": "21:00", "end": "08:00"}: quiet hours of a category that has none
    # (docs/scheduling.md); None: none.
    quiet_hours: dict[str, str] | None = None
    updated_at: datetime | None = None
