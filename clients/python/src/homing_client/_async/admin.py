"""The operator's routes (``/admin/v1/…``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from homing_client import models
from homing_client._async._resource import Resource, pages
from homing_client._core import Call, drop_none, segment

if TYPE_CHECKING:
    from homing_client._async.client import AsyncClient


class Admin(Resource):
    """The operator's routes (``/admin/v1/…``): a client made with the operator's
    ``HOMING_ADMIN_TOKEN`` as its ``api_key`` calls them (docs/operations.md)."""

    def __init__(self, client: AsyncClient) -> None:
        super().__init__(client)
        self.tenants = AdminTenants(client)
        self.jobs = AdminJobs(client)
        self.dead_letters = AdminDeadLetters(client)
        self.audit_log = AdminAuditLog(client)

    async def queues(self) -> models.QueuesPublic:
        """Queue depths per state and priority, and the tenants with the most waiting."""
        return await self._c.request(Call("GET", "/admin/v1/queues", models.QueuesPublic))


class AdminTenants(Resource):
    async def create(self, *, name: str, **fields: Any) -> models.TenantCreated:
        """A new tenant and its first API key, shown this once (``fields``: plan,
        rate_limit_per_minute, quotas)."""
        body = drop_none(name=name, **fields)
        return await self._c.request(Call("POST", "/admin/v1/tenants", models.TenantCreated, body))

    async def get(self, tenant_id: str) -> models.TenantDetail:
        path = f"/admin/v1/tenants/{segment(tenant_id)}"
        return await self._c.request(Call("GET", path, models.TenantDetail))

    async def update(self, tenant_id: str, **changes: Any) -> models.TenantPublic:
        """Change the tenant's name, plan or limits (``None`` clears a custom limit)."""
        path = f"/admin/v1/tenants/{segment(tenant_id)}"
        return await self._c.request(Call("PATCH", path, models.TenantPublic, changes))

    async def suspend(self, tenant_id: str) -> models.TenantPublic:
        path = f"/admin/v1/tenants/{segment(tenant_id)}/suspend"
        return await self._c.request(Call("POST", path, models.TenantPublic))

    async def unsuspend(self, tenant_id: str) -> models.TenantPublic:
        path = f"/admin/v1/tenants/{segment(tenant_id)}/unsuspend"
        return await self._c.request(Call("POST", path, models.TenantPublic))

    async def list(self, *, limit: int | None = None) -> AsyncIterator[models.TenantPublic]:
        """Every tenant, fetching the cursor pages as it goes."""
        async for item in pages(self._c, "/admin/v1/tenants", models.PageTenantPublic, limit):
            yield item


class AdminJobs(Resource):
    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageAdminJobSummary:
        """One page of every tenant's jobs (``filters``: tenant_id, to, channel, status,
        since, until, idempotency_key)."""
        params = {"cursor": cursor, "limit": limit, **filters}
        call = Call("GET", "/admin/v1/jobs", models.PageAdminJobSummary, params=params)
        return await self._c.request(call)

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.AdminJobSummary]:
        """Every job matching ``filters``, fetching the cursor pages as it goes."""
        async for item in pages(
            self._c, "/admin/v1/jobs", models.PageAdminJobSummary, limit, filters
        ):
            yield item


class AdminDeadLetters(Resource):
    """Every tenant's dead letters; ``filters`` and ``selection`` as ``dead_letters``
    with ``tenant_id`` too."""

    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageDeadLetterPublic:
        params = {"cursor": cursor, "limit": limit, **filters}
        call = Call("GET", "/admin/v1/dead-letters", models.PageDeadLetterPublic, params=params)
        return await self._c.request(call)

    async def get(self, dead_letter_id: str) -> models.DeadLetterDetail:
        path = f"/admin/v1/dead-letters/{segment(dead_letter_id)}"
        return await self._c.request(Call("GET", path, models.DeadLetterDetail))

    async def redrive(self, **selection: Any) -> models.Redriven:
        body = drop_none(**selection)
        return await self._c.request(
            Call("POST", "/admin/v1/dead-letters/redrive", models.Redriven, body)
        )

    async def purge(self, **selection: Any) -> models.Purged:
        body = drop_none(**selection)
        return await self._c.request(
            Call("POST", "/admin/v1/dead-letters/purge", models.Purged, body)
        )

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.DeadLetterPublic]:
        path = "/admin/v1/dead-letters"
        async for item in pages(self._c, path, models.PageDeadLetterPublic, limit, filters):
            yield item


class AdminAuditLog(Resource):
    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageAuditEventPublic:
        """One page of audit events, every tenant's and the operator's (``filters``:
        tenant_id, action, since, until)."""
        params = {"cursor": cursor, "limit": limit, **filters}
        call = Call("GET", "/admin/v1/audit-log", models.PageAuditEventPublic, params=params)
        return await self._c.request(call)

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.AuditEventPublic]:
        path = "/admin/v1/audit-log"
        async for item in pages(self._c, path, models.PageAuditEventPublic, limit, filters):
            yield item
