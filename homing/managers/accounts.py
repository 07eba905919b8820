"""Registering a tenant's provider: validate, check with the provider, seal, store.

The credential check is the only provider call outside the dispatcher; it runs
here, not in the API layer, so routes stay HTTP in → store.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from homing.channels import Channel
from homing.crypto import Sealer, mask, mask_password
from homing.domain.audit import AuditEvent
from homing.errors import InvalidRequest, ProviderTimeout
from homing.managers.suspension import refuse_suspended_id
from homing.models import ProviderAccount, new_id
from homing.providers.base import ProviderFailure
from homing.providers.deadline import DEFAULT_DEADLINE_SECONDS, DeadlineExceeded, within
from homing.providers.guard import EndpointGuard
from homing.providers.registry import (
    CREDENTIAL_FIELDS,
    SECRET_CREDENTIAL_FIELDS,
    checkable_provider,
)
from homing.store.audit import by_tenant
from homing.store.providers import ProviderStore, open_credentials, seal_credentials
from homing.store.tenants import TenantStore


@dataclass(kw_only=True, frozen=True, slots=True)
class NewProvider:
    """A provider account a tenant asks to add, before its credentials are checked and
    sealed."""

    tenant_id: str
    channel: Channel
    provider: str
    credentials: dict[str, Any]
    config: dict[str, Any]
    priority: int
    enabled: bool = True


# Chosen by a human, so no part of them is shown (``mask_password``).
PASSWORD_FIELDS = frozenset({"password"})


def credentials_preview(credentials: dict[str, Any]) -> str:
    """Non-secret fields in clear, secret ones masked: ``api_key=re_…9f2c``,
    ``password=********``."""
    parts = []
    for key in sorted(credentials):
        value = str(credentials[key])
        if key in PASSWORD_FIELDS:
            shown = mask_password(value)
        elif key in SECRET_CREDENTIAL_FIELDS:
            shown = mask(value)
        else:
            shown = value
        parts.append(f"{key}={shown}")
    return ", ".join(parts)


class ProviderAccounts:
    """Registers a tenant's provider accounts: validates the credentials with the
    vendor, seals them, stores the account."""

    def __init__(
        self,
        store: ProviderStore,
        sealer: Sealer,
        http: httpx.AsyncClient,
        endpoints: EndpointGuard | None = None,
        *,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        tenants: TenantStore | None = None,
    ) -> None:
        """``deadline_seconds`` bounds the credential check as a whole, and every
        timeout the tenant sets in ``config``; ``tenants`` refuses a suspended tenant's
        own registration before the vendor is asked."""
        self._tenants = tenants
        self._store = store
        self._sealer = sealer
        self._http = http
        self._endpoints = endpoints
        self._deadline = deadline_seconds

    async def register(self, new: NewProvider, audit: AuditEvent | None = None) -> ProviderAccount:
        """Check the credentials against the provider, then store them sealed.

        Raises InvalidCredentials when the provider rejects them, EndpointRefused when
        its endpoint is one Homing may not call, InvalidRequest when required fields are
        missing or the provider cannot be reached. No message quotes what the endpoint
        answered beyond its status: the endpoint is the tenant's choice. ``audit`` is
        recorded with the account; TenantSuspended, before the vendor is asked, when it
        is a suspended tenant's own change; QuotaExceeded, before it too, when the
        tenant holds as many accounts as it may.
        """
        if self._tenants is not None and audit is not None and by_tenant(audit):
            await refuse_suspended_id(self._tenants, new.tenant_id)
        _require_fields(new.provider, new.credentials)
        check_timeout(new.config, self._deadline)
        await self._store.check_room(new.tenant_id)
        await self._check(new.channel, new.provider, new.credentials, new.config)
        account_id = new_id()
        account = ProviderAccount(
            id=account_id,
            tenant_id=new.tenant_id,
            channel=new.channel,
            vendor=new.provider,
            priority=new.priority,
            enabled=new.enabled,
            credentials_sealed=seal_credentials(self._sealer, account_id, new.credentials),
            credentials_preview=credentials_preview(new.credentials),
            config=new.config,
            created_at=datetime.now(UTC),
        )
        return await self._store.add(account, audit)

    async def recheck(self, tenant_id: str, account_id: str) -> ProviderAccount:
        """Check the stored credentials with the provider again; when it accepts them,
        the account is no longer marked ``credentials_rejected``. Raises as ``register``
        does when the provider still refuses them (the mark stays)."""
        account = await self._store.get(tenant_id, account_id)
        credentials = open_credentials(self._sealer, account)
        await self._check(account.channel, account.vendor, credentials, account.config)
        return await self._store.update(tenant_id, account_id, credentials_rejected_at=None)

    async def _check(
        self,
        channel: Channel,
        provider: str,
        credentials: dict[str, Any],
        config: dict[str, Any],
    ) -> None:
        adapter = checkable_provider(
            channel, provider, credentials, config, self._http, endpoints=self._endpoints
        )
        if self._endpoints is not None:
            self._endpoints.policy.check_account(provider, credentials, config)
        try:
            await within(self._deadline, adapter.check_credentials())
        except DeadlineExceeded as exc:
            raise ProviderTimeout(
                f"{provider} did not finish the credential check: {exc}",
                {"deadline_seconds": exc.seconds},
            ) from None
        except ProviderFailure as exc:
            raise InvalidRequest(
                f"could not check the credentials with {provider}: {_summary(exc)}",
                {"failure_class": exc.failure_class.value},
            ) from None


def _summary(failure: ProviderFailure) -> str:
    # A transport failure's detail is Homing's own words; an answer's is the status only.
    if failure.status_code is None:
        return failure.detail
    return f"{failure.failure_class.value}, status {failure.status_code}"


def check_timeout(config: dict[str, Any], deadline: float) -> None:
    """InvalidRequest unless ``config["timeout"]`` (when set) is a finite number of
    seconds above 0 and within the call deadline: a tenant cannot hold a call longer."""
    if "timeout" not in config:
        return
    value = config["timeout"]
    try:
        seconds = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        seconds = math.nan
    if not (math.isfinite(seconds) and 0 < seconds <= deadline):
        raise InvalidRequest(
            f"config 'timeout' must be a number of seconds above 0 and at most {deadline:g}"
            " (the call deadline)",
            {"field": "config.timeout", "max": deadline},
        )


def _require_fields(provider: str, credentials: dict[str, Any]) -> None:
    missing = [f for f in CREDENTIAL_FIELDS.get(provider, ()) if not credentials.get(f)]
    if missing:
        raise InvalidRequest(
            f"{provider} credentials need: {', '.join(missing)}", {"missing": missing}
        )
