"""Sending one message on a channel, a batch of them, or one notification over several
channels; and the webhook channel's signing secret and gone endpoints."""

from __future__ import annotations

from typing import Any

from homing_client import models
from homing_client._async._resource import Resource
from homing_client._core import Call, drop_none, segment


class Email(Resource):
    async def send(
        self,
        *,
        to: str,
        from_: str,
        subject: str | None = None,
        text: str | None = None,
        html: str | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> models.Queued:
        """Queue one email (``options``: priority, provider, fallback, delivery, …; or
        ``template``, ``data`` and ``locale`` in place of subject, text and html)."""
        body = drop_none(to=to, subject=subject, text=text, html=html, **options)
        body["from"] = from_
        call = Call(
            "POST", "/v1/notifications/email", models.Queued, body, {}, True, idempotency_key
        )
        return await self._c.request(call)


class Sms(Resource):
    async def send(
        self,
        *,
        to: str,
        body: str | None = None,
        from_: str | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> models.Queued:
        """Queue one SMS."""
        payload = drop_none(to=to, body=body, **options)
        if from_ is not None:
            payload["from"] = from_
        call = Call(
            "POST", "/v1/notifications/sms", models.Queued, payload, {}, True, idempotency_key
        )
        return await self._c.request(call)


class Chat(Resource):
    async def send(
        self,
        *,
        to: str,
        text: str | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> models.Queued:
        """Queue one chat message."""
        payload = drop_none(to=to, text=text, **options)
        call = Call(
            "POST", "/v1/notifications/chat", models.Queued, payload, {}, True, idempotency_key
        )
        return await self._c.request(call)


class Webhooks(Resource):
    async def send(
        self, *, url: str, payload: Any, idempotency_key: str | None = None, **options: Any
    ) -> models.Queued:
        """Queue one webhook delivery of ``payload`` (JSON) to ``url``."""
        body = drop_none(url=url, **options)
        body["payload"] = payload
        call = Call(
            "POST", "/v1/notifications/webhook", models.Queued, body, {}, True, idempotency_key
        )
        return await self._c.request(call)

    async def create_secret(self) -> models.WebhookSecretIssued:
        """A new signing secret (``whsec_…``), shown this once."""
        call = Call("POST", "/v1/webhook-secret", models.WebhookSecretIssued)
        return await self._c.request(call)

    async def secret(self) -> models.WebhookSecretStatus:
        """Whether a signing secret is set, and its preview (never the secret)."""
        return await self._c.request(Call("GET", "/v1/webhook-secret", models.WebhookSecretStatus))

    async def rotate_secret(self) -> models.WebhookSecretIssued:
        """A new secret; the old one keeps verifying for the overlap Homing documents."""
        call = Call("POST", "/v1/webhook-secret/rotate", models.WebhookSecretIssued)
        return await self._c.request(call)

    async def delete_secret(self) -> None:
        """Stop signing webhook deliveries."""
        await self._c.request(Call("DELETE", "/v1/webhook-secret", None))

    async def gone_endpoints(self) -> list[models.GoneEndpointPublic]:
        """The endpoints Homing stopped delivering to after they answered 410 Gone."""
        call = Call("GET", "/v1/webhook-endpoints/gone", models.PageGoneEndpointPublic)
        return (await self._c.request(call)).data

    async def enable_endpoint(self, url: str) -> None:
        """Deliver to a gone endpoint again."""
        body = {"url": url}
        await self._c.request(Call("POST", "/v1/webhook-endpoints/enable", None, body))


class Batch(Resource):
    async def email(
        self, messages: list[dict[str, Any]], *, idempotency_key: str | None = None
    ) -> models.BatchResult:
        """Queue up to the batch limit of emails at once (each a dict of EmailCreate)."""
        call = Call(
            "POST",
            "/v1/notifications/email/batch",
            models.BatchResult,
            {"messages": messages},
            {},
            True,
            idempotency_key,
        )
        return await self._c.request(call)

    async def sms(
        self, messages: list[dict[str, Any]], *, idempotency_key: str | None = None
    ) -> models.BatchResult:
        call = Call(
            "POST",
            "/v1/notifications/sms/batch",
            models.BatchResult,
            {"messages": messages},
            {},
            True,
            idempotency_key,
        )
        return await self._c.request(call)


class Notifications(Resource):
    """One notification to a recipient over several channels (docs/notifications.md)."""

    async def send(
        self,
        *,
        recipient: str,
        template: str,
        channels: list[str],
        strategy: str,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> models.NotificationPublic:
        """Queue one notification (``strategy``: all, first or escalate; ``options``:
        data, locale, category, escalate_after_seconds, priority, ``from_``)."""
        sender = options.pop("from_", None)
        body = drop_none(
            recipient=recipient, template=template, channels=channels, strategy=strategy, **options
        )
        if sender is not None:
            body["from"] = sender
        call = Call(
            "POST", "/v1/notifications", models.NotificationPublic, body, {}, True, idempotency_key
        )
        return await self._c.request(call)

    async def get(self, notification_id: str) -> models.NotificationPublic:
        """The notification and each channel's step."""
        path = f"/v1/notifications/{segment(notification_id)}"
        return await self._c.request(Call("GET", path, models.NotificationPublic))


class InApp(Resource):
    async def send(
        self, *, recipient: str, idempotency_key: str | None = None, **options: Any
    ) -> models.Queued:
        """Queue one item for a recipient's in-app feed (``options``: title, body, url,
        category; or template, data and locale)."""
        body = drop_none(recipient=recipient, **options)
        call = Call(
            "POST", "/v1/notifications/in-app", models.Queued, body, {}, True, idempotency_key
        )
        return await self._c.request(call)
