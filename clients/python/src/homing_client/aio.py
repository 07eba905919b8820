"""``AsyncClient``: ``homing_client.client.Client`` with ``await``. Change both files
together: tests/sdk/test_units.py fails when their resources' signatures differ.

    client = Client(base_url="http://127.0.0.1:8000", api_key="hk_...")
    queued = client.email.send(to="ada@example.com", from_="a@acme.example",
                               subject="Hello", text="Hi")
    job = client.jobs.get(queued.id)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Self, TypeVar

import httpx

from homing_client import models
from homing_client._core import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    Call,
    base_headers,
    drop_none,
    result,
    retry_delay,
)
from homing_client.errors import HomingConnectionError, HomingTimeout

T = TypeVar("T")

__all__ = ["AsyncClient"]


class AsyncClient:
    """A Homing API client authenticated with one API key.

    ``timeout`` bounds each HTTP request (seconds); ``max_retries`` bounds the retries of
    a 429 or 503, each after the ``Retry-After`` Homing sent (at most 60 s, or the call
    raises). Every sending call carries an ``Idempotency-Key`` (yours, or one generated
    per call) that its retries reuse, so a retried send is accepted once.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
        backoff: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._base_url = base_url.rstrip("/")
        self._headers = base_headers(api_key)
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep  # injectable, so a test can see the waits without taking them
        self.email = Email(self)
        self.sms = Sms(self)
        self.chat = Chat(self)
        self.webhooks = Webhooks(self)
        self.batch = Batch(self)
        self.jobs = Jobs(self)
        self.suppressions = Suppressions(self)
        self.providers = Providers(self)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(self, call: Call[T]) -> T:
        """Send one call, retrying a 429/503 after its Retry-After; the parsed answer."""
        headers = {**self._headers, **call.headers()}
        for attempt in range(self.max_retries + 1):
            try:
                response = await self._http.request(
                    call.method,
                    self._base_url + call.path,
                    json=call.json,
                    params=call.query(),
                    headers=headers,
                )
            except httpx.TimeoutException as exc:
                raise HomingTimeout(f"{call.method} {call.path} timed out") from exc
            except httpx.TransportError as exc:
                raise HomingConnectionError(f"{call.method} {call.path}: {exc}") from exc
            wait = retry_delay(response, attempt, self.backoff)
            if wait is None or attempt == self.max_retries:
                return result(call, response)
            await self._sleep(wait)
        raise AssertionError("unreachable")


class _Resource:
    def __init__(self, client: AsyncClient) -> None:
        self._c = client


class Email(_Resource):
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


class Sms(_Resource):
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


class Chat(_Resource):
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


class Webhooks(_Resource):
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


class Batch(_Resource):
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


class Jobs(_Resource):
    async def get(self, job_id: str) -> models.JobPublic:
        return await self._c.request(Call("GET", f"/v1/jobs/{_segment(job_id)}", models.JobPublic))

    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageJobSummary:
        """One page of jobs, newest first (``filters``: to, channel, status, since, …)."""
        params = {"cursor": cursor, "limit": limit, **filters}
        return await self._c.request(Call("GET", "/v1/jobs", models.PageJobSummary, params=params))

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.JobSummary]:
        """Every job matching ``filters``, fetching the cursor pages as it goes."""
        cursor: str | None = None
        while True:
            page = await self.page(cursor=cursor, limit=limit, **filters)
            for item in page.data:
                yield item
            cursor = page.next_cursor
            if not cursor:
                return

    async def retry(self, job_id: str) -> models.Queued:
        path = f"/v1/jobs/{_segment(job_id)}/retry"
        return await self._c.request(Call("POST", path, models.Queued))

    async def cancel(self, job_id: str) -> models.JobSummary:
        path = f"/v1/jobs/{_segment(job_id)}/cancel"
        return await self._c.request(Call("POST", path, models.JobSummary))


class Suppressions(_Resource):
    async def list(self, *, channel: str | None = None) -> AsyncIterator[models.SuppressionPublic]:
        cursor: str | None = None
        while True:
            params = {"channel": channel, "cursor": cursor}
            call = Call("GET", "/v1/suppressions", models.PageSuppressionPublic, params=params)
            page = await self._c.request(call)
            for item in page.data:
                yield item
            cursor = page.next_cursor
            if not cursor:
                return

    async def add(
        self, address: str, *, channel: str = "email", reason: str | None = None
    ) -> models.SuppressionPublic:
        body = drop_none(address=address, channel=channel, reason=reason)
        return await self._c.request(
            Call("POST", "/v1/suppressions", models.SuppressionPublic, body)
        )

    async def remove(self, address: str, *, channel: str = "email") -> None:
        params = {"address": address, "channel": channel}
        await self._c.request(Call("DELETE", "/v1/suppressions", None, params=params))


class Providers(_Resource):
    async def list(self) -> list[models.ProviderPublic]:
        page = await self._c.request(Call("GET", "/v1/providers", models.PageProviderPublic))
        return page.data

    async def create(
        self,
        *,
        channel: str,
        provider: str,
        credentials: dict[str, Any],
        config: dict[str, Any] | None = None,
        **options: Any,
    ) -> models.ProviderPublic:
        body = drop_none(
            channel=channel, provider=provider, credentials=credentials, config=config, **options
        )
        return await self._c.request(Call("POST", "/v1/providers", models.ProviderPublic, body))

    async def update(self, provider_id: str, **changes: Any) -> models.ProviderPublic:
        path = f"/v1/providers/{_segment(provider_id)}"
        return await self._c.request(Call("PATCH", path, models.ProviderPublic, changes))

    async def delete(self, provider_id: str) -> None:
        await self._c.request(Call("DELETE", f"/v1/providers/{_segment(provider_id)}", None))


def _segment(value: str) -> str:
    """One path segment: an id never adds a ``/`` or a ``?`` to the URL."""
    from urllib.parse import quote

    return quote(value, safe="")
