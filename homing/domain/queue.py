"""What a worker did with a claimed job, as the queue records it (docs/architecture.md,
"The queue"); the SQL is ``homing.store.queue``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from homing.models import Attempt


@dataclass(kw_only=True, frozen=True, slots=True)
class Completed:
    """The outcome of a job a provider accepted, applied under its claim token."""

    job_id: str
    claim_token: str
    attempts: Sequence[Attempt]
    provider: str
    provider_message_id: str | None
    passes_made: int


@dataclass(kw_only=True, frozen=True, slots=True)
class Rescheduled:
    """Back on the queue at ``available_at``; ``refund`` gives the claim's pass back."""

    job_id: str
    claim_token: str
    attempts: Sequence[Attempt]
    available_at: float
    passes_made: int
    error: str | None
    error_class: str | None
    skipped_providers: Sequence[str] = ()
    refund: bool = False
    deferred_seconds: float = 0.0
    provider_calls: int = 0  # made by this pass; added to the entry's count


@dataclass(kw_only=True, frozen=True, slots=True)
class Failed:
    """The outcome of a failed pass (retry, deferral or dead letter), applied under its
    claim token."""

    job_id: str
    claim_token: str
    attempts: Sequence[Attempt]
    passes_made: int
    error: str
    error_class: str
    skipped_providers: Sequence[str] = ()
    # The provider refused the recipient for good (Twilio 21610, opted out): suppress
    # them for the tenant, with this reason, in the same transaction.
    suppress: str | None = None


Outcome = Completed | Rescheduled | Failed


@dataclass(slots=True)
class Applied:
    """What a batch of outcomes did: dead-lettered jobs and lost leases."""

    dead_lettered: list[tuple[str, str, str]] = field(default_factory=list)
    lost_leases: list[str] = field(default_factory=list)
