"""Dead letters for console tests: a job accepted over the API, then failed in place."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import update

from homing.channels import Channel
from homing.clock import as_datetime
from homing.models import new_id
from homing.services import Services
from homing.store.tables.core import dead_letters, jobs, queue_entries
from tests.admission_helpers import send_email
from tests.conftest import TenantClient, stored_provider


async def dead_letter(
    services: Services,
    tenant: TenantClient,
    *,
    error: str = "provider answered 500",
    error_class: str = "provider_error",
    provider: str = "sandbox",
    at: datetime | None = None,
    payload: dict[str, Any] | None = None,
    to: str | None = None,
) -> str:
    """The id of a new dead letter of ``tenant`` whose job (to ``to``, when given) is
    FAILED (the tenant is given an email provider first when it has none: a send needs
    one to be accepted)."""
    if not await services.providers.all(tenant.tenant_id, Channel.EMAIL, enabled_only=True):
        await stored_provider(services, tenant.tenant_id)
    sent = await send_email(tenant, json={} if to is None else {"to": to})
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    now = at or as_datetime(services.clock.now())
    letter_id = new_id()
    async with services.db.transaction() as conn:
        await conn.execute(queue_entries.delete().where(queue_entries.c.job_id == job_id))
        await conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(status="FAILED", provider=provider, error=error, error_class=error_class)
        )
        await conn.execute(
            dead_letters.insert().values(
                id=letter_id,
                job_id=job_id,
                tenant_id=tenant.tenant_id,
                queue="notifications-email",
                payload=payload or {"subject": "Welcome"},
                error=error,
                error_class=error_class,
                created_at=now,
            )
        )
    return letter_id
