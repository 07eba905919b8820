"""The webhook channel's ``Sender``: load what a delivery needs, call, record a 410.

The provider (``homing.providers.webhook.sender``) does the HTTP call only. Before
it, one short transaction reads the tenant's live signing secrets, whether the URL
is marked gone and the signature format (``WebhookStore.delivery_context``); no
connection is held during the call. After it, a 410 (``EndpointGone``) marks the
URL gone in another transaction, so later jobs to it fail without a request until
the tenant re-enables it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from homing.crypto import Sealer
from homing.metrics import WEBHOOK_DELIVERIES
from homing.models import FailureClass, Job, ProviderAccount, webhook_payload
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.webhook.sender import NAME, EndpointGone, Signing, WebhookSender
from homing.store.webhooks import SecretRecord, WebhookStore
from homing.webhooks.message import read_message

__all__ = ["WebhookDelivery"]

# The outcome label: delivered, gone (a 410) or the failure class of the call.
DELIVERED = "delivered"
GONE = "gone"

OpenSecrets = Callable[[Sequence[SecretRecord]], list[str]]


class WebhookDelivery:
    """Delivers a webhook job through ``sender`` with what the database holds for it.

    ``open_secrets`` turns the stored (sealed) signing secrets into plaintext right
    before the call (``WebhookSecrets.open_all``).
    """

    def __init__(
        self, sender: WebhookSender, store: WebhookStore, open_secrets: OpenSecrets, sealer: Sealer
    ) -> None:
        self._sender = sender
        self._store = store
        self._open_secrets = open_secrets
        self._sealer = sealer

    def supports_idempotency(self, account: ProviderAccount) -> bool:
        # Receivers deduplicate on webhook-id; timeouts are transient, never uncertain.
        return False

    def destination(self, account: ProviderAccount, job: Job) -> str | None:
        """The URL this job is delivered to (the sandbox guard of test keys asks)."""
        url = job.payload.get("url")
        return url if isinstance(url, str) else None

    async def send(self, account: ProviderAccount, job: Job) -> SendResult:
        """Refuse a URL marked gone without a request; else sign and POST, and mark
        the URL gone when it answers 410."""
        message = read_message(self._sealer, job.tenant_id, webhook_payload(job))
        context = await self._store.delivery_context(job.tenant_id, message.url)
        if context.gone:
            raise ProviderFailure(
                FailureClass.MESSAGE_PERMANENT,
                f"{NAME}: the endpoint answered 410 Gone before; "
                "re-enable it with POST /v1/webhook-endpoints/enable",
            )
        signing = Signing(
            self._open_secrets(context.secrets), context.settings.webhook_signature_format
        )
        try:
            result = await self._sender.send(job, message, signing)
        except EndpointGone:
            WEBHOOK_DELIVERIES.labels(GONE).inc()
            await self._store.mark_gone(job.tenant_id, message.url, job.id)
            raise
        except ProviderFailure as exc:
            WEBHOOK_DELIVERIES.labels(exc.failure_class.value).inc()
            raise
        WEBHOOK_DELIVERIES.labels(DELIVERED).inc()
        return result
