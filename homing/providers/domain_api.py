"""Sending domains at the email providers: register one, get its DNS records, verify it.

The HTTP email adapters implement ``DomainProvider``; a mail server has no such API.
Each adapter maps its vendor's reply onto ``homing.models.DomainInfo``: the provider's
id for the domain, a status and the DNS records.
``homing.providers.registry.domain_provider`` builds the adapter by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import httpx

from homing.errors import InvalidRequest
from homing.models import DnsRecord, DomainInfo


class DomainProvider(Protocol):
    """The sending-domain calls an email adapter may offer."""

    async def create_domain(self, domain: str) -> DomainInfo:
        """Register ``domain``; raise ProviderFailure when the provider refuses."""
        ...

    async def verify_domain(
        self, provider_domain_id: str, known: Sequence[DnsRecord]
    ) -> DomainInfo:
        """Ask the provider to check the records; ``known`` are those registration gave."""
        ...


class DomainProviderFactory(Protocol):
    """Builds a domain-capable adapter from decrypted credentials, config and an
    injected HTTP client."""

    def __call__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> DomainProvider: ...


class DomainsUnsupported(InvalidRequest):
    """This provider has no sending-domain API."""

    code = "domains_unsupported"
