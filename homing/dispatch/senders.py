"""Turn (provider account, job) into one provider call.

This is the second of the two places where a provider credential is decrypted
(the other is the masked preview at registration): right before the call, held
only in the adapter for the duration of it.
"""

from __future__ import annotations

from typing import Protocol

import httpx

from homing.crypto import Sealer
from homing.email_headers import InvalidHeaders, email_headers
from homing.errors import EndpointRefused, UnknownProvider
from homing.models import (
    EmailContent,
    FailureClass,
    Job,
    ProviderAccount,
    SmsContent,
    email_payload,
    sms_payload,
)
from homing.providers.base import (
    EmailProvider,
    OutgoingEmail,
    OutgoingSms,
    ProviderFailure,
    SendResult,
)
from homing.providers.guard import EndpointGuard
from homing.providers.registry import SMS_PROVIDERS, email_provider, sms_provider
from homing.store.providers import open_credentials
from homing.vendors import VENDORS


class Sender(Protocol):
    """One channel's way to make a provider call for a job; the pass runner calls it per
    candidate account."""

    def supports_idempotency(self, account: ProviderAccount) -> bool: ...

    async def send(self, account: ProviderAccount, job: Job) -> SendResult: ...


class EmailSender:
    """Sends an email job through one of the tenant's email provider accounts."""

    def __init__(
        self, sealer: Sealer, http: httpx.AsyncClient, endpoints: EndpointGuard | None = None
    ) -> None:
        self._sealer = sealer
        self._http = http
        self._endpoints = endpoints

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        from homing.providers.registry import EMAIL_PROVIDERS

        return bool(getattr(EMAIL_PROVIDERS[account.vendor], "supports_idempotency", False))

    def destination(self, account: ProviderAccount, job: Job) -> str | None:
        """Where a send through ``account`` goes: its ``base_url``, or its mail server as
        an ``smtp://`` URL.

        None when the account has no ``base_url``: the adapter's default, a real API.
        """
        vendor = VENDORS.get(account.vendor)
        if vendor is not None and vendor.endpoint == "mail_server":
            credentials = open_credentials(self._sealer, account)
            host = str(credentials.get("host") or "")
            host = f"[{host}]" if ":" in host else host
            return f"smtp://{host}:{credentials.get('port') or 587}"
        base_url = account.config.get("base_url")
        return str(base_url) if base_url else None

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        """Send ``job`` through ``account``; an endpoint the guard refuses (checked again
        here, and at connect time) is ``provider_permanent``: skip this provider."""
        try:
            return await self._send(account, job)
        except EndpointRefused as exc:
            raise ProviderFailure(
                FailureClass.PROVIDER_PERMANENT, f"{account.vendor}: not sent, {exc.message}"
            ) from None

    async def _send(self, account: ProviderAccount, job: Job) -> SendResult:
        return await self.adapter(account).send(self.outgoing(job))

    def adapter(self, account: ProviderAccount) -> EmailProvider:
        """The account's adapter, its credentials opened (and the endpoint checked)."""
        credentials = open_credentials(self._sealer, account)
        if self._endpoints is not None:
            self._endpoints.policy.check_account(account.vendor, credentials, account.config)
        return email_provider(
            account.vendor, credentials, account.config, self._http, endpoints=self._endpoints
        )

    @staticmethod
    def outgoing(job: Job) -> OutgoingEmail:
        """The email an email job sends; a payload whose header fields break the rules
        of ``homing.email_headers`` is ``message_permanent``, never sent as it is."""
        payload = email_payload(job)
        try:
            headers = email_headers(payload.get("headers"))
        except InvalidHeaders as exc:
            raise ProviderFailure(
                FailureClass.MESSAGE_PERMANENT, f"email: not sent, {exc}"
            ) from None
        return OutgoingEmail(
            job_id=job.id,
            content=EmailContent(
                to=payload["to"],
                from_=payload["from"],
                subject=payload["subject"],
                text=payload.get("text"),
                html=payload.get("html"),
                headers=headers,
            ),
            # Stable across every retry of this job, so an idempotent provider
            # recognises a resend after a timeout.
            idempotency_key=f"homing-{job.id}",
        )


class SmsSender:
    """Sends an SMS job through one of the tenant's SMS provider accounts."""

    def __init__(
        self, sealer: Sealer, http: httpx.AsyncClient, endpoints: EndpointGuard | None = None
    ) -> None:
        self._sealer = sealer
        self._http = http
        self._endpoints = endpoints

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        factory = SMS_PROVIDERS.get(account.vendor)
        return bool(getattr(factory, "supports_idempotency", False))

    def destination(self, account: ProviderAccount, job: Job) -> str | None:
        """The account's ``base_url``; None for the vendor's own API."""
        base_url = account.config.get("base_url")
        return str(base_url) if base_url else None

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        """Send ``job`` through ``account``; a refused endpoint is ``provider_permanent``."""
        try:
            credentials = open_credentials(self._sealer, account)
            if self._endpoints is not None:
                self._endpoints.policy.check_account(account.vendor, credentials, account.config)
            adapter = sms_provider(account.vendor, credentials, account.config, self._http)
        except (EndpointRefused, UnknownProvider) as exc:
            raise ProviderFailure(
                FailureClass.PROVIDER_PERMANENT, f"{account.vendor}: not sent, {exc.message}"
            ) from None
        payload = sms_payload(job)
        content = SmsContent(to=payload["to"], from_=payload.get("from"), body=payload["body"])
        return await adapter.send(OutgoingSms(job_id=job.id, content=content))
