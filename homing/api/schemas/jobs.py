"""Bodies of the job routes: a job, its attempts and its summary in lists."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from homing.api.schemas.delivery_events import DeliveryEventPublic
from homing.api.schemas.shared import PriorityName
from homing.models import Attempt, Channel, Job


class AttemptPublic(BaseModel):
    number: int
    provider: str
    outcome: str
    status_code: int | None
    error: str | None
    started_at: datetime
    duration_ms: int
    response_excerpt: str | None = None

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptPublic:
        return cls(
            number=attempt.number,
            provider=attempt.provider,
            outcome=attempt.outcome.value,
            status_code=attempt.status_code,
            error=attempt.error,
            started_at=attempt.started_at,
            duration_ms=attempt.duration_ms,
            response_excerpt=attempt.response_excerpt,
        )


class JobPublic(BaseModel):
    id: str
    channel: str
    status: str
    priority: PriorityName
    provider: str | None
    error: str | None
    error_class: str | None
    attempts: list[AttemptPublic]
    created_at: datetime
    completed_at: datetime | None
    expires_at: datetime | None = None
    # Provider events after the send (homing.api.schemas.delivery_events.history).
    delivery_status: str | None = None
    events: list[DeliveryEventPublic] = Field(default_factory=list)
    # An SMS job's message as sent: to, from, encoding, characters, segments.
    sms: dict[str, Any] | None = None
    # A job sent with a template: {id, key, version, locale}, the version and locale used.
    template: dict[str, Any] | None = None

    @classmethod
    def of(cls, job: Job, attempts: list[Attempt]) -> JobPublic:
        return cls(
            id=job.id,
            channel=job.channel.value,
            status=job.status.value,
            priority=job.priority.name,  # type: ignore[arg-type]
            provider=job.provider,
            error=job.error,
            error_class=job.error_class,
            attempts=[AttemptPublic.of(a) for a in attempts],
            created_at=job.created_at,
            completed_at=job.completed_at,
            sms=sms_view(job),
            template=job.payload.get("template"),
            expires_at=job.expires_at,
        )


_SMS_SHOWN = ("to", "from", "encoding", "characters", "segments")


def sms_view(job: Job) -> dict[str, Any] | None:
    """What an SMS job shows of its payload: never the text itself, only its cost."""
    if job.channel is not Channel.SMS:
        return None
    return {key: job.payload.get(key) for key in _SMS_SHOWN}


class JobSummary(BaseModel):
    id: str
    channel: str
    status: str
    provider: str | None
    error: str | None
    created_at: datetime
    completed_at: datetime | None
