"""A tenant's outbound signing secret: generate, inspect, rotate, delete
(docs/architecture.md, "Secrets", "Webhooks out").

Secrets are sealed with AES-256-GCM bound to their row and field. The plaintext
exists only in the response that issues it (shown once) and, per delivery, in
``open_all`` right before signing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from homing.clock import Clock, as_datetime
from homing.crypto import Sealer, mask
from homing.domain.audit import AuditEvent
from homing.errors import NotFound
from homing.models import new_id
from homing.store.webhooks import (
    SECRET_FIELD,
    WEBHOOK_SECRETS_TABLE,
    SecretRecord,
    WebhookStore,
)
from homing.webhooks.signing import generate_secret


@dataclass(frozen=True, slots=True)
class IssuedSecret:
    """A newly generated secret: the only time its plaintext leaves Homing."""

    secret: str = field(repr=False)
    preview: str
    created_at: datetime
    previous_expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SecretStatus:
    """What a tenant may see of its webhook secret: masked previews and times."""

    configured: bool
    preview: str | None = None
    created_at: datetime | None = None
    previous_preview: str | None = None
    previous_expires_at: datetime | None = None


class WebhookSecrets:
    """Tenants' webhook signing secrets: create, rotate with an overlap window, show
    masked, open to sign."""

    def __init__(
        self, store: WebhookStore, sealer: Sealer, clock: Clock, overlap_seconds: float
    ) -> None:
        self._store = store
        self._sealer = sealer
        self._clock = clock
        self._overlap = overlap_seconds

    def _new_record(self, tenant_id: str) -> tuple[SecretRecord, str]:
        secret = generate_secret()
        record_id = new_id()
        sealed = self._sealer.seal(
            secret.encode(), table=WEBHOOK_SECRETS_TABLE, row_id=record_id, field=SECRET_FIELD
        )
        record = SecretRecord(
            id=record_id,
            tenant_id=tenant_id,
            sealed=sealed,
            preview=mask(secret),
            created_at=as_datetime(self._clock.now()),
        )
        return record, secret

    async def create(self, tenant_id: str, audit: AuditEvent | None = None) -> IssuedSecret:
        """Generate the tenant's secret (recording ``audit``); Conflict when one exists
        (rotate it instead)."""
        record, secret = self._new_record(tenant_id)
        await self._store.add_current(record, audit)
        return IssuedSecret(secret, record.preview, record.created_at)

    async def rotate(self, tenant_id: str, audit: AuditEvent | None = None) -> IssuedSecret:
        """Replace the current secret; the old one signs beside it for the overlap."""
        record, secret = self._new_record(tenant_id)
        until = as_datetime(self._clock.now() + self._overlap)
        await self._store.rotate(record, until, audit)
        return IssuedSecret(secret, record.preview, record.created_at, until)

    async def status(self, tenant_id: str) -> SecretStatus:
        records = await self._store.secrets(tenant_id)
        current = next((r for r in records if r.expires_at is None), None)
        if current is None:
            return SecretStatus(configured=False)
        previous = next((r for r in records if r.expires_at is not None), None)
        return SecretStatus(
            configured=True,
            preview=current.preview,
            created_at=current.created_at,
            previous_preview=previous.preview if previous else None,
            previous_expires_at=previous.expires_at if previous else None,
        )

    async def delete(self, tenant_id: str, audit: AuditEvent | None = None) -> None:
        """Delete every secret of the tenant; later deliveries go unsigned."""
        if await self._store.delete_secrets(tenant_id, audit) == 0:
            raise NotFound("no webhook secret is configured")

    def open_all(self, records: Sequence[SecretRecord]) -> list[str]:
        """The plaintext of each record, in order, for signing one delivery."""
        return [
            self._sealer.open(
                r.sealed, table=WEBHOOK_SECRETS_TABLE, row_id=r.id, field=SECRET_FIELD
            ).decode()
            for r in records
        ]
