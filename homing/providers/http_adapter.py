"""The base every HTTP adapter stands on: one request path, one failure skeleton.

A vendor's adapter says only what is its own: its default API (``default_base_url``),
its headers and auth (``_headers``, ``_auth``), which of its credentials must never be
echoed (``_secrets``), and how its error replies read (``classify``, and where the
vendor differs, ``_retry_after``, ``_detail``, ``_suppress``). The rest is here, the
same for all of them:

- every request goes through ``homing.providers.http.send_request`` (no redirect
  followed; a transport failure classified as never sent or maybe sent);
- every response body was read capped by the client (``homing.providers.transport``,
  ``MAX_RESPONSE_BYTES``), and every call runs under one total deadline
  (``homing.providers.deadline.within``), applied once by the caller of each path: the
  adapter neither re-reads nor re-times;
- every failure is a ``ProviderFailure`` named ``"<vendor>: HTTP <status>: …"`` with the
  vendor's secrets masked, and a retry hint only when the class is ``throttled``.

Batch sends (``send_batch``, where a vendor has a batch endpoint) return one
``SendResult`` or ``ProviderFailure`` per message, in order: an error reply for the
whole call is that failure for every item (classified by the vendor's same table), and
an answer that cannot be read item by item is ``uncertain`` for every item
(``unreadable_batch``). The vendors that answer a request once for all its items follow
a ``message_permanent`` refusal of it with each item alone
(``homing.providers.one_answer``).

Email and SMS adapters (``homing/vendors/<name>/adapter.py``) are built on it; each
keeps its status table and its wire format in its own file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

import httpx

from homing.models import FailureClass
from homing.providers.base import ProviderFailure, SendResult
from homing.providers.http import (
    USER_AGENT,
    parse_retry_after,
    redact,
    response_detail,
    send_request,
)

__all__ = [
    "JSON_HEADERS",
    "MESSAGE_PERMANENT",
    "PROVIDER_PERMANENT",
    "THROTTLED",
    "TRANSIENT",
    "UNCERTAIN",
    "BatchOutcome",
    "HttpAdapter",
    "unreadable_batch",
]

# How much of a vendor's words about one batch item a failure keeps.
MAX_ITEM_WORDS: Final = 200

# What a batch send says about one of its messages.
BatchOutcome = SendResult | ProviderFailure


def unreadable_batch(vendor: str, count: int, why: str) -> list[BatchOutcome]:
    """``uncertain`` for each of ``count`` items: the call reached the vendor, but its
    answer does not say which messages it took."""
    detail = f"{vendor}: batch answer unreadable ({why}); the messages may have been sent"
    return [ProviderFailure(UNCERTAIN, detail) for _ in range(count)]


# The failure classes, by the short names the vendors' tables use.
TRANSIENT: Final = FailureClass.TRANSIENT
THROTTLED: Final = FailureClass.THROTTLED
PROVIDER_PERMANENT: Final = FailureClass.PROVIDER_PERMANENT
MESSAGE_PERMANENT: Final = FailureClass.MESSAGE_PERMANENT
UNCERTAIN: Final = FailureClass.UNCERTAIN

# What most vendors' APIs are sent: JSON is wanted back, and who is asking.
JSON_HEADERS: Final = {"Accept": "application/json", "User-Agent": USER_AGENT}


class HttpAdapter:
    """One vendor's HTTP API under ``base_url`` (``config.base_url``, else the vendor's
    ``default_base_url``), reached through the injected client."""

    name: ClassVar[str]
    supports_idempotency: ClassVar[bool] = False
    default_base_url: ClassVar[str]
    # How many messages one batch call may carry (0: the adapter has no send_batch),
    # and how many bytes of content in all.
    batch_limit: ClassVar[int] = 0
    batch_bytes: ClassVar[int] = 0

    def __init__(self, http: httpx.AsyncClient, base_url: str) -> None:
        self._http = http
        self._base_url = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r})"

    @classmethod
    def base_url_of(cls, config: dict[str, Any]) -> str:
        """``config.base_url``, else the vendor's own API."""
        return str(config.get("base_url") or cls.default_base_url)

    # What each vendor says ------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return dict(JSON_HEADERS)

    def _auth(self) -> httpx.Auth | tuple[str, str] | None:
        return None

    def _secrets(self) -> list[str]:
        """The credentials masked in every failure's detail."""
        return []

    def classify(self, response: httpx.Response) -> FailureClass:
        """The failure class of an error reply (the vendor's table)."""
        raise NotImplementedError

    def _retry_after(self, response: httpx.Response) -> float | None:
        return parse_retry_after(response.headers.get("Retry-After"))

    def _detail(self, response: httpx.Response, secrets: Sequence[str]) -> str:
        return response_detail(response, secrets=secrets)

    def _suppress(self, response: httpx.Response) -> str | None:
        return None

    # The same for all -----------------------------------------------------------------

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request to ``base_url + path`` with the vendor's headers and auth (unless
        the call gives its own); transport errors become ``ProviderFailure``."""
        kwargs.setdefault("headers", self._headers())
        auth = self._auth()
        if auth is not None:
            kwargs.setdefault("auth", auth)
        return await send_request(self._http, self.name, method, self._base_url + path, **kwargs)

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """``_request``, and a ``ProviderFailure`` for any reply but a 2xx."""
        response = await self._request(method, path, **kwargs)
        if not response.is_success:
            raise self._failure(response)
        return response

    async def _batch_call(
        self, path: str, body: list[dict[str, Any]], headers: dict[str, str]
    ) -> httpx.Response | list[BatchOutcome]:
        """POST a batch: the response when it is a 2xx, else the call's failure for
        every item (a transport failure too, never sent or maybe sent as classified)."""
        try:
            response = await self._request("POST", path, headers=headers, json=body)
        except ProviderFailure as failure:
            return [failure] * len(body)
        if not response.is_success:
            return [self._failure(response)] * len(body)
        return response

    def _item_words(self, words: object) -> str:
        """A batch item's own words from the vendor: every secret masked, then capped."""
        return redact(str(words or ""), self._secrets())[:MAX_ITEM_WORDS]

    def _failure(self, response: httpx.Response, secrets: Sequence[str] = ()) -> ProviderFailure:
        """The ``ProviderFailure`` of an error reply: its class, the vendor's words with
        every secret masked, and when to try again if it was throttled."""
        failure_class = self.classify(response)
        retry_after = self._retry_after(response) if failure_class is THROTTLED else None
        detail = self._detail(response, [*self._secrets(), *secrets])
        return ProviderFailure(
            failure_class,
            f"{self.name}: {detail}",
            status_code=response.status_code,
            retry_after=retry_after,
            suppress=self._suppress(response),
        )
