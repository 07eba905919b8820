"""Each provider account's inbound secret: checked, sealed, masked, and used to verify.

The body of ``PUT /v1/providers/{id}/inbound`` is ``{"<kind>": <secret>}``, with the
kind the vendor's descriptor names (``inbound_secret``: a signing secret, a verification
key, HTTP Basic credentials, a secret token); what a usable secret of that vendor looks
like is its verifier's to say (``homing/vendors/<name>/verify.py``, ``accept``; the
vendors' bodies are in docs/sending.md and docs/channels.md).

The secret is sealed with AES-256-GCM bound to (provider_inbound, account id, kind)
and opened only to verify a request; responses show a masked preview.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import orjson

from homing.clock import Clock, as_datetime
from homing.crypto import Sealer
from homing.domain.audit import AuditEvent
from homing.errors import InvalidRequest, NotFound
from homing.inbound.sources import KINDS, SOURCES
from homing.inbound.verification import Nonce, Signed
from homing.store.inbound_secrets import InboundSecretStore, StoredSecret
from homing.store.providers import ProviderStore

__all__ = ["KINDS", "TABLE", "InboundSecretInfo", "InboundSecrets", "InboundTarget", "inbound_path"]

TABLE: Final = "provider_inbound"


@dataclass(kw_only=True, frozen=True, slots=True)
class InboundSecretInfo:
    """What a tenant may see of an account's inbound secret."""

    provider_account_id: str
    provider: str
    kind: str
    preview: str
    path: str
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class InboundTarget:
    """A live account ready to verify a request; ``secret`` is plaintext, never shown."""

    provider_account_id: str
    tenant_id: str
    provider: str
    secret: dict[str, Any] = field(repr=False)

    def verify(
        self, body: bytes, headers: Mapping[str, str], now: float, url: str = ""
    ) -> Nonce | None:
        """Raise VerificationFailed unless the request is this account's provider's; the
        signature's one-time value where the scheme has one (a token in the body). ``url``
        is the public URL the provider posted to, for the schemes that sign it."""
        value = self.secret[KINDS[self.provider]]
        return SOURCES[self.provider].signature.check(value, Signed(body, headers, now, url))


def inbound_path(provider: str, account_id: str) -> str:
    return f"/inbound/{provider}/{account_id}"


def _checked(provider: str, given: dict[str, Any]) -> Any:
    """The value to seal for ``provider``; InvalidRequest when it is not usable."""
    kind = KINDS.get(provider)
    if kind is None:
        raise InvalidRequest(f"{provider} sends no events Homing can verify")
    if set(given) != {kind}:
        raise InvalidRequest(f"{provider} needs exactly {kind!r}", {"expected": kind})
    try:
        SOURCES[provider].signature.accept(given[kind])
    except ValueError as exc:
        raise InvalidRequest(str(exc), {"field": kind}) from None
    return given[kind]


class InboundSecrets:
    """Tenants' inbound verification secrets: sealed at rest, masked when shown, opened
    only to verify a request."""

    def __init__(
        self, store: InboundSecretStore, providers: ProviderStore, sealer: Sealer, clock: Clock
    ) -> None:
        self._store = store
        self._providers = providers
        self._sealer = sealer
        self._clock = clock

    async def put(
        self,
        tenant_id: str,
        account_id: str,
        given: dict[str, Any],
        audit: AuditEvent | None = None,
    ) -> InboundSecretInfo:
        """Check and seal the secret of one of the tenant's accounts (replacing any)."""
        account = await self._providers.get(tenant_id, account_id)
        value = _checked(account.vendor, given)
        kind = KINDS[account.vendor]
        sealed = self._sealer.seal(
            orjson.dumps({kind: value}), table=TABLE, row_id=account.id, field=kind
        )
        now = as_datetime(self._clock.now())
        stored = StoredSecret(
            provider_account_id=account.id,
            tenant_id=tenant_id,
            provider=account.vendor,
            kind=kind,
            secret_sealed=sealed,
            preview=SOURCES[account.vendor].signature.preview(value),
            updated_at=now,
        )
        await self._store.put(stored, audit)
        return _info(stored)

    async def get(self, tenant_id: str, account_id: str) -> InboundSecretInfo:
        stored = await self._store.get(tenant_id, account_id)
        if stored is None:
            raise NotFound("this provider has no inbound secret")
        return _info(stored)

    async def delete(
        self, tenant_id: str, account_id: str, audit: AuditEvent | None = None
    ) -> None:
        if not await self._store.delete(tenant_id, account_id, audit):
            raise NotFound("this provider has no inbound secret")

    async def target(self, provider: str, account_id: str) -> InboundTarget | None:
        """The account an inbound URL names, with its secret opened; None if unusable."""
        stored = await self._store.for_inbound(provider, account_id)
        if stored is None:
            return None
        plaintext = self._sealer.open(
            stored.secret_sealed, table=TABLE, row_id=stored.provider_account_id, field=stored.kind
        )
        secret: dict[str, Any] = orjson.loads(plaintext)
        return InboundTarget(stored.provider_account_id, stored.tenant_id, provider, secret)


def _info(stored: StoredSecret) -> InboundSecretInfo:
    return InboundSecretInfo(
        provider_account_id=stored.provider_account_id,
        provider=stored.provider,
        kind=stored.kind,
        preview=stored.preview,
        path=inbound_path(stored.provider, stored.provider_account_id),
        updated_at=stored.updated_at,
    )
