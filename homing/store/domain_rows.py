"""Sending domains a tenant registered with its providers, and their DNS records.

A tenant holds at most ``HOMING_MAX_DOMAINS_PER_TENANT`` of them, over all its providers
(``homing.store.bounds``); forgetting one makes room again.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.domain.audit import AuditEvent
from homing.domain.domain_rows import SendingDomain
from homing.errors import Conflict, NotFound
from homing.models import DnsRecord, DomainStatus
from homing.store.accepting import AcceptCheck
from homing.store.audit import write_event
from homing.store.bounds import Bound, make_room
from homing.store.database import Database
from homing.store.tables.core import provider_accounts
from homing.store.tables.inbound import sending_domains


def _domain(row: Any) -> SendingDomain:
    return SendingDomain(
        id=row.id,
        tenant_id=row.tenant_id,
        provider_account_id=row.provider_account_id,
        provider=row.provider,
        domain=row.domain,
        provider_domain_id=row.provider_domain_id,
        status=DomainStatus(row.status),
        records=tuple(DnsRecord.of(r) for r in row.records),
        created_at=row.created_at,
        updated_at=row.updated_at,
        verified_at=row.verified_at,
    )


class DomainStore:
    """The SQL of tenants' sending domains."""

    def __init__(self, db: Database, *, most: int) -> None:
        """``most``: how many sending domains a tenant may hold."""
        self._db = db
        self._bound = Bound("sending domains", "max_domains", most)

    async def check_room(self, tenant_id: str) -> None:
        """QuotaExceeded when the tenant holds as many domains as it may: asked before
        the provider is, so a tenant at its bound makes no call to a vendor (``add``
        counts again, under the tenant's lock)."""
        async with self._db.transaction() as conn:
            await make_room(conn, self._bound, sending_domains, tenant_id)

    async def add(self, domain: SendingDomain, audit: AuditEvent | None = None) -> SendingDomain:
        """Store a registered domain (and ``audit``, naming it); Conflict when the
        account already has it, QuotaExceeded when the tenant holds as many domains as
        it may."""
        values = {
            "id": domain.id,
            "tenant_id": domain.tenant_id,
            "provider_account_id": domain.provider_account_id,
            "provider": domain.provider,
            "domain": domain.domain,
            "provider_domain_id": domain.provider_domain_id,
            "status": domain.status.value,
            "records": [r.as_dict() for r in domain.records],
            "created_at": domain.created_at,
            "updated_at": domain.updated_at,
            "verified_at": domain.verified_at,
        }
        try:
            async with self._db.transaction() as conn:
                await make_room(conn, self._bound, sending_domains, domain.tenant_id)
                await conn.execute(sending_domains.insert().values(**values))
                await write_event(conn, audit and audit.about(target_id=domain.id))
        except IntegrityError:
            raise Conflict("this provider already has this domain") from None
        return domain

    async def find(self, tenant_id: str, account_id: str, name: str) -> SendingDomain | None:
        c = sending_domains.c
        query = select(sending_domains).where(
            c.tenant_id == tenant_id, c.provider_account_id == account_id, c.domain == name
        )
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        return _domain(row) if row else None

    async def get(self, tenant_id: str, domain_id: str) -> SendingDomain:
        c = sending_domains.c
        query = select(sending_domains).where(c.id == domain_id, c.tenant_id == tenant_id)
        async with self._db.transaction() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            raise NotFound("domain not found")
        return _domain(row)

    async def all(self, tenant_id: str) -> list[SendingDomain]:
        """The tenant's domains by name (at most ``most``)."""
        c = sending_domains.c
        query = select(sending_domains).where(c.tenant_id == tenant_id).order_by(c.domain, c.id)
        async with self._db.transaction() as conn:
            return [_domain(row) for row in (await conn.execute(query)).all()]

    async def checked(self, domain: SendingDomain) -> SendingDomain:
        """Store the outcome of a verification (status, records, times)."""
        c = sending_domains.c
        async with self._db.transaction() as conn:
            await conn.execute(
                update(sending_domains)
                .where(c.id == domain.id, c.tenant_id == domain.tenant_id)
                .values(
                    status=domain.status.value,
                    records=[r.as_dict() for r in domain.records],
                    updated_at=domain.updated_at,
                    verified_at=domain.verified_at,
                )
            )
        return domain

    async def delete(self, tenant_id: str, domain_id: str, audit: AuditEvent | None = None) -> None:
        """Forget a domain (recording ``audit``); NotFound when the tenant has none."""
        c = sending_domains.c
        async with self._db.transaction() as conn:
            result = await conn.execute(
                delete(sending_domains).where(c.id == domain_id, c.tenant_id == tenant_id)
            )
            if result.rowcount:
                await write_event(conn, audit)
        if result.rowcount == 0:
            raise NotFound("domain not found")

    def accept_check(
        self, tenant_id: str, apply: Callable[[dict[str, set[DomainStatus]]], None]
    ) -> AcceptCheck:
        """``apply`` over the tenant's domain statuses (each domain the tenant registered
        with a live provider account, with its status at each), as a check the accepting
        transaction runs: one query in that transaction (shared by the tenant's accepts
        in one group) rather than a round trip of its own."""
        return AcceptCheck(
            scope=("sending domains", tenant_id),
            load=partial(_statuses, tenant_id=tenant_id),
            apply=apply,
        )


async def _statuses(conn: AsyncConnection, tenant_id: str) -> dict[str, set[DomainStatus]]:
    c, a = sending_domains.c, provider_accounts.c
    query = (
        select(c.domain, c.status)
        .join(provider_accounts, a.id == c.provider_account_id)
        .where(c.tenant_id == tenant_id, a.deleted_at.is_(None))
    )
    found: dict[str, set[DomainStatus]] = {}
    for row in (await conn.execute(query)).all():
        found.setdefault(row.domain, set()).add(DomainStatus(row.status))
    return found
