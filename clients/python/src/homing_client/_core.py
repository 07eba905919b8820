"""What the sync and async clients share: one call's shape, the retry policy (pure),
turning a response into a model or an exception, and a listing's page."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from homing_client.errors import ApiError, error_for

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

RETRY_STATUSES = frozenset({429, 503})
# Retry-After is honoured up to this many seconds; a longer wait is raised to the caller.
MAX_RETRY_AFTER = 60.0
DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 3
USER_AGENT = "homing-client-python/0.1.0"


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call: what to send, and the model its answer parses into (None: none)."""

    method: str
    path: str
    model: type[T] | None = None
    json: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    # POSTs that create something carry an Idempotency-Key, the same on every retry.
    idempotent_key: bool = False
    idempotency_key: str | None = None

    def headers(self) -> dict[str, str]:
        if not self.idempotent_key:
            return {}
        return {"Idempotency-Key": self.idempotency_key or f"sdk-{uuid.uuid4()}"}

    def query(self) -> dict[str, Any]:
        return {k: v for k, v in self.params.items() if v is not None}


def retry_delay(response: httpx.Response, attempt: int, backoff: float) -> float | None:
    """Seconds to wait before retrying ``response`` (attempt counts from 0), or None
    when it is not retried: only 429 and 503, and only a Retry-After Homing can keep."""
    if response.status_code not in RETRY_STATUSES:
        return None
    header = response.headers.get("Retry-After", "")
    if header.isascii() and header.isdigit() and len(header) <= 6:
        wait = float(header)
    else:
        wait = backoff * (2**attempt)
    if wait > MAX_RETRY_AFTER:
        return None
    return wait + random.uniform(0, backoff)


def result(call: Call[T], response: httpx.Response) -> T:
    """The call's answer as its model; the error class of its code otherwise. A redirect
    is an error too: the client follows none (a send's body never goes to the place a
    redirect names), and Homing answers none on the API."""
    if response.is_redirect or 300 <= response.status_code < 400:
        raise ApiError(
            f"HTTP {response.status_code}: a redirect, which the client does not follow",
            status=response.status_code,
            code="redirect",
            request_id=response.headers.get("X-Request-Id"),
        )
    if response.status_code >= 400:
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        header = response.headers.get("Retry-After", "")
        retry_after = float(header) if header.isascii() and header.isdigit() else None
        raise error_for(
            response.status_code, body, response.headers.get("X-Request-Id"), retry_after
        )
    if call.model is None or response.status_code == 204:
        return None  # type: ignore[return-value]
    if issubclass(call.model, BaseModel):
        return call.model.model_validate_json(response.content)
    return response.json()  # type: ignore[no-any-return]


def base_headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT}


def drop_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def segment(value: str) -> str:
    """One path segment: an id never adds a ``/`` or a ``?`` to the URL."""
    return quote(value, safe="")


class Page(Protocol[T_co]):
    """A cursor page of a listing: its items and the cursor of the next (None: last)."""

    @property
    def data(self) -> Sequence[T_co]: ...
    @property
    def next_cursor(self) -> str | None: ...
