"""Bodies of multi-channel notifications (``POST /v1/notifications``,
docs/notifications.md): one template for one recipient, over several channels in the
order given, with a strategy.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from homing.api.schemas.shared import (
    CategoryKey,
    ExternalId,
    JsonObject,
    PriorityName,
    Strict,
    examples,
)
from homing.api.schemas.templates import Locale, TemplateRef
from homing.clock import as_datetime
from homing.domain.notification_rows import Gathered, Notification, Step

# The channels a recipient is reached on, in the order a tenant may list them.
NotificationChannel = Literal["in_app", "chat", "sms", "email"]
# A week: escalation is for now-ish news; a later one is another notification.
MAX_ESCALATE_AFTER_SECONDS = 7 * 86_400
# A digest's window: a minute to a week (docs/notifications.md, "Digests").
MIN_DIGEST_WINDOW_SECONDS = 60
MAX_DIGEST_WINDOW_SECONDS = 7 * 86_400
# A digest key: what a tenant names a kind of digest by ("comments"), safe anywhere.
DigestKey = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")
]
# A local wall-clock time, "HH:MM".
WallTime = Annotated[
    str, StringConstraints(min_length=5, max_length=5, pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
]


class DigestCreate(Strict):
    """Gather this notification with the recipient's others of the same ``key`` and
    send them once, when the window closes: ``window_seconds`` after the first, or
    daily ``at`` a local time in the recipient's time zone."""

    key: DigestKey
    window_seconds: (
        Annotated[
            int,
            Field(ge=MIN_DIGEST_WINDOW_SECONDS, le=MAX_DIGEST_WINDOW_SECONDS, strict=True),
        ]
        | None
    ) = None
    at: WallTime | None = None

    @model_validator(mode="after")
    def _one_close(self) -> DigestCreate:
        if (self.window_seconds is None) == (self.at is None):
            raise ValueError("a digest needs exactly one of 'window_seconds' and 'at'")
        return self


class NotificationsCreate(Strict):
    """One notification over several channels: ``all`` at once, the ``first`` that a
    provider accepts, or ``escalate`` to the next when no success signal arrives in
    time."""

    recipient: ExternalId
    template: TemplateRef
    data: JsonObject | None = None
    locale: Locale | None = None
    category: CategoryKey | None = None
    # Each at most once: four channels, so at most four steps.
    channels: list[NotificationChannel] = Field(min_length=1, max_length=4)
    strategy: Literal["all", "first", "escalate"]
    escalate_after_seconds: (
        Annotated[int, Field(ge=1, le=MAX_ESCALATE_AFTER_SECONDS, strict=True)] | None
    ) = None
    priority: PriorityName | None = None
    # The email's sender, needed when ``channels`` has email (a template has none).
    from_: Annotated[str, StringConstraints(min_length=3, max_length=400)] | None = Field(
        default=None, alias="from"
    )
    # Gather it into a digest rather than send it now.
    digest: DigestCreate | None = None

    model_config = ConfigDict(
        populate_by_name=True,
        json_schema_extra=examples(
            {
                "recipient": "user_42",
                "template": "order-shipped",
                "data": {"order_id": "o_123"},
                "channels": ["in_app", "email", "sms"],
                "strategy": "escalate",
                "escalate_after_seconds": 900,
                "from": "Acme <hello@acme.example>",
            }
        ),
    )

    @model_validator(mode="after")
    def _valid(self) -> NotificationsCreate:
        if len(set(self.channels)) != len(self.channels):
            raise ValueError("'channels' names a channel twice")
        if self.strategy == "escalate" and self.escalate_after_seconds is None:
            raise ValueError("'escalate' needs 'escalate_after_seconds'")
        if self.strategy != "escalate" and self.escalate_after_seconds is not None:
            raise ValueError("'escalate_after_seconds' is for the 'escalate' strategy only")
        if "email" in self.channels and self.from_ is None:
            raise ValueError("an email step needs 'from'")
        return self


class StepPublic(BaseModel):
    position: int
    channel: str
    # pending | queued | accepted | succeeded | failed | skipped | escalated |
    # unconfirmed | not_needed
    status: str
    # Why it was skipped, failed or ended so: unreachable, preference, no_signal…
    reason: str | None
    job_id: str | None
    job_status: str | None
    # The first success signal its job was reported with, even after it was escalated.
    signal: str | None
    signal_at: datetime | None
    updated_at: datetime


class DigestPublic(BaseModel):
    """The digest a notification was gathered into."""

    id: str
    key: str
    # open | sent | failed
    status: str
    # Why it was not sent: the refusal's code (template_error, unknown_recipient…).
    reason: str | None
    # When its window closes (open) or closed.
    close_at: datetime
    # This notification's place among its items, from 0.
    position: int
    # How many notifications it holds now.
    count: int
    # Once sent: the notification it was sent as, and that one's steps (its jobs).
    notification_id: str | None
    sent_at: datetime | None
    steps: list[StepPublic]


class NotificationPublic(BaseModel):
    id: str
    # running | succeeded | failed | unconfirmed | gathered (into ``digest``)
    status: str
    strategy: str
    escalate_after_seconds: int | None
    recipient: str
    template: str
    category: str | None
    created_at: datetime
    completed_at: datetime | None
    steps: list[StepPublic]
    # For a notification gathered into a digest: the digest, and once sent its jobs.
    digest: DigestPublic | None = None

    @classmethod
    def of(cls, note: Notification) -> NotificationPublic:
        return cls(
            id=note.id,
            status=note.status,
            strategy=note.strategy,
            escalate_after_seconds=note.escalate_after_seconds,
            recipient=note.recipient,
            template=note.template,
            category=note.category,
            created_at=note.created_at,
            completed_at=note.completed_at,
            steps=_steps(note.steps),
            digest=None if note.gathered is None else _digest(note.gathered),
        )


def _steps(steps: tuple[Step, ...]) -> list[StepPublic]:
    return [
        StepPublic(
            position=s.position,
            channel=s.channel,
            status=s.status,
            reason=s.reason,
            job_id=s.job_id,
            job_status=s.job_status,
            signal=s.signal,
            signal_at=s.signal_at,
            updated_at=s.updated_at,
        )
        for s in steps
    ]


def _digest(gathered: Gathered) -> DigestPublic:
    return DigestPublic(
        id=gathered.digest_id,
        key=gathered.key,
        status=gathered.status,
        reason=gathered.reason,
        close_at=as_datetime(gathered.close_at),
        position=gathered.position,
        count=gathered.count,
        notification_id=gathered.sent_as,
        sent_at=gathered.sent_at,
        steps=_steps(gathered.steps),
    )
