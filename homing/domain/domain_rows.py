"""A tenant's sending domain; the SQL is ``homing.store.domain_rows``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from homing.models import DnsRecord, DomainStatus


@dataclass(kw_only=True, frozen=True, slots=True)
class SendingDomain:
    """A tenant's sending domain, its provider's id for it, status and DNS records."""

    id: str
    tenant_id: str
    provider_account_id: str
    provider: str
    domain: str
    provider_domain_id: str
    status: DomainStatus
    records: tuple[DnsRecord, ...]
    created_at: datetime
    updated_at: datetime
    verified_at: datetime | None = None
