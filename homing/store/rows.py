"""Row ↔ domain object mapping shared by the stores."""

from __future__ import annotations

from typing import Any

from homing.channels import Channel
from homing.models import Attempt, AttemptOutcome, DeliveryMode, Job, JobStatus, Priority, Queue


def job_from_row(row: Any) -> Job:
    return Job(
        id=row.id,
        tenant_id=row.tenant_id,
        channel=Channel(row.channel),
        queue=Queue(row.queue),
        status=JobStatus(row.status),
        priority=Priority(row.priority),
        payload=dict(row.payload),
        delivery=DeliveryMode(row.delivery),
        provider_pin=row.provider_pin,
        fallback_pin=row.fallback_pin,
        idempotency_key=row.idempotency_key,
        passes_made=row.attempts_made,
        skipped_providers=tuple(row.skipped_providers),
        provider=row.provider,
        provider_message_id=row.provider_message_id,
        error=row.error,
        error_class=row.error_class,
        created_at=row.created_at,
        updated_at=row.updated_at,
        completed_at=row.completed_at,
        test=bool(row.test),
        ordering_key=row.ordering_key,
        expires_at=row.expires_at,
        send_at=row.send_at,
        schedule_reason=row.schedule_reason,
        traceparent=row.traceparent,
    )


def attempt_from_row(row: Any) -> Attempt:
    return Attempt(
        id=row.id,
        job_id=row.job_id,
        tenant_id=row.tenant_id,
        number=row.number,
        provider_account_id=row.provider_account_id,
        provider=row.provider,
        outcome=AttemptOutcome(row.outcome),
        status_code=row.status_code,
        error=row.error,
        started_at=row.started_at,
        duration_ms=row.duration_ms,
        response_excerpt=row.response_excerpt,
    )


def attempt_to_row(attempt: Attempt) -> dict[str, Any]:
    return {
        "id": attempt.id,
        "job_id": attempt.job_id,
        "tenant_id": attempt.tenant_id,
        "number": attempt.number,
        "provider_account_id": attempt.provider_account_id,
        "provider": attempt.provider,
        "outcome": attempt.outcome.value,
        "status_code": attempt.status_code,
        "error": attempt.error,
        "started_at": attempt.started_at,
        "duration_ms": attempt.duration_ms,
        "response_excerpt": attempt.response_excerpt,
    }
