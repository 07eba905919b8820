"""Bodies of the inbound, suppression, domain and report endpoints."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, model_validator

from homing.api.base_schemas import Page, Strict
from homing.inbound.events import delivery_status
from homing.inbound.report import ReportRow
from homing.inbound.secrets import InboundSecretInfo
from homing.models import Channel
from homing.store.domain_rows import SendingDomain
from homing.store.inbound import Entry
from homing.store.suppressions import Suppression, entered_key

Secret = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Credential = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class BasicAuth(Strict):
    username: Credential
    password: Credential


class InboundSecretPut(Strict):
    """Exactly one of the fields, the one the account's provider uses."""

    verification_key: Secret | None = None
    signing_secret: Secret | None = None
    basic_auth: BasicAuth | None = None
    # Telegram's setWebhook secret_token: the pattern is checked by homing.inbound.secrets.
    secret_token: Credential | None = None

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class InboundSecretPublic(BaseModel):
    provider_account_id: str
    provider: str
    kind: str
    preview: str
    path: str
    updated_at: datetime

    @classmethod
    def of(cls, info: InboundSecretInfo) -> InboundSecretPublic:
        return cls(
            provider_account_id=info.provider_account_id,
            provider=info.provider,
            kind=info.kind,
            preview=info.preview,
            path=info.path,
            updated_at=info.updated_at,
        )


class DeliveryEventPublic(BaseModel):
    type: str
    provider: str
    occurred_at: datetime | None
    received_at: datetime
    detail: dict[str, Any]

    @classmethod
    def of(cls, entry: Entry) -> DeliveryEventPublic:
        return cls(
            type=entry.event_type.value if entry.event_type else "info",
            provider=entry.source,
            occurred_at=entry.occurred_at,
            received_at=entry.received_at,
            detail=entry.detail or {},
        )


def history(entries: Sequence[Entry]) -> tuple[str | None, list[DeliveryEventPublic]]:
    """A job's ``delivery_status`` and ``events`` from its journal entries."""
    status = delivery_status(e.event_type for e in entries if e.event_type is not None)
    return (status.value if status else None), [DeliveryEventPublic.of(e) for e in entries]


class SuppressionCreate(Strict):
    channel: Literal["email", "sms"] = "email"
    address: Annotated[str, StringConstraints(min_length=3, max_length=320)]
    reason: Literal["manual", "hard_bounce", "complaint", "unsubscribed", "opted_out"] = "manual"

    @model_validator(mode="after")
    def _one_address(self) -> SuppressionCreate:
        # Strict, as a send's ``to`` (InvalidAddress and InvalidPhoneNumber are
        # ValueErrors: 422): an email address by its key, a phone number in E.164.
        self.address = entered_key(Channel(self.channel), self.address)
        return self


class SuppressionPublic(BaseModel):
    channel: str
    address: str
    reason: str
    source: str
    created_at: datetime

    @classmethod
    def of(cls, entry: Suppression) -> SuppressionPublic:
        return cls(
            channel=entry.channel.value,
            address=entry.address,
            reason=entry.reason,
            source=entry.source,
            created_at=entry.created_at,
        )


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


class EventReportRow(BaseModel):
    hour: datetime
    type: str
    count: int
    p95_lag_seconds: float | None
    errors: int

    @classmethod
    def of(cls, row: ReportRow) -> EventReportRow:
        return cls(
            hour=row.hour,
            type=row.type,
            count=row.count,
            p95_lag_seconds=row.p95_lag_seconds,
            errors=row.errors,
        )


class EventReport(Page[EventReportRow]):
    """The report as one page (it comes whole), with the hours it covers."""

    hours: int = Field(ge=1)
