"""The webhook channel's parts: the endpoint store, the signing secrets, the guarded
clients and the URL policy they share (docs/webhooks.md)."""

from __future__ import annotations

from dataclasses import dataclass

from homing.managers.webhook_secrets import WebhookSecrets
from homing.providers.webhook.clients import WebhookClients
from homing.providers.webhook.ssrf import UrlPolicy, check_url, normalise_url
from homing.store.webhooks import WebhookStore


@dataclass(kw_only=True)
class WebhookChannel:
    """What the webhook routes, the console and the worker's sender use alike."""

    store: WebhookStore
    secrets: WebhookSecrets
    clients: WebhookClients
    policy: UrlPolicy
    max_payload_bytes: int
    excerpt_bytes: int

    def check_url(self, url: str) -> str:
        """The normalised ``url``, or ``UrlRefused``: what the URL alone shows (the API
        checks it at accept; the guarded clients check the resolved addresses)."""
        return check_url(url, self.policy)

    @staticmethod
    def normalise_url(url: str) -> str:
        """``url`` as Homing stores and compares it."""
        return normalise_url(url)

    async def aclose(self) -> None:
        await self.clients.aclose()
