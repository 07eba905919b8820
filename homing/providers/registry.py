"""Provider names → adapter classes, and what credentials each one needs.

The API validates and masks tenant input with ``CREDENTIAL_FIELDS`` and
``SECRET_CREDENTIAL_FIELDS``; the dispatcher builds adapters with ``email_provider``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import httpx

from homing.errors import UnknownProvider
from homing.models import Channel
from homing.providers.base import (
    EmailProvider,
    EmailProviderFactory,
    SmsProvider,
    SmsProviderFactory,
)
from homing.providers.chat import ChatProvider, ChatProviderFactory
from homing.providers.chat.slack import SlackProvider
from homing.providers.chat.telegram import TelegramProvider
from homing.providers.domain_api import DomainProvider, DomainProviderFactory, DomainsUnsupported
from homing.providers.email.mailgun import MailgunProvider
from homing.providers.email.postmark import PostmarkProvider
from homing.providers.email.resend import ResendProvider
from homing.providers.email.sendgrid import SendGridProvider
from homing.providers.email.smtp import SmtpProvider
from homing.providers.sms.twilio import TwilioProvider
from homing.providers.sms.vonage import VonageProvider

if TYPE_CHECKING:
    from homing.providers.guard import EndpointGuard

__all__ = [
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

EMAIL_PROVIDERS: Final[dict[str, EmailProviderFactory]] = {
    SendGridProvider.name: SendGridProvider,
    ResendProvider.name: ResendProvider,
    PostmarkProvider.name: PostmarkProvider,
    MailgunProvider.name: MailgunProvider,
    SmtpProvider.name: SmtpProvider,
}

# SMTP has no sending-domain API.
DOMAIN_PROVIDERS: Final[dict[str, DomainProviderFactory]] = {
    SendGridProvider.name: SendGridProvider,
    ResendProvider.name: ResendProvider,
    PostmarkProvider.name: PostmarkProvider,
    MailgunProvider.name: MailgunProvider,
}

# Required keys only; SMTP's username/password/starttls are optional (an open relay
# on a private network needs none of them).
CREDENTIAL_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "sendgrid": ("api_key",),
    "resend": ("api_key",),
    "postmark": ("api_key",),
    "mailgun": ("api_key", "domain"),
    "smtp": ("host", "port"),
    "twilio": ("account_sid", "auth_token"),
    "vonage": ("api_key", "api_secret"),
    # Chat: each vendor's own credential names.
    "telegram": ("bot_token",),
    "slack": ("webhook_url",),
}


# Postmark's optional "account_token" (sending domains) is as secret as the server token.
# A Telegram bot token and a Slack webhook URL are whole credentials.
SECRET_CREDENTIAL_FIELDS: Final[frozenset[str]] = frozenset(
    {"api_key", "password", "account_token", "auth_token", "api_secret", "bot_token", "webhook_url"}
)


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
        return SmtpProvider(credentials, config, http, opener=endpoints.open_smtp)
    return factory(credentials, config, http)


def domain_provider(
    name: str, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
) -> DomainProvider:
    """The adapter of provider ``name`` as a DomainProvider, or DomainsUnsupported."""
    adapter = DOMAIN_PROVIDERS.get(name)
    if adapter is None:
        raise DomainsUnsupported(f"{name} has no sending-domain API", {"provider": name})
    return adapter(credentials, config, http)


# Chat vendors (docs/architecture.md, "Failure classes"; README, "Chat").
CHAT_PROVIDERS: Final[dict[str, ChatProviderFactory]] = {
    TelegramProvider.name: TelegramProvider,
    SlackProvider.name: SlackProvider,
}


def chat_provider(
    name: str, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
) -> ChatProvider:
    """Build the chat adapter called ``name`` (UnknownProvider for another name)."""
    factory = CHAT_PROVIDERS.get(name)
    if factory is None:
        raise UnknownProvider(f"unknown chat provider {name!r}", {"provider": name})
    return factory(credentials, config, http)


# SMS ------------------------------------------------------------------------------------

SMS_PROVIDERS: Final[dict[str, SmsProviderFactory]] = {
    TwilioProvider.name: TwilioProvider,
    VonageProvider.name: VonageProvider,
}

# The channel each provider serves: a registration names both, and they must agree.
PROVIDER_CHANNELS: Final[dict[str, Channel]] = {
    **{name: Channel.EMAIL for name in EMAIL_PROVIDERS},
    **{name: Channel.SMS for name in SMS_PROVIDERS},
    **{name: Channel.CHAT for name in CHAT_PROVIDERS},
}


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
