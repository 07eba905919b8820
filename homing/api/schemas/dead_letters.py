"""Bodies and answers of the dead-letter console (``/v1`` and ``/admin/v1``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, model_validator

from homing.api.schemas.jobs import AttemptPublic
from homing.api.schemas.shared import Moment, Strict
from homing.domain.dead_letters import DeadLetter, DeadLetterFilter
from homing.managers.dead_letters import MAX_IDS, BulkResult
from homing.models import Attempt

# The longest text ``q`` may search for: the filter is a substring match.
MAX_Q = 200


class FilterBody(Strict):
    """The filter of a bulk operation: the list's query names."""

    tenant_id: str | None = Field(default=None, max_length=36)
    queue: str | None = Field(default=None, max_length=40)
    error_class: str | None = Field(default=None, max_length=40)
    provider: str | None = Field(default=None, max_length=40)
    since: Moment | None = None
    until: Moment | None = None
    q: str | None = Field(default=None, min_length=1, max_length=MAX_Q)


class BulkBody(Strict):
    """``filter`` and/or ``ids``; an empty filter without ids needs ``all: true``."""

    filter: FilterBody = Field(default_factory=FilterBody)
    ids: list[str] | None = Field(default=None, min_length=1, max_length=MAX_IDS)
    dry_run: bool = False
    all: bool = False

    @model_validator(mode="after")
    def _narrowed(self) -> BulkBody:
        f = self.filter
        fields = (f.tenant_id, f.queue, f.error_class, f.provider, f.since, f.until, f.q)
        if self.ids is None and not self.all and all(v is None for v in fields):
            raise ValueError("give a filter or ids, or all: true to act on every dead letter")
        if self.ids is not None and any(len(i) > 36 for i in self.ids):
            raise ValueError("an id is at most 36 characters")
        return self

    def to_filter(self, tenant_id: str | None) -> DeadLetterFilter:
        """The store's filter, narrowed to ``tenant_id`` when given (a tenant's own)."""
        f = self.filter
        return DeadLetterFilter(
            tenant_id=tenant_id if tenant_id is not None else f.tenant_id,
            queue=f.queue,
            error_class=f.error_class,
            provider=f.provider,
            since=f.since,
            until=f.until,
            q=f.q,
        )


class DeadLetterPublic(BaseModel):
    """One dead letter in a list."""

    id: str
    job_id: str
    tenant_id: str
    queue: str
    error: str
    error_class: str
    provider: str | None
    created_at: datetime
    redriven_at: datetime | None

    @classmethod
    def of(cls, d: DeadLetter) -> DeadLetterPublic:
        return cls(
            id=d.id,
            job_id=d.job_id,
            tenant_id=d.tenant_id,
            queue=d.queue,
            error=d.error,
            error_class=d.error_class,
            provider=d.provider,
            created_at=d.created_at,
            redriven_at=d.redriven_at,
        )


def masked(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with sealed webhook headers replaced by a marker: never opened here."""
    shown = dict(payload)
    if shown.get("headers_sealed"):
        shown["headers_sealed"] = "[sealed]"
    return shown


class DeadLetterDetail(DeadLetterPublic):
    """One dead letter with its payload (secrets still sealed) and every attempt."""

    payload: dict[str, Any]
    attempts: list[AttemptPublic]

    @classmethod
    def full(cls, d: DeadLetter, attempts: list[Attempt]) -> DeadLetterDetail:
        return cls(
            **DeadLetterPublic.of(d).model_dump(),
            payload=masked(d.payload),
            attempts=[AttemptPublic.of(a) for a in attempts],
        )


class Redriven(BaseModel):
    matched: int
    redriven: int
    refused: int
    uncertain: int = Field(
        default=0,
        description=(
            "How many of the matched dead letters ended `uncertain`: their last call may"
            " have reached the provider, so redriving them may deliver a second copy."
            " Counted by a dry run too, to ask before redriving."
        ),
    )

    @classmethod
    def of(cls, result: BulkResult) -> Redriven:
        return cls(
            matched=result.matched,
            redriven=result.done,
            refused=result.refused,
            uncertain=result.uncertain,
        )


class Purged(BaseModel):
    matched: int
    purged: int
