"""Reconciliation reports over the inbound event journal."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from homing.api.deps import PrincipalDep, ServicesDep
from homing.api.schemas.delivery_events import EventReport, EventReportRow

router = APIRouter(tags=["reports"])


@router.get("/v1/reports/events", response_model=EventReport)
async def events_report(
    principal: PrincipalDep,
    services: ServicesDep,
    hours: Annotated[int, Query(ge=1, le=720)] = 24,
) -> EventReport:
    """Per UTC hour and event type: count, p95 lag (received - occurred), errors."""
    rows = await services.inbound.report(hours, principal.tenant.id)
    return EventReport(hours=hours, data=[EventReportRow.of(r) for r in rows])
