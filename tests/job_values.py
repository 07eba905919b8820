"""A ``Job`` value for unit tests: every field at a plain value, the named ones changed
(a job being delivered: PROCESSING, one attempt made)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from homing.channels import Channel
from homing.models import DeliveryMode, Job, JobStatus, Priority, Queue

MOMENT = datetime(2026, 1, 1, tzinfo=UTC)


def a_job(**changes: Any) -> Job:
    plain = Job(
        id="j",
        tenant_id="t",
        channel=Channel.EMAIL,
        queue=Queue.EMAIL,
        status=JobStatus.PROCESSING,
        priority=Priority.NORMAL,
        payload={},
        delivery=DeliveryMode.AT_LEAST_ONCE,
        provider_pin=None,
        fallback_pin=None,
        idempotency_key=None,
        passes_made=1,
        skipped_providers=(),
        provider=None,
        provider_message_id=None,
        error=None,
        error_class=None,
        created_at=MOMENT,
        updated_at=MOMENT,
        completed_at=None,
    )
    return replace(plain, **changes)
