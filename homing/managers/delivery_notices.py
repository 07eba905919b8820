"""Notices from deliveries: what the worker's outcomes show a tenant must fix.

The worker (``homing.dispatch.outcome_watch``) hands over the accounts whose credentials a
provider refused and the webhook URLs that answered 410. A refused account is marked
``credentials_rejected`` (``GET /v1/providers`` shows it, even when a fallback
delivered the job) and the tenant is told once per marking; ``PATCH
/v1/providers/{id}`` with ``"recheck": true`` checks the credentials again and clears
the mark. A gone URL is noticed once per time it is marked gone.
"""

from __future__ import annotations

from datetime import datetime

from homing.clock import Clock, as_datetime
from homing.errors import NotFound
from homing.managers.notices import NoticeKind, Notices
from homing.store.providers import ProviderStore
from homing.store.webhooks import WebhookStore, url_hash

__all__ = ["DeliveryNotices"]


def _moment(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


class DeliveryNotices:
    """The worker's ``OutcomeWatcher``: marks refused accounts and tells tenants."""

    def __init__(
        self, notices: Notices, providers: ProviderStore, webhooks: WebhookStore, clock: Clock
    ) -> None:
        self._notices = notices
        self._providers = providers
        self._webhooks = webhooks
        self._clock = clock

    async def watch(
        self,
        rejected_credentials: frozenset[tuple[str, str]],
        gone_endpoints: frozenset[tuple[str, str]],
    ) -> None:
        """(tenant, account) pairs a provider refused; (tenant, job) pairs that met a 410."""
        for tenant_id, account_id in sorted(rejected_credentials):
            await self._rejected(tenant_id, account_id)
        for tenant_id, job_id in sorted(gone_endpoints):
            await self._gone(tenant_id, job_id)

    async def _rejected(self, tenant_id: str, account_id: str) -> None:
        try:
            account = await self._providers.get(tenant_id, account_id)
        except NotFound:
            return  # deleted meanwhile: nothing left to fix
        now = as_datetime(self._clock.now())
        marked = await self._providers.mark_credentials_rejected(tenant_id, account_id, now)
        if marked is None:
            return  # marked before: the tenant was told then
        data = {
            "provider_account_id": account_id,
            "provider": account.vendor,
            "channel": account.channel.value,
            "rejected_at": _moment(marked),
        }
        key = f"{account_id}:{marked.isoformat()}"
        await self._notices.notify(tenant_id, NoticeKind.CREDENTIALS_REJECTED, key, data)

    async def _gone(self, tenant_id: str, job_id: str) -> None:
        gone = await self._webhooks.gone_for_job(tenant_id, job_id)
        if gone is None:
            return
        data = {
            "url": gone.url,
            "job_id": gone.job_id,
            "gone_at": _moment(gone.gone_at),
        }
        key = f"{url_hash(gone.url)}:{gone.gone_at.isoformat()}"
        await self._notices.notify(tenant_id, NoticeKind.ENDPOINT_DISABLED, key, data)
