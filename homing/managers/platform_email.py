"""Platform email: Homing's own mail (notices to tenants, operator alerts).

Homing sends its own mail as jobs of one tenant the operator names,
``HOMING_PLATFORM_TENANT_ID``: the operator creates it like any tenant (``homing tenant
create``) and registers its email providers through ``/v1/providers`` with its key.
So the platform's providers are sealed, checked, paced and fallen back across exactly
as a tenant's are, and every mail Homing sends is a job with attempts, a dead letter
when it fails, and ``GET /v1/jobs`` for the platform tenant as its log. The jobs go on
the ``platform-email`` queue, always CRITICAL with the shorter backoff
(``HOMING_PLATFORM_RETRY_*``), so they are claimed before tenants' traffic and never
wait behind it; a platform email that fails fails on its own and blocks nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.errors import HomingError
from homing.models import EmailPayload, Job, Priority, Queue
from homing.store.jobs import JobStore

__all__ = ["PlatformEmail"]

log = logging.getLogger("homing.platform")

# Homing writes these; the bounds keep a tenant's data from making one mail large.
MAX_SUBJECT = 200
MAX_TEXT = 20_000


class PlatformEmail:
    """Queues Homing's own mail for the platform tenant's providers to send.

    Disabled (``send`` returns None) when the operator set no platform tenant or no
    sender address. ``wake`` wakes the workers after a job is accepted."""

    def __init__(
        self,
        jobs: JobStore,
        tenant_id: str | None,
        sender: str | None,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self._jobs = jobs
        self._tenant_id = tenant_id
        self._sender = sender
        self._wake = wake

    @property
    def enabled(self) -> bool:
        return self._tenant_id is not None and self._sender is not None

    async def send(self, to: str, subject: str, text: str, idempotency_key: str) -> Job | None:
        """Queue one mail (once per ``idempotency_key``); None when platform email is
        off or the job could not be stored (logged: Homing's mail never fails a caller)."""
        if self._tenant_id is None or self._sender is None:
            return None
        payload: EmailPayload = {
            "to": to,
            "from": self._sender,
            "subject": subject[:MAX_SUBJECT],
            "text": text[:MAX_TEXT],
            "html": None,
        }
        new = NewJob(
            tenant_id=self._tenant_id,
            channel=Channel.EMAIL,
            queue=Queue.PLATFORM_EMAIL,
            priority=Priority.CRITICAL,
            payload=payload,
            idempotency_key=idempotency_key,
        )
        try:
            accepted = await self._jobs.accept(new)
        except HomingError as exc:
            log.error("platform email not queued", extra={"error": type(exc).__name__})
            return None
        if not accepted.replayed:
            self._wake()
        return accepted.job
