"""Bodies of the job routes: a job, its attempts and its summary in lists."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from homing.api.schemas.delivery_events import DeliveryEventPublic
from homing.api.schemas.shared import PriorityName, SendAt, Strict
from homing.channels import Channel
from homing.models import Attempt, Job

ScheduleReason = Literal["requested", "quiet_hours"]


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
    # The job's address: an email's mailbox, an SMS's number, a chat id (None: the
    # provider's own channel), a webhook's URL.
    to: str | None = None
    # When payload retention replaced the job's content (subject, bodies, payload).
    payload_scrubbed_at: datetime | None = None
    # An SMS job's message as sent: to, from, encoding, characters, segments.
    sms: dict[str, Any] | None = None
    # A job sent with a template: {id, key, version, locale}, the version and locale used.
    template: dict[str, Any] | None = None
    # When it is (or was) due, if not on acceptance, and why: "requested" (the send's
    # send_at, or PATCH /v1/jobs/{id}) or "quiet_hours" (docs/scheduling.md).
    send_at: datetime | None = None
    schedule_reason: ScheduleReason | None = None

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
            to=address_of(job),
            payload_scrubbed_at=job.payload_scrubbed_at,
            sms=sms_view(job),
            template=job.payload.get("template"),
            expires_at=job.expires_at,
            send_at=job.send_at,
            schedule_reason=job.schedule_reason,  # type: ignore[arg-type]
        )


_SMS_SHOWN = ("to", "from", "encoding", "characters", "segments")


def address_of(job: Job) -> str | None:
    """Where the job goes: its payload's ``url`` for a webhook, ``to`` otherwise."""
    value = job.payload.get("url" if job.channel is Channel.WEBHOOK else "to")
    return value if isinstance(value, str) and value else None


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
    send_at: datetime | None = None
    schedule_reason: ScheduleReason | None = None


class JobReschedule(Strict):
    """``PATCH /v1/jobs/{id}``: when the job is due instead (RFC 3339 with its offset,
    at most 30 days ahead; a moment past is now)."""

    send_at: SendAt
