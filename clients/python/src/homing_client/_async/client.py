"""``AsyncClient``: the client over ``httpx.AsyncClient``; its resources, one attribute
each, are in the modules of this package named after what they cover."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Self, TypeVar

import httpx

from homing_client._async.account import (
    ApiKeys,
    AuditLog,
    Domains,
    Providers,
    Reports,
    Settings,
    Usage,
)
from homing_client._async.admin import Admin
from homing_client._async.jobs import DeadLetters, Jobs
from homing_client._async.recipients import Categories, Erasure, Feed, Recipients, Suppressions
from homing_client._async.sending import Batch, Chat, Email, InApp, Notifications, Sms, Webhooks
from homing_client._async.templates import Layouts, Templates
from homing_client._core import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    Call,
    base_headers,
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
        self.templates = Templates(self)
        self.recipients = Recipients(self)
        self.categories = Categories(self)
        self.notifications = Notifications(self)
        self.in_app = InApp(self)
        self.feed = Feed(self)
        self.erasure = Erasure(self)
        self.layouts = Layouts(self)
        self.api_keys = ApiKeys(self)
        self.domains = Domains(self)
        self.settings = Settings(self)
        self.usage = Usage(self)
        self.reports = Reports(self)
        self.audit_log = AuditLog(self)
        self.dead_letters = DeadLetters(self)
        self.admin = Admin(self)

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
                    # Even on a client handed in with redirects on: a send's body never
                    # goes where a redirect points (``result`` raises on a 3xx).
                    follow_redirects=False,
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
