"""Turn (chat provider account, chat job) into one call to a chat vendor.

The credentials are opened right before the call, as for email
(``homing.dispatch.senders``). A chat that refused the bot (``RecipientBlocked``) is
suppressed for that vendor here, after the call returned: the next job to it ends
SUPPRESSED before any provider is called.
"""

from __future__ import annotations

import logging

import httpx

from homing.channels import Channel
from homing.crypto import Sealer
from homing.errors import EndpointRefused
from homing.models import FailureClass, Job, ProviderAccount, chat_payload
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.chat_base import OutgoingChat, RecipientBlocked
from homing.providers.guard import EndpointGuard
from homing.providers.registry import CHAT_PROVIDERS, chat_provider
from homing.store.providers import open_credentials
from homing.store.suppressions import SuppressionStore, chat_recipient
from homing.vendors import VENDORS

log = logging.getLogger("homing.dispatch")

BLOCKED_REASON = "blocked"


class ChatSender:
    """Sends a chat job through one of the tenant's chat accounts of the job's vendor."""

    def __init__(
        self,
        sealer: Sealer,
        http: httpx.AsyncClient,
        endpoints: EndpointGuard | None = None,
        suppressions: SuppressionStore | None = None,
    ) -> None:
        self._sealer = sealer
        self._http = http
        self._endpoints = endpoints
        self._suppressions = suppressions

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        return bool(getattr(CHAT_PROVIDERS.get(account.vendor), "supports_idempotency", False))

    def destination(self, account: ProviderAccount, job: Job) -> str | None:
        """Where a send goes: the webhook URL of a vendor whose endpoint is one, else the
        ``base_url`` (None: the real API)."""
        vendor = VENDORS.get(account.vendor)
        if vendor is not None and vendor.endpoint == "webhook_url":
            url = open_credentials(self._sealer, account).get("webhook_url")
            return str(url) if url else None
        base_url = account.config.get("base_url")
        return str(base_url) if base_url else None

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        """Send ``job`` through ``account``. A refused endpoint is provider_permanent; a
        blocked chat is suppressed, then the failure goes on (message_permanent)."""
        kind = str(chat_payload(job).get("kind") or "")
        if account.vendor != kind:
            raise ProviderFailure(
                FailureClass.PROVIDER_PERMANENT,
                f"{account.vendor}: not sent, the job is addressed to a {kind} chat",
            )
        try:
            return await self._send(account, job)
        except EndpointRefused as exc:
            raise ProviderFailure(
                FailureClass.PROVIDER_PERMANENT, f"{account.vendor}: not sent, {exc.message}"
            ) from None
        except RecipientBlocked:
            await self._suppress(job)
            raise

    async def _send(self, account: ProviderAccount, job: Job) -> SendResult:
        credentials = open_credentials(self._sealer, account)
        if self._endpoints is not None:
            self._endpoints.policy.check_account(account.vendor, credentials, account.config)
        adapter = chat_provider(account.vendor, credentials, account.config, self._http)
        payload = chat_payload(job)
        message = OutgoingChat(
            job_id=job.id,
            to=str(payload["to"]),
            text=str(payload["text"]),
            format=payload.get("format") or "plain",
        )
        return await adapter.send(message)

    async def _suppress(self, job: Job) -> None:
        if self._suppressions is None:
            return
        payload = chat_payload(job)
        kind = str(payload.get("kind"))
        address = chat_recipient(kind, str(payload["to"]))
        try:
            await self._suppressions.add(job.tenant_id, Channel.CHAT, address, BLOCKED_REASON, kind)
        except Exception:  # the job's outcome must still be recorded
            log.exception("could not suppress a blocked chat", extra={"job_id": job.id})
