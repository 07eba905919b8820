"""Outbound webhook state: tenants' sealed signing secrets and gone endpoint URLs.

A tenant keeps at most ``HOMING_MAX_GONE_ENDPOINTS_PER_TENANT`` gone marks: a mark is
made by a receiver's 410, not asked for, so the bound drops the oldest marks rather
than refusing one. A job to a dropped URL is tried again, and marked again if the URL
still answers 410; the list of them stays one bounded page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, exists, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent
from homing.domain.tenant_settings import TenantSettings
from homing.errors import Conflict, NotFound
from homing.store.audit import write_event
from homing.store.database import Database
from homing.store.tables.core import webhook_gone_endpoints, webhook_secrets
from homing.store.tenant_settings import settings_columns, settings_of

WEBHOOK_SECRETS_TABLE = "webhook_secrets"
SECRET_FIELD = "secret"


@dataclass(kw_only=True, frozen=True, slots=True)
class SecretRecord:
    """One stored secret; ``sealed`` is ciphertext, ``expires_at`` None = current."""

    id: str
    tenant_id: str
    sealed: str
    preview: str
    created_at: datetime
    expires_at: datetime | None = None

    def __repr__(self) -> str:
        return f"SecretRecord(id={self.id!r}, preview={self.preview!r})"


@dataclass(frozen=True, slots=True)
class GoneEndpoint:
    """A webhook URL that answered 410 Gone and is no longer called."""

    url: str
    job_id: str
    gone_at: datetime


@dataclass(frozen=True, slots=True)
class DeliveryContext:
    """What a delivery needs from the database, read in one short transaction."""

    secrets: Sequence[SecretRecord]
    gone: bool
    settings: TenantSettings = field(default_factory=TenantSettings)


def url_hash(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _record(row: Any) -> SecretRecord:
    return SecretRecord(
        id=row.id,
        tenant_id=row.tenant_id,
        sealed=row.secret_sealed,
        preview=row.preview,
        created_at=row.created_at,
        expires_at=row.expires_at,
    )


def _secret_row(record: SecretRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "tenant_id": record.tenant_id,
        "secret_sealed": record.sealed,
        "preview": record.preview,
        "created_at": record.created_at,
        "expires_at": record.expires_at,
    }


class WebhookStore:
    """The SQL of webhook signing secrets and gone endpoints."""

    def __init__(self, db: Database, clock: Clock, *, most_gone: int) -> None:
        """``most_gone``: how many gone marks a tenant keeps (the newest)."""
        self._db = db
        self._clock = clock
        self._most_gone = most_gone

    async def secrets(self, tenant_id: str) -> list[SecretRecord]:
        """The secrets that sign now: the current one first, then one still overlapping."""
        async with self._db.transaction() as conn:
            return await self._live_secrets(conn, tenant_id)

    async def _live_secrets(self, conn: AsyncConnection, tenant_id: str) -> list[SecretRecord]:
        now = as_datetime(self._clock.now())
        query = (
            select(webhook_secrets)
            .where(
                webhook_secrets.c.tenant_id == tenant_id,
                or_(webhook_secrets.c.expires_at.is_(None), webhook_secrets.c.expires_at > now),
            )
            .order_by(webhook_secrets.c.created_at.desc(), webhook_secrets.c.id.desc())
        )
        rows = (await conn.execute(query)).all()
        return sorted((_record(r) for r in rows), key=lambda r: r.expires_at is not None)

    async def add_current(self, record: SecretRecord, audit: AuditEvent | None = None) -> None:
        """Store a tenant's first current secret (and ``audit``); Conflict if one exists."""
        try:
            async with self._db.transaction() as conn:
                await conn.execute(insert(webhook_secrets).values(**_secret_row(record)))
                await write_event(conn, audit)
        except IntegrityError:
            raise Conflict(
                "a webhook secret exists already; rotate or delete it",
                {"hint": "POST /v1/webhook-secret/rotate"},
            ) from None

    async def rotate(
        self, record: SecretRecord, previous_until: datetime, audit: AuditEvent | None = None
    ) -> None:
        """Make ``record`` current; the old current signs on until ``previous_until``.

        A secret still overlapping from an earlier rotation stops signing now, so at
        most two secrets ever sign. NotFound when the tenant has no secret.
        """
        try:
            async with self._db.transaction() as conn:
                await conn.execute(
                    delete(webhook_secrets).where(
                        webhook_secrets.c.tenant_id == record.tenant_id,
                        webhook_secrets.c.expires_at.is_not(None),
                    )
                )
                result = await conn.execute(
                    update(webhook_secrets)
                    .where(
                        webhook_secrets.c.tenant_id == record.tenant_id,
                        webhook_secrets.c.expires_at.is_(None),
                    )
                    .values(expires_at=previous_until)
                )
                if result.rowcount == 0:
                    raise NotFound("no webhook secret to rotate; create one first")
                await conn.execute(insert(webhook_secrets).values(**_secret_row(record)))
                await write_event(conn, audit)
        except IntegrityError:
            raise Conflict("the webhook secret was rotated concurrently; try again") from None

    async def delete_secrets(self, tenant_id: str, audit: AuditEvent | None = None) -> int:
        """Remove every secret of the tenant (deliveries go unsigned); how many went.
        ``audit`` is recorded when there were any."""
        async with self._db.transaction() as conn:
            result = await conn.execute(
                delete(webhook_secrets).where(webhook_secrets.c.tenant_id == tenant_id)
            )
            if result.rowcount:
                await write_event(conn, audit)
        return int(result.rowcount)

    async def delivery_context(self, tenant_id: str, url: str) -> DeliveryContext:
        """The live secrets, whether ``url`` is marked gone and the tenant's settings
        (the signature format), in one transaction."""
        gone_query = select(webhook_gone_endpoints.c.url_hash).where(
            webhook_gone_endpoints.c.tenant_id == tenant_id,
            webhook_gone_endpoints.c.url_hash == url_hash(url),
        )
        # The gone flag and the settings in one statement: no extra round trip.
        flags = select(exists(gone_query).label("gone"), *settings_columns(tenant_id))
        async with self._db.transaction() as conn:
            records = await self._live_secrets(conn, tenant_id)
            row = (await conn.execute(flags)).one()
        return DeliveryContext(secrets=records, gone=bool(row.gone), settings=settings_of(row))

    async def mark_gone(self, tenant_id: str, url: str, job_id: str) -> None:
        """Remember that ``url`` answered 410; the first mark is kept. The tenant's
        oldest other marks beyond ``most_gone`` are dropped in the same transaction (two
        marks at once on PostgreSQL may each miss the other's insert: the next mark
        drops the extra)."""
        dialect = sqlite if self._db.is_sqlite else postgresql
        marked = url_hash(url)
        statement = (
            dialect.insert(webhook_gone_endpoints)
            .values(
                tenant_id=tenant_id,
                url_hash=marked,
                url=url,
                job_id=job_id,
                gone_at=as_datetime(self._clock.now()),
            )
            .on_conflict_do_nothing()
        )
        # This mark stays, with the newest others up to the bound (a tie in time must
        # not drop the mark just made).
        g = webhook_gone_endpoints.c
        others = (g.tenant_id == tenant_id, g.url_hash != marked)
        kept = (
            select(g.url_hash)
            .where(*others)
            .order_by(g.gone_at.desc(), g.url_hash)
            .limit(self._most_gone - 1)
        )
        beyond = delete(webhook_gone_endpoints).where(*others, g.url_hash.not_in(kept))
        async with self._db.transaction() as conn:
            await conn.execute(statement)
            await conn.execute(beyond)

    async def gone(self, tenant_id: str) -> list[GoneEndpoint]:
        query = (
            select(webhook_gone_endpoints)
            .where(webhook_gone_endpoints.c.tenant_id == tenant_id)
            .order_by(webhook_gone_endpoints.c.gone_at.desc())
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        return [GoneEndpoint(url=r.url, job_id=r.job_id, gone_at=r.gone_at) for r in rows]

    async def gone_for_job(self, tenant_id: str, job_id: str) -> GoneEndpoint | None:
        """The URL marked gone by this job's 410, if it is still marked (notices)."""
        c = webhook_gone_endpoints.c
        query = select(webhook_gone_endpoints).where(c.tenant_id == tenant_id, c.job_id == job_id)
        async with self._db.transaction() as conn:
            row = (await conn.execute(query.limit(1))).first()
        return None if row is None else GoneEndpoint(row.url, row.job_id, row.gone_at)

    async def reenable(self, tenant_id: str, url: str, audit: AuditEvent | None = None) -> None:
        """Forget that ``url`` was gone (recording ``audit``); NotFound when it is not
        marked."""
        async with self._db.transaction() as conn:
            result = await conn.execute(
                delete(webhook_gone_endpoints).where(
                    and_(
                        webhook_gone_endpoints.c.tenant_id == tenant_id,
                        webhook_gone_endpoints.c.url_hash == url_hash(url),
                    )
                )
            )
            if result.rowcount:
                await write_event(conn, audit)
        if result.rowcount == 0:
            raise NotFound("this URL is not marked gone", {"url": url})
