"""Notices to tenants: what Homing tells a tenant because the tenant owns the fix.

A notice is recorded once per event (``NoticeStore.record``: unique on tenant, kind and
event key) and then goes two ways, each optional, both tenant settings
(``/v1/settings``):

- an operational webhook to ``operations_url``: a webhook job of the tenant's own, in
  the Standard Webhooks format (``{"type", "timestamp", "data"}``), signed with the
  tenant's webhook secret like every webhook Homing delivers for it;
- an email to ``contact_email``, by platform email (``homing.managers.platform_email``).

Both jobs carry the idempotency key ``notice:<id>[:email]``, so even a second delivery
of one notice would be answered from the first job. A tenant past
``HOMING_NOTICE_MAX_PER_HOUR`` notices in an hour gets the rest held: recorded, not
sent, and counted in its next daily digest, so no tenant can make Homing flood
anyone's inbox or crowd another tenant's notices out of the platform-email queue.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from homing.channels import Channel
from homing.clock import Clock, as_datetime
from homing.crypto import Sealer
from homing.domain.accepting import NewJob
from homing.errors import HomingError
from homing.managers.platform_email import PlatformEmail
from homing.metrics import NOTICES
from homing.models import Priority, Queue
from homing.store.jobs import JobStore
from homing.store.notices import Notice, NoticeStore
from homing.store.tenant_settings import TenantSettingsStore
from homing.webhooks.message import write_message

__all__ = ["NoticeKind", "Notices", "notice_body"]

log = logging.getLogger("homing.notices")

# An event key is the tenant's object the notice is about (an account id, a URL's hash,
# a month); bounded by its column.
MAX_EVENT_KEY = 200


class NoticeKind(enum.StrEnum):
    """The event types of operational webhooks (``type`` in the body)."""

    CREDENTIALS_REJECTED = "provider.credentials_rejected"
    ENDPOINT_DISABLED = "endpoint.disabled"
    DOMAIN_VERIFIED = "domain.verified"
    DOMAIN_FAILED = "domain.failed"
    QUOTA_WARNING = "quota.warning"
    QUOTA_EXHAUSTED = "quota.exhausted"
    DEAD_LETTER_DIGEST = "message.dead_lettered"


_SUBJECTS: Mapping[NoticeKind, str] = {
    NoticeKind.CREDENTIALS_REJECTED: "A provider rejects your credentials",
    NoticeKind.ENDPOINT_DISABLED: "A webhook URL is gone and disabled",
    NoticeKind.DOMAIN_VERIFIED: "Your sending domain is verified",
    NoticeKind.DOMAIN_FAILED: "Your sending domain failed verification",
    NoticeKind.QUOTA_WARNING: "80% of a monthly quota is used",
    NoticeKind.QUOTA_EXHAUSTED: "A monthly quota is used up",
    NoticeKind.DEAD_LETTER_DIGEST: "Jobs dead-lettered yesterday",
}


def notice_body(notice: Notice) -> bytes:
    """The operational webhook's body: Standard Webhooks' ``type``, ``timestamp`` and
    ``data`` (the notice's id included, for receivers that keep their own log)."""
    timestamp = notice.created_at.isoformat().replace("+00:00", "Z")
    data = {"notice_id": notice.id, **notice.data}
    return orjson.dumps({"type": notice.kind, "timestamp": timestamp, "data": data})


def _email_text(notice: Notice) -> str:
    lines = [_SUBJECTS[NoticeKind(notice.kind)] + ".", ""]
    lines += [f"{key}: {value}" for key, value in notice.data.items()]
    lines += ["", f"Event: {notice.kind} (notice {notice.id})"]
    return "\n".join(lines)


class Notices:
    """Records notices once and queues their webhook and email."""

    def __init__(
        self,
        store: NoticeStore,
        settings: TenantSettingsStore,
        jobs: JobStore,
        platform: PlatformEmail,
        sealer: Sealer,
        clock: Clock,
        *,
        max_per_hour: int,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._jobs = jobs
        self._platform = platform
        self._sealer = sealer
        self._clock = clock
        self._max_per_hour = max_per_hour
        self._wake = wake

    @property
    def store(self) -> NoticeStore:
        return self._store

    async def notify(
        self, tenant_id: str, kind: NoticeKind, event_key: str, data: Mapping[str, Any]
    ) -> Notice | None:
        """Tell the tenant, once per (kind, event key); None when told before. Never
        raises for a failure to queue: the caller is a worker or a request of the
        tenant's, which must go on (the failure is logged)."""
        try:
            notice = await self._store.record(
                tenant_id, kind.value, event_key[:MAX_EVENT_KEY], data, self._max_per_hour
            )
            if notice is None:
                NOTICES.labels(kind=kind.value, result="duplicate").inc()
                return None
            if notice.held:
                NOTICES.labels(kind=kind.value, result="held").inc()
                log.warning("notice held: hourly bound reached", extra={"kind": kind.value})
                return notice
            await self._deliver(notice)
            NOTICES.labels(kind=kind.value, result="sent").inc()
        except HomingError as exc:
            log.error("notice not queued", extra={"kind": kind.value, "error": type(exc).__name__})
            return None
        return notice

    async def _deliver(self, notice: Notice) -> None:
        settings = await self._settings.get(notice.tenant_id)
        if settings.operations_url is not None:
            payload = write_message(
                self._sealer,
                notice.tenant_id,
                settings.operations_url,
                notice_body(notice),
                {},
                notice.kind,
            )
            new = NewJob(
                tenant_id=notice.tenant_id,
                channel=Channel.WEBHOOK,
                queue=Queue.WEBHOOK,
                priority=Priority.NORMAL,
                payload=payload,
                idempotency_key=f"notice:{notice.id}",
                metered=False,  # Homing's notice: not the tenant's usage
            )
            await self._jobs.accept(new)
            self._wake()
        if settings.contact_email is not None:
            subject = f"Homing: {_SUBJECTS[NoticeKind(notice.kind)]}"
            await self._platform.send(
                settings.contact_email, subject, _email_text(notice), f"notice:{notice.id}:email"
            )

    def today(self) -> str:
        """The UTC date now, as an event key of daily notices."""
        return as_datetime(self._clock.now()).date().isoformat()
