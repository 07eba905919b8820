"""Sending domains at the email providers: register one, get its DNS records, verify it.

The HTTP email adapters (SendGrid, Resend, Postmark, Mailgun) implement
``DomainProvider``; SMTP has no such API. Each adapter maps its vendor's reply onto
``DomainInfo``: the provider's id for the domain, a status and the DNS records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

import httpx

from homing.errors import InvalidRequest
from homing.models import DnsRecord as DnsRecord
from homing.models import DomainInfo as DomainInfo
from homing.models import DomainStatus as DomainStatus


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
