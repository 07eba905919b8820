"""The providers layer's registry: each vendor's adapter class, keyed by its descriptor.

What a vendor needs beside its adapter is its descriptor (``homing.vendors``): the
tables below are read from it. The API validates and masks tenant input with
``CREDENTIAL_FIELDS`` and ``SECRET_CREDENTIAL_FIELDS``; the dispatcher builds adapters
with ``email_provider``. Adding a vendor adds one line to ``ADAPTERS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

import httpx

from homing.channels import Channel
from homing.errors import UnknownProvider
from homing.providers.base import (
    EmailProvider,
    EmailProviderFactory,
    SmsProvider,
    SmsProviderFactory,
)
from homing.providers.chat_base import ChatProvider, ChatProviderFactory
from homing.providers.domain_api import DomainProvider, DomainProviderFactory, DomainsUnsupported
from homing.vendors import VENDORS
from homing.vendors.mailgun.adapter import MailgunProvider
from homing.vendors.postmark.adapter import PostmarkProvider
from homing.vendors.resend.adapter import ResendProvider
from homing.vendors.sendgrid.adapter import SendGridProvider
from homing.vendors.slack.adapter import SlackProvider
from homing.vendors.smtp.adapter import SmtpProvider
from homing.vendors.telegram.adapter import TelegramProvider
from homing.vendors.twilio.adapter import TwilioProvider
from homing.vendors.vonage.adapter import VonageProvider

if TYPE_CHECKING:
    from homing.providers.guard import EndpointGuard

__all__ = [
    "ADAPTERS",
    "CHAT_PROVIDERS",
    "CREDENTIAL_FIELDS",
    "EMAIL_PROVIDERS",
    "PROVIDER_CHANNELS",
    "SECRET_CREDENTIAL_FIELDS",
    "SMS_PROVIDERS",
    "UnknownEmailProvider",
    "chat_provider",
    "checkable_provider",
    "domain_provider",
    "email_provider",
    "sms_provider",
]

Adapter = EmailProviderFactory | SmsProviderFactory | ChatProviderFactory
# One line per vendor: its adapter, under the name its descriptor gives it.
ADAPTERS: Final[dict[str, Adapter]] = {
    SendGridProvider.name: SendGridProvider,
    ResendProvider.name: ResendProvider,
    PostmarkProvider.name: PostmarkProvider,
    MailgunProvider.name: MailgunProvider,
    SmtpProvider.name: SmtpProvider,
    TwilioProvider.name: TwilioProvider,
    VonageProvider.name: VonageProvider,
    TelegramProvider.name: TelegramProvider,
    SlackProvider.name: SlackProvider,
}


def _of(channel: Channel) -> dict[str, Any]:
    return {n: ADAPTERS[n] for n, v in VENDORS.items() if v.channel is channel and n in ADAPTERS}


EMAIL_PROVIDERS: Final[dict[str, EmailProviderFactory]] = _of(Channel.EMAIL)
SMS_PROVIDERS: Final[dict[str, SmsProviderFactory]] = _of(Channel.SMS)
# Chat vendors (docs/architecture.md, "Failure classes"; docs/benchmarks.md, "Chat").
CHAT_PROVIDERS: Final[dict[str, ChatProviderFactory]] = _of(Channel.CHAT)
# The email adapters that also manage sending domains (SMTP has no such API).
DOMAIN_PROVIDERS: Final[dict[str, DomainProviderFactory]] = {
    name: cast("DomainProviderFactory", factory)
    for name, factory in EMAIL_PROVIDERS.items()
    if callable(getattr(factory, "create_domain", None))
}

# Required keys only; optional ones (SMTP's username/password/starttls) are the
# descriptor's too.
CREDENTIAL_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    name: v.required for name, v in VENDORS.items()
}
# The credential fields masked wherever an account is shown, whichever vendor's.
SECRET_CREDENTIAL_FIELDS: Final[frozenset[str]] = frozenset().union(
    *(v.secrets for v in VENDORS.values())
)
# The channel each provider serves: a registration names both, and they must agree.
PROVIDER_CHANNELS: Final[dict[str, Channel]] = {name: v.channel for name, v in VENDORS.items()}


class UnknownEmailProvider(UnknownProvider, KeyError):
    """No email provider has this name."""

    def __str__(self) -> str:
        # KeyError would quote the message; keep HomingError's plain text.
        return self.message


def email_provider(
    name: str,
    credentials: dict[str, Any],
    config: dict[str, Any],
    http: httpx.AsyncClient,
    *,
    endpoints: EndpointGuard | None = None,
) -> EmailProvider:
    """Build the email adapter called ``name``.

    The HTTP adapters meet ``endpoints`` in ``http``; SMTP gets its socket from it, so it
    connects only to a checked address. An unknown name raises ``UnknownEmailProvider``,
    which is both a ``homing.errors.UnknownProvider`` and a ``KeyError``.
    """
    try:
        factory = EMAIL_PROVIDERS[name]
    except KeyError:
        raise UnknownEmailProvider(f"unknown email provider {name!r}") from None
    if factory is SmtpProvider and endpoints is not None:
        return SmtpProvider(credentials, config, http, opener=endpoints.open_server)
    return factory(credentials, config, http)


def domain_provider(
    name: str, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
) -> DomainProvider:
    """The adapter of provider ``name`` as a DomainProvider, or DomainsUnsupported."""
    adapter = DOMAIN_PROVIDERS.get(name)
    if adapter is None:
        raise DomainsUnsupported(f"{name} has no sending-domain API", {"provider": name})
    return adapter(credentials, config, http)


def chat_provider(
    name: str, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
) -> ChatProvider:
    """Build the chat adapter called ``name`` (UnknownProvider for another name)."""
    factory = CHAT_PROVIDERS.get(name)
    if factory is None:
        raise UnknownProvider(f"unknown chat provider {name!r}", {"provider": name})
    return factory(credentials, config, http)


def sms_provider(
    name: str, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
) -> SmsProvider:
    """Build the SMS adapter called ``name``; UnknownProvider when there is none."""
    try:
        factory = SMS_PROVIDERS[name]
    except KeyError:
        raise UnknownProvider(f"unknown SMS provider {name!r}", {"provider": name}) from None
    return factory(credentials, config, http)


def checkable_provider(
    channel: Channel,
    name: str,
    credentials: dict[str, Any],
    config: dict[str, Any],
    http: httpx.AsyncClient,
    *,
    endpoints: EndpointGuard | None = None,
) -> EmailProvider | SmsProvider | ChatProvider:
    """The adapter whose credentials a registration checks: ``name`` must serve
    ``channel`` (UnknownProvider otherwise)."""
    if PROVIDER_CHANNELS.get(name) is not channel:
        raise UnknownProvider(f"{name!r} is not a {channel.value} provider", {"provider": name})
    if channel is Channel.SMS:
        return sms_provider(name, credentials, config, http)
    if channel is Channel.CHAT:
        return chat_provider(name, credentials, config, http)
    return email_provider(name, credentials, config, http, endpoints=endpoints)
