"""Sending domains at the email providers: register one, get its DNS records, verify it.

The HTTP email adapters (SendGrid, Resend, Postmark, Mailgun) implement
``DomainProvider``; SMTP has no such API. Each adapter maps its vendor's reply onto
``DomainInfo``: the provider's id for the domain, a status and the DNS records.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

import httpx

from homing.errors import InvalidRequest


class DomainStatus(enum.StrEnum):
    PENDING = "pending"
    VERIFIED = "verified"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class DnsRecord:
    """One record the tenant publishes. ``purpose``: dkim, spf, return_path, mx, …"""

    type: str
    host: str
    value: str
    purpose: str | None = None
    priority: int | None = None
    valid: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> DnsRecord:
        return cls(
            type=str(data["type"]),
            host=str(data["host"]),
            value=str(data["value"]),
            purpose=data.get("purpose"),
            priority=data.get("priority"),
            valid=data.get("valid"),
        )


@dataclass(frozen=True, slots=True)
class DomainInfo:
    provider_domain_id: str
    status: DomainStatus
    records: tuple[DnsRecord, ...]


class DomainProvider(Protocol):
    async def create_domain(self, domain: str) -> DomainInfo:
        """Register ``domain``; raise ProviderFailure when the provider refuses."""
        ...

    async def verify_domain(
        self, provider_domain_id: str, known: Sequence[DnsRecord]
    ) -> DomainInfo:
        """Ask the provider to check the records; ``known`` are those registration gave."""
        ...


class DomainProviderFactory(Protocol):
    def __call__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> DomainProvider: ...


class DomainsUnsupported(InvalidRequest):
    """This provider has no sending-domain API."""

    code = "domains_unsupported"


def domain_provider(
    name: str, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
) -> DomainProvider:
    """The adapter of provider ``name`` as a DomainProvider, or DomainsUnsupported."""
    from homing.providers.email.mailgun import MailgunProvider
    from homing.providers.email.postmark import PostmarkProvider
    from homing.providers.email.resend import ResendProvider
    from homing.providers.email.sendgrid import SendGridProvider

    adapters: Final[dict[str, DomainProviderFactory]] = {
        "sendgrid": SendGridProvider,
        "resend": ResendProvider,
        "postmark": PostmarkProvider,
        "mailgun": MailgunProvider,
    }
    adapter = adapters.get(name)
    if adapter is None:
        raise DomainsUnsupported(f"{name} has no sending-domain API", {"provider": name})
    return adapter(credentials, config, http)


def text(value: Any) -> str:
    return "" if value is None else str(value)
