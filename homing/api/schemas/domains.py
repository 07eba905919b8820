"""Bodies of the sending-domain routes (``/v1/domains``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, StringConstraints

from homing.api.schemas.shared import Strict
from homing.domain.domain_rows import SendingDomain


class DomainCreate(Strict):
    domain: Annotated[str, StringConstraints(min_length=1, max_length=253)]
    provider_account_id: Annotated[str, StringConstraints(min_length=1, max_length=36)]


class DnsRecordPublic(BaseModel):
    type: str
    host: str
    value: str
    purpose: str | None
    priority: int | None
    valid: bool | None


class DomainPublic(BaseModel):
    id: str
    domain: str
    provider_account_id: str
    provider: str
    status: str
    records: list[DnsRecordPublic]
    created_at: datetime
    updated_at: datetime
    verified_at: datetime | None

    @classmethod
    def of(cls, domain: SendingDomain) -> DomainPublic:
        return cls(
            id=domain.id,
            domain=domain.domain,
            provider_account_id=domain.provider_account_id,
            provider=domain.provider,
            status=domain.status.value,
            records=[DnsRecordPublic(**r.as_dict()) for r in domain.records],
            created_at=domain.created_at,
            updated_at=domain.updated_at,
            verified_at=domain.verified_at,
        )
