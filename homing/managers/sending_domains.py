"""Sending domains: register with the tenant's provider, verify, and guard senders.

The sender rule: a tenant that has registered at least one sending domain may send
only from domains verified at one of its providers; ``from`` on any other domain is
refused with 422 ``domain_not_verified``. A tenant that has registered none is not
checked here, and its providers apply their own sender verification (an unverified
sender then fails as ``message_permanent``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import replace
from typing import Final, TypeVar

import httpx

from homing.addresses import InvalidAddress, parse_mailbox
from homing.channels import Channel
from homing.clock import Clock, as_datetime
from homing.crypto import Sealer
from homing.domain.audit import AuditEvent
from homing.domain.domain_rows import SendingDomain
from homing.errors import Conflict, InvalidRequest, ProviderTimeout
from homing.managers.notices import NoticeKind, Notices
from homing.managers.suspension import refuse_suspended_id
from homing.models import DomainInfo, DomainStatus, new_id
from homing.providers.base import ProviderFailure
from homing.providers.deadline import DEFAULT_DEADLINE_SECONDS, DeadlineExceeded, within
from homing.providers.registry import domain_provider
from homing.store.accepting import AcceptCheck
from homing.store.domain_rows import DomainStore
from homing.store.providers import ProviderStore, open_credentials
from homing.store.tenants import TenantStore

_T = TypeVar("_T")
_MAX_NAME: Final = 253
_LABEL: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_LETTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyz")
# The statuses a check tells the tenant of (docs/operations.md "Notices").
_DOMAIN_NOTICES: Final = {
    DomainStatus.VERIFIED: NoticeKind.DOMAIN_VERIFIED,
    DomainStatus.FAILED: NoticeKind.DOMAIN_FAILED,
}


class DomainNotVerified(InvalidRequest):
    """The sender's domain is not a verified sending domain of this tenant."""

    code = "domain_not_verified"


class ProviderRefused(InvalidRequest):
    """The provider did not do what was asked."""

    code = "provider_error"


def domain_name(value: str) -> str:
    """A lower-case DNS name without a trailing dot; InvalidRequest otherwise."""
    name = value[: _MAX_NAME + 2].strip().lower().rstrip(".")
    if len(value) > _MAX_NAME + 2 or not _is_domain_name(name):
        raise InvalidRequest("not a domain name", {"domain": value[:_MAX_NAME]})
    return name


def _is_domain_name(name: str) -> bool:
    """Two or more labels of 1-63 letters, digits or inner ``-``, the last 2-63 letters;
    253 characters at most. Checked label by label, linear in the length."""
    labels = name.split(".")
    if not 0 < len(name) <= _MAX_NAME or len(labels) < 2:
        return False
    last = labels[-1]
    return (
        all(
            0 < len(x) <= 63 and x[0] != "-" and x[-1] != "-" and _LABEL.issuperset(x)
            for x in labels
        )
        and len(last) >= 2
        and _LETTERS.issuperset(last)
    )


def sender_domain(sender: str) -> str:
    """The domain of the one mailbox ``sender`` names (``homing.addresses``); for a
    value that does not parse, what follows its last ``@``, which matches no domain
    name (``decoy@x.com <s@y.com>`` gives ``y.com>``)."""
    try:
        return parse_mailbox(sender).domain
    except InvalidAddress:
        return sender.rpartition("@")[2].strip().lower()


async def _asked(provider: str, call: Awaitable[_T], deadline: float) -> _T:
    try:
        return await within(deadline, call)
    except DeadlineExceeded as exc:
        raise ProviderTimeout(
            f"{provider} did not answer: {exc}", {"deadline_seconds": exc.seconds}
        ) from None
    except ProviderFailure as exc:
        raise ProviderRefused(
            f"{provider} did not accept the request: {exc.detail}",
            {"failure_class": exc.failure_class.value},
        ) from None


class Domains:
    """The sending-domain manager: registers a domain with the tenant's provider,
    verifies it, and tells the API whether a sender's domain may send."""

    def __init__(
        self,
        store: DomainStore,
        providers: ProviderStore,
        sealer: Sealer,
        http: httpx.AsyncClient,
        clock: Clock,
        *,
        deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
        notices: Notices | None = None,
        tenants: TenantStore | None = None,
    ) -> None:
        """``deadline_seconds`` bounds each call to the provider as a whole; ``notices``
        tells the tenant when a check finds the domain verified or failed; ``tenants``
        refuses a suspended tenant's registration or check before the provider is
        asked (the tenant's own changes only reach this manager)."""
        self._tenants = tenants
        self._deadline = deadline_seconds
        self._notices = notices
        self._store = store
        self._providers = providers
        self._sealer = sealer
        self._http = http
        self._clock = clock

    async def register(
        self, tenant_id: str, name: str, account_id: str, audit: AuditEvent | None = None
    ) -> SendingDomain:
        """Register ``name`` with one of the tenant's email providers; its DNS records.
        ``audit`` is recorded with the new domain. QuotaExceeded, before the provider
        is asked, when the tenant holds as many domains as it may."""
        name = domain_name(name)
        await self._refuse_suspended(tenant_id)
        account = await self._providers.get(tenant_id, account_id)
        if account.channel is not Channel.EMAIL:
            raise InvalidRequest("sending domains belong to email providers")
        if await self._store.find(tenant_id, account.id, name) is not None:
            raise Conflict("this provider already has this domain", {"domain": name})
        await self._store.check_room(tenant_id)
        credentials = open_credentials(self._sealer, account)
        adapter = domain_provider(account.vendor, credentials, account.config, self._http)
        info = await _asked(account.vendor, adapter.create_domain(name), self._deadline)
        now = as_datetime(self._clock.now())
        domain = SendingDomain(
            id=new_id(),
            tenant_id=tenant_id,
            provider_account_id=account.id,
            provider=account.vendor,
            domain=name,
            provider_domain_id=info.provider_domain_id or name,
            status=info.status,
            records=info.records,
            created_at=now,
            updated_at=now,
            verified_at=now if info.status is DomainStatus.VERIFIED else None,
        )
        return await self._store.add(domain, audit)

    async def verify(self, tenant_id: str, domain_id: str) -> SendingDomain:
        """Ask the provider to check the domain's records now, and keep what it says."""
        await self._refuse_suspended(tenant_id)
        domain = await self._store.get(tenant_id, domain_id)
        account = await self._providers.get(tenant_id, domain.provider_account_id)
        credentials = open_credentials(self._sealer, account)
        adapter = domain_provider(account.vendor, credentials, account.config, self._http)
        call = adapter.verify_domain(domain.provider_domain_id, domain.records)
        info = await _asked(account.vendor, call, self._deadline)
        checked = await self._store.checked(self._merged(domain, info))
        await self._notice(domain, checked)
        return checked

    async def _refuse_suspended(self, tenant_id: str) -> None:
        if self._tenants is not None:
            await refuse_suspended_id(self._tenants, tenant_id)

    async def _notice(self, before: SendingDomain, after: SendingDomain) -> None:
        """Tell the tenant the domain became verified or failed: once per change, keyed
        by the state it changed from (two checks racing from it make one notice)."""
        kind = _DOMAIN_NOTICES.get(after.status)
        if self._notices is None or kind is None or after.status is before.status:
            return
        data = {
            "domain_id": after.id,
            "domain": after.domain,
            "provider": after.provider,
            "status": after.status.value,
        }
        key = f"{after.id}:{before.status.value}:{before.updated_at.isoformat()}"
        await self._notices.notify(after.tenant_id, kind, key, data)

    def _merged(self, domain: SendingDomain, info: DomainInfo) -> SendingDomain:
        now = as_datetime(self._clock.now())
        verified_at = domain.verified_at
        if info.status is DomainStatus.VERIFIED and verified_at is None:
            verified_at = now
        return replace(
            domain,
            status=info.status,
            records=info.records or domain.records,
            updated_at=now,
            verified_at=verified_at,
        )

    async def get(self, tenant_id: str, domain_id: str) -> SendingDomain:
        return await self._store.get(tenant_id, domain_id)

    async def all(self, tenant_id: str) -> list[SendingDomain]:
        return await self._store.all(tenant_id)

    async def delete(self, tenant_id: str, domain_id: str, audit: AuditEvent | None = None) -> None:
        """Forget a domain here (the provider keeps its own registration)."""
        await self._store.delete(tenant_id, domain_id, audit)

    def sender_rule(self, tenant_id: str, sender: str) -> AcceptCheck:
        """DomainNotVerified when the tenant has sending domains and ``sender``'s is
        not verified at any of its providers, as a check the accepting transaction
        runs: the rule costs a query in that transaction (one for all the tenant's
        accepts that share it) rather than one of its own."""

        return self._store.accept_check(
            tenant_id, lambda registered: check_sender(registered, sender)
        )


def check_sender(registered: Mapping[str, set[DomainStatus]], sender: str) -> None:
    """DomainNotVerified unless no domain is registered or ``sender``'s is verified."""
    if not registered:
        return
    name = sender_domain(sender)
    statuses = registered.get(name, set())
    if DomainStatus.VERIFIED not in statuses:
        state = "not registered" if not statuses else "not verified yet"
        raise DomainNotVerified(
            f"{name} is {state}: send from a verified sending domain",
            {"domain": name, "registered": bool(statuses)},
        )
