"""A job to accept and what accepting it answered; the SQL that accepts is
``homing.store.accepting``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from homing.channels import Channel
from homing.domain.preferences import PreferenceCheck
from homing.models import DeliveryMode, Job, Priority, Queue


@dataclass(frozen=True, slots=True)
class Hold:
    """What quiet hours read of a send by recipient: the recipient's time zone and the
    category's window as stored (``homing.managers.scheduling`` decides; nothing of it
    is stored but the ``send_at`` it may choose)."""

    timezone: str
    quiet_hours: dict[str, str] | None = None


@dataclass(kw_only=True, frozen=True, slots=True)
class NewJob:
    """A validated job the store accepts: tenant, queue placement, payload and pins."""

    tenant_id: str
    channel: Channel
    queue: Queue
    priority: Priority
    payload: Mapping[str, Any]
    delivery: DeliveryMode = DeliveryMode.AT_LEAST_ONCE
    provider_pin: str | None = None
    fallback_pin: str | None = None
    idempotency_key: str | None = None
    request_hash: str | None = None
    test: bool = False
    ordering_key: str | None = None
    # Seconds from acceptance after which it is no longer worth delivering (None: never).
    ttl_seconds: int | None = None
    # Stored hashes that also mean this request (previous keys, the pre-HMAC form).
    request_aliases: frozenset[str] = field(default=frozenset(), repr=False)
    # Counted in the tenant's monthly usage; Homing's own notices to a tenant are not.
    metered: bool = True
    # The comparison key of the address it goes to, ``address_key_of(channel, payload)``,
    # when the caller read it already (the API, as it validated ``to``); worked out
    # here otherwise. Stored in the ``jobs.recipient`` column.
    address_key: str | None = None
    # Sent to a recipient in a category: its preferences are checked in the accepting
    # transaction (``homing.store.preferences.unwanted_rows``).
    preference: PreferenceCheck | None = None
    # Due at this epoch rather than on acceptance (never earlier than acceptance), and
    # why: ``requested`` or ``quiet_hours`` (docs/scheduling.md). Its ttl counts from it.
    send_at: float | None = None
    schedule_reason: str | None = None
    hold: Hold | None = None
    # The W3C traceparent of the span that accepts it (the API request's), set by the
    # accepting door from its ``trace`` reader; None while tracing is off
    # (homing.tracing, docs/tracing.md).
    traceparent: str | None = None


@dataclass(frozen=True, slots=True)
class Accepted:
    """An accepted job, and whether it was a replay of an earlier request with the same
    idempotency key."""

    job: Job
    replayed: bool
