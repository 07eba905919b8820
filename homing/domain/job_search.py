"""What a job search asks for; the SQL is ``homing.store.job_search``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from homing.channels import Channel
from homing.models import JobStatus


@dataclass(kw_only=True, frozen=True, slots=True)
class JobFilter:
    """What a job search asks for; every field that is set must match (AND).

    ``address`` is the comparison key of an address (``Mailbox.key``), ``since`` and
    ``until`` bound ``created_at`` (inclusive, exclusive), ``tenant_id`` None means every
    tenant (the operator's search), and ``test_only`` leaves live jobs out (a test key).
    """

    tenant_id: str | None = None
    address: str | None = None
    channel: Channel | None = None
    status: JobStatus | None = None
    since: datetime | None = None
    until: datetime | None = None
    idempotency_key: str | None = None
    test_only: bool = False
