"""The tenant's own setup and records: provider accounts, API keys, sending domains,
settings, usage, reports and the audit log."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from homing_client import models
from homing_client._async._resource import Resource, pages
from homing_client._core import Call, drop_none, segment


class Providers(Resource):
    async def list(self) -> list[models.ProviderPublic]:
        page = await self._c.request(Call("GET", "/v1/providers", models.PageProviderPublic))
        return page.data

    async def create(
        self,
        *,
        channel: str,
        provider: str,
        credentials: dict[str, Any],
        config: dict[str, Any] | None = None,
        **options: Any,
    ) -> models.ProviderPublic:
        body = drop_none(
            channel=channel, provider=provider, credentials=credentials, config=config, **options
        )
        return await self._c.request(Call("POST", "/v1/providers", models.ProviderPublic, body))

    async def update(self, provider_id: str, **changes: Any) -> models.ProviderPublic:
        path = f"/v1/providers/{segment(provider_id)}"
        return await self._c.request(Call("PATCH", path, models.ProviderPublic, changes))

    async def delete(self, provider_id: str) -> None:
        await self._c.request(Call("DELETE", f"/v1/providers/{segment(provider_id)}", None))

    async def inbound(self, provider_id: str) -> models.InboundSecretPublic:
        """The provider account's inbound (delivery-event) secret: its kind and preview."""
        path = f"/v1/providers/{segment(provider_id)}/inbound"
        return await self._c.request(Call("GET", path, models.InboundSecretPublic))

    async def set_inbound(self, provider_id: str, **secret: Any) -> models.InboundSecretPublic:
        """Set the secret the vendor signs its events with (``secret``: verification_key,
        signing_secret, basic_auth or secret_token, as the vendor uses)."""
        path = f"/v1/providers/{segment(provider_id)}/inbound"
        body = drop_none(**secret)
        return await self._c.request(Call("PUT", path, models.InboundSecretPublic, body))

    async def delete_inbound(self, provider_id: str) -> None:
        path = f"/v1/providers/{segment(provider_id)}/inbound"
        await self._c.request(Call("DELETE", path, None))


class ApiKeys(Resource):
    async def list(self) -> list[models.ApiKeyPublic]:
        """The tenant's API keys (their prefixes; never a key)."""
        return (await self._c.request(Call("GET", "/v1/api-keys", models.PageApiKeyPublic))).data

    async def create(
        self, *, name: str | None = None, test: bool | None = None
    ) -> models.ApiKeyIssued:
        """A new API key (``test``: a test-mode key), shown this once in ``key``."""
        body = drop_none(name=name, test=test)
        return await self._c.request(Call("POST", "/v1/api-keys", models.ApiKeyIssued, body))

    async def revoke(self, key_id: str) -> None:
        await self._c.request(Call("DELETE", f"/v1/api-keys/{segment(key_id)}", None))


class Domains(Resource):
    """Sending domains registered with a provider account (docs/sending.md)."""

    async def list(self) -> list[models.DomainPublic]:
        return (await self._c.request(Call("GET", "/v1/domains", models.PageDomainPublic))).data

    async def create(self, *, domain: str, provider_account_id: str) -> models.DomainPublic:
        """Register a domain with the provider; the answer lists the DNS records to add."""
        body = {"domain": domain, "provider_account_id": provider_account_id}
        return await self._c.request(Call("POST", "/v1/domains", models.DomainPublic, body))

    async def get(self, domain_id: str) -> models.DomainPublic:
        return await self._c.request(
            Call("GET", f"/v1/domains/{segment(domain_id)}", models.DomainPublic)
        )

    async def delete(self, domain_id: str) -> None:
        await self._c.request(Call("DELETE", f"/v1/domains/{segment(domain_id)}", None))

    async def verify(self, domain_id: str) -> models.DomainPublic:
        """Ask the provider to check the domain's DNS records now."""
        path = f"/v1/domains/{segment(domain_id)}/verify"
        return await self._c.request(Call("POST", path, models.DomainPublic))


class Settings(Resource):
    """The tenant's settings (docs/settings.md)."""

    async def get(self) -> models.TenantSettingsPublic:
        return await self._c.request(Call("GET", "/v1/settings", models.TenantSettingsPublic))

    async def update(self, **changes: Any) -> models.TenantSettingsPublic:
        """Change the settings named (``changes``: webhook_signature_format,
        contact_email, operations_url, default_ttl_seconds, quiet_hours, …); ``None``
        clears one."""
        return await self._c.request(
            Call("PATCH", "/v1/settings", models.TenantSettingsPublic, changes)
        )


class Usage(Resource):
    async def get(self) -> models.UsagePublic:
        """This period's sends against the plan's quotas, and the rate limit."""
        return await self._c.request(Call("GET", "/v1/usage", models.UsagePublic))


class Reports(Resource):
    async def events(self, *, hours: int | None = None) -> models.EventReport:
        """Delivery events counted per hour over the last ``hours`` (24 by default)."""
        params = {"hours": hours}
        return await self._c.request(
            Call("GET", "/v1/reports/events", models.EventReport, params=params)
        )


class AuditLog(Resource):
    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageAuditEventPublic:
        """One page of the tenant's audit events, newest first (``filters``: action,
        since, until)."""
        params = {"cursor": cursor, "limit": limit, **filters}
        return await self._c.request(
            Call("GET", "/v1/audit-log", models.PageAuditEventPublic, params=params)
        )

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.AuditEventPublic]:
        """Every audit event matching ``filters``, fetching the cursor pages as it goes."""
        async for item in pages(
            self._c, "/v1/audit-log", models.PageAuditEventPublic, limit, filters
        ):
            yield item
