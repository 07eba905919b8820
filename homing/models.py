"""Frozen domain types shared by every layer. No I/O here."""

from __future__ import annotations

import enum
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


class Channel(enum.StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"
    SMS = "sms"
    CHAT = "chat"


class Priority(enum.IntEnum):
    """Lower value is served first; stored as the integer."""

    CRITICAL = 0
    NORMAL = 1
    LOW = 2


class Plan(enum.StrEnum):
    FREE = "FREE"
    INDIE = "INDIE"
    STARTUP = "STARTUP"


class JobStatus(enum.StrEnum):
    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    SUPPRESSED = "SUPPRESSED"


TERMINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.SUPPRESSED})


class DeliveryMode(enum.StrEnum):
    AT_LEAST_ONCE = "at_least_once"
    AT_MOST_ONCE = "at_most_once"


class FailureClass(enum.StrEnum):
    """How a provider failure is handled (DESIGN §3)."""

    TRANSIENT = "transient"
    THROTTLED = "throttled"
    PROVIDER_PERMANENT = "provider_permanent"
    MESSAGE_PERMANENT = "message_permanent"
    UNCERTAIN = "uncertain"


class AttemptOutcome(enum.StrEnum):
    """What one provider call came to, as recorded on an attempt row."""

    SUCCESS = "success"
    TRANSIENT = "transient"
    THROTTLED = "throttled"
    PROVIDER_PERMANENT = "provider_permanent"
    MESSAGE_PERMANENT = "message_permanent"
    UNCERTAIN = "uncertain"
    SKIPPED = "skipped"


class Queue(enum.StrEnum):
    EMAIL = "notifications-email"
    WEBHOOK = "notifications-webhook"
    SMS = "notifications-sms"
    CHAT = "notifications-chat"
    PLATFORM_EMAIL = "platform-email"


QUEUE_FOR_CHANNEL = {
    Channel.EMAIL: Queue.EMAIL,
    Channel.WEBHOOK: Queue.WEBHOOK,
    Channel.SMS: Queue.SMS,
    Channel.CHAT: Queue.CHAT,
}


_last_id = [0, 0]  # [millis, 12-bit sequence] of the previous id in this process


def new_id() -> str:
    """A time-ordered UUID (version 7 layout) as a string.

    Sorting ids sorts by creation time, which keeps cursor pagination and the
    primary-key index append-only. Within one millisecond the 12 ``rand_a`` bits
    count up (RFC 9562 §6.2, method 1), so ids made by one process are strictly
    increasing: attempts made in one pass list in the order they were made.
    """
    millis = time.time_ns() // 1_000_000
    last_millis, sequence = _last_id
    if millis <= last_millis:
        millis, sequence = last_millis, sequence + 1
        if sequence > 0xFFF:
            millis, sequence = millis + 1, 0
    else:
        sequence = int.from_bytes(os.urandom(2), "big") & 0x3FF
    _last_id[:] = [millis, sequence]
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = ((millis & ((1 << 48) - 1)) << 80) | (0x7 << 76) | (sequence << 64) | (0b10 << 62)
    return str(uuid.UUID(int=value | rand_b))


@dataclass(frozen=True, slots=True)
class Tenant:
    id: str
    name: str
    plan: Plan
    suspended: bool
    created_at: datetime
    # Custom limits that override the plan's (homing.plans): requests a minute, and
    # monthly quotas by quota name ("webhook", "email+webhook"; None lifts a quota).
    rate_limit_per_minute: int | None = None
    quota_overrides: dict[str, int | None] | None = None


@dataclass(frozen=True, slots=True)
class ProviderAccount:
    """A tenant's registered provider. ``credentials_sealed`` is ciphertext."""

    id: str
    tenant_id: str
    channel: Channel
    provider: str
    priority: int
    enabled: bool
    credentials_sealed: str
    credentials_preview: str
    config: dict[str, Any]
    created_at: datetime


def resolve_pin(pin: str | None, accounts: Sequence[ProviderAccount]) -> ProviderAccount | None:
    """A pin names an account by id, or by provider name (the first in priority order)."""
    if pin is None:
        return None
    for account in accounts:
        if account.id == pin:
            return account
    return next((a for a in accounts if a.provider == pin), None)


@dataclass(frozen=True, slots=True)
class EmailContent:
    to: str
    from_: str
    subject: str
    text: str | None = None
    html: str | None = None


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    tenant_id: str
    channel: Channel
    queue: Queue
    status: JobStatus
    priority: Priority
    payload: dict[str, Any]
    delivery: DeliveryMode
    provider_pin: str | None
    fallback_pin: str | None
    idempotency_key: str | None
    attempts_made: int
    skipped_providers: tuple[str, ...]
    provider: str | None
    provider_message_id: str | None
    error: str | None
    error_class: str | None
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    # Accepted with a test API key: only a sandbox provider may receive it.
    test: bool = False
    # Jobs of one tenant with the same key are delivered one at a time, in order.
    ordering_key: str | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One provider call. ``number`` is the pass (1..max_attempts) it belongs to."""

    job_id: str
    tenant_id: str
    number: int
    provider_account_id: str | None
    provider: str
    outcome: AttemptOutcome
    status_code: int | None
    error: str | None
    started_at: datetime
    duration_ms: int
    response_excerpt: str | None = None
    id: str = field(default_factory=new_id)


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job a worker holds under lease; ``claim_token`` proves the lease."""

    job: Job
    claim_token: str
    attempt_number: int
    deferred_seconds: float
    provider_calls: int = 0
