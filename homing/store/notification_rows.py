"""What a multi-channel notification is made of, as values and rows: a step's plan
(the job it makes, kept in the step's ``spec`` until it is made), a new step's row, and
the notification and steps as read back (docs/notifications.md), with, for one gathered
into a digest, the digest as it stands (``Gathered``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.domain.feed import FeedContent
from homing.domain.notification_rows import Gathered, Notification, Step
from homing.domain.preferences import PreferenceCheck
from homing.errors import IdempotencyConflict, NotFound
from homing.models import DeliveryMode, Priority, Queue, Quota
from homing.store.accepting import AcceptCheck
from homing.store.flow_rules import PENDING, SKIPPED
from homing.store.tables.core import jobs
from homing.store.tables.notifications import (
    digest_items,
    digests,
    notification_steps,
    notifications,
)

__all__ = [
    "StepPlan",
    "notification_of",
    "plan_of",
    "prior_notification",
    "read",
    "spec_of",
    "step_row",
]


@dataclass(kw_only=True, frozen=True, slots=True)
class StepPlan:
    """One channel of a notification: the job it makes (and, in-app, the feed item),
    or why it was skipped at accept (``reason``: unreachable, no_template_part…).
    ``check`` (the sending-domain rule) applies only to a step made at accept."""

    tenant_id: str
    channel: Channel
    new: NewJob | None = None
    quotas: tuple[Quota, ...] = ()
    content: FeedContent | None = None
    reason: str | None = None
    check: AcceptCheck | None = None


def spec_of(plan: StepPlan) -> dict[str, Any]:
    """The JSON a pending step keeps of the job it will make."""
    new = plan.new
    assert new is not None
    preference = None if new.preference is None else asdict(new.preference)
    return {
        "queue": new.queue.value,
        "priority": int(new.priority),
        "payload": new.payload,
        "delivery": new.delivery.value,
        "ttl_seconds": new.ttl_seconds,
        "test": new.test,
        "address_key": new.address_key,
        "request_hash": new.request_hash,
        "preference": preference,
        "quotas": [[q.name, sorted(q.channels), q.limit] for q in plan.quotas],
        "content": None if plan.content is None else asdict(plan.content),
    }


def plan_of(step: Any) -> StepPlan:
    """The plan a pending step's row keeps (``spec_of`` read back)."""
    spec: dict[str, Any] = step.spec
    channel = Channel(step.channel)
    preference = spec["preference"]
    new = NewJob(
        tenant_id=step.tenant_id,
        channel=channel,
        queue=Queue(spec["queue"]),
        priority=Priority(spec["priority"]),
        payload=spec["payload"],
        delivery=DeliveryMode(spec["delivery"]),
        ttl_seconds=spec["ttl_seconds"],
        test=spec["test"],
        address_key=spec["address_key"],
        request_hash=spec["request_hash"],
        preference=None if preference is None else _preference(preference),
    )
    quotas = tuple(
        Quota(name, frozenset(Channel(c) for c in channels), limit)
        for name, channels, limit in spec["quotas"]
    )
    content = None if spec["content"] is None else FeedContent(**spec["content"])
    return StepPlan(
        tenant_id=step.tenant_id, channel=channel, new=new, quotas=quotas, content=content
    )


def _preference(kept: dict[str, Any]) -> PreferenceCheck:
    """A step's stored check (JSON keeps a tuple as a list; a step stored before the
    refs under previous keys were kept has none)."""
    fields = {name: value for name, value in kept.items() if name != "earlier_refs"}
    return PreferenceCheck(**fields, earlier_refs=tuple(kept.get("earlier_refs", ())))


def notification_of(
    note: Any, steps: Sequence[Any], gathered: Gathered | None = None
) -> Notification:
    """The notification of a ``notifications`` row and its steps' rows (each with its
    job's status as ``job_status``)."""
    return Notification(
        id=note.id,
        tenant_id=note.tenant_id,
        strategy=note.strategy,
        status=note.status,
        escalate_after_seconds=note.escalate_after_seconds,
        recipient=note.recipient,
        template=note.template,
        category=note.category,
        created_at=note.created_at,
        completed_at=note.completed_at,
        gathered=gathered,
        steps=_steps_of(steps),
    )


def _steps_of(steps: Sequence[Any]) -> tuple[Step, ...]:
    return tuple(
        Step(
            position=s.position,
            channel=s.channel,
            status=s.status,
            reason=s.reason,
            job_id=s.job_id,
            job_status=s.job_status,
            signal=s.signal,
            signal_at=s.signal_at,
            updated_at=s.updated_at,
            created_at=s.created_at,
        )
        for s in steps
    )


def step_row(notification_id: str, position: int, plan: StepPlan, now: Any) -> dict[str, Any]:
    """The ``notification_steps`` row of a new step: ``skipped`` with its reason, or
    ``pending`` with the job it will make."""
    skipped = plan.reason is not None
    return {
        "notification_id": notification_id,
        "position": position,
        "tenant_id": plan.tenant_id,
        "channel": plan.channel.value,
        "status": SKIPPED if skipped else PENDING,
        "reason": plan.reason,
        "job_id": None,
        "item_id": None,
        "spec": None if skipped else spec_of(plan),
        "due_at": None,
        "signal": None,
        "signal_at": None,
        "created_at": now,
        "updated_at": now,
    }


async def read(conn: AsyncConnection, tenant_id: str, notification_id: str) -> Notification:
    """The tenant's notification and its steps, each with its job's status; NotFound
    otherwise (another tenant's too)."""
    note = (
        await conn.execute(
            select(notifications).where(
                notifications.c.id == notification_id, notifications.c.tenant_id == tenant_id
            )
        )
    ).first()
    if note is None:
        raise NotFound("no notification has this id")
    steps = await _step_rows(conn, notification_id)
    gathered = None if note.digest_id is None else await _gathered(conn, note)
    return notification_of(note, steps, gathered)


async def _step_rows(conn: AsyncConnection, notification_id: str) -> Sequence[Any]:
    return (
        await conn.execute(
            select(notification_steps, jobs.c.status.label("job_status"))
            .outerjoin(jobs, jobs.c.id == notification_steps.c.job_id)
            .where(notification_steps.c.notification_id == notification_id)
            .order_by(notification_steps.c.position)
        )
    ).all()


async def _gathered(conn: AsyncConnection, note: Any) -> Gathered:
    """The digest ``note`` was gathered into, and what it was sent as."""
    query = (
        select(digests, digest_items.c.position)
        .join(digest_items, digest_items.c.digest_id == digests.c.id)
        .where(digests.c.id == note.digest_id, digest_items.c.notification_id == note.id)
    )
    row = (await conn.execute(query)).one()
    sent = () if row.notification_id is None else await _step_rows(conn, row.notification_id)
    return Gathered(
        digest_id=row.id,
        key=row.key,
        status=row.status,
        reason=row.reason,
        close_at=row.close_at,
        position=row.position,
        count=row.item_count,
        sent_as=row.notification_id,
        sent_at=row.sent_at,
        steps=_steps_of(sent),
    )


async def prior_notification(
    conn: AsyncConnection, tenant_id: str, idempotency_key: str | None, request_hash: str
) -> Notification | None:
    """The notification an earlier request with this Idempotency-Key stored; None for
    none (or no key); IdempotencyConflict when that request was another."""
    if idempotency_key is None:
        return None
    query = select(notifications.c.id, notifications.c.request_hash).where(
        notifications.c.tenant_id == tenant_id,
        notifications.c.idempotency_key == idempotency_key,
    )
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    if row.request_hash != request_hash:
        raise IdempotencyConflict(
            "this Idempotency-Key was already used with a different request",
            {"notification_id": row.id},
        )
    return await read(conn, tenant_id, row.id)
