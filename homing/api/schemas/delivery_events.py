"""Bodies of delivery events: a job's history and the hourly event report."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from homing.api.schemas.shared import Page
from homing.domain.inbound import Entry
from homing.inbound.events import delivery_status
from homing.inbound.report import ReportRow


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
