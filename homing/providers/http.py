"""What the HTTP adapters share: transport errors, retry hints and safe error details.

Every adapter sends through ``send_request`` so a network failure is classified the
same way everywhere: a failure before the request left us is ``transient``; one after
it may have reached the provider is ``uncertain``, because the provider may have
accepted the message.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Final

import httpx

from homing import __version__
from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import ProviderFailure

__all__ = [
    "MAX_DETAIL",
    "USER_AGENT",
    "classify_status",
    "json_body",
    "match_rules",
    "parse_retry_after",
    "redact",
    "require_credential",
    "response_detail",
    "seconds_until_date_in_text",
    "seconds_until_epoch",
    "seconds_until_next_utc_midnight",
    "send_request",
    "status_detail",
    "transport_failure",
]

MAX_DETAIL: Final = 300
USER_AGENT: Final = f"homing/{__version__}"

# Raised before a single byte of the request reached the provider.
_NEVER_SENT: Final = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.ProxyError,
    httpx.LocalProtocolError,
)
_TRY_AGAIN_AFTER: Final = "try again after"
# A provider's message is attacker text as far as we know: only this much of it is
# searched for a retry hint, and a date longer than any RFC 2822 date is not parsed.
MAX_HINT_TEXT: Final = 2048
_MAX_DATE_TEXT: Final = 64
_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def transport_failure(provider: str, exc: httpx.TransportError) -> ProviderFailure:
    """Classify an httpx transport error: never sent is transient, maybe sent is uncertain.

    The detail names only the exception type: httpx messages can quote the URL and the
    request travels with the exception, so nothing from either is copied.
    """
    kind = type(exc).__name__
    if isinstance(exc, httpx.UnsupportedProtocol):
        return ProviderFailure(
            FailureClass.PROVIDER_PERMANENT, f"{provider}: unsupported URL scheme ({kind})"
        )
    if isinstance(exc, _NEVER_SENT):
        return ProviderFailure(
            FailureClass.TRANSIENT, f"{provider}: request not sent, connection failed ({kind})"
        )
    return ProviderFailure(
        FailureClass.UNCERTAIN, f"{provider}: no response after the request was sent ({kind})"
    )


async def send_request(
    http: httpx.AsyncClient, provider: str, method: str, url: str, **kwargs: Any
) -> httpx.Response:
    """Send one request through the injected client, turning transport errors into failures.

    Keyword arguments go to ``httpx.AsyncClient.request`` unchanged. Redirects are never
    followed: a provider API that redirects is misconfigured, and following would send
    the credentials again, to another host.
    """
    try:
        return await http.request(method, url, follow_redirects=False, **kwargs)
    except httpx.TransportError as exc:
        raise transport_failure(provider, exc) from exc


def classify_status(status: int, table: Mapping[int, FailureClass]) -> FailureClass:
    """Look a status code up in a vendor table, with a fallback for codes it does not list.

    An unlisted 5xx is transient. An unlisted 3xx or 4xx is provider_permanent: it more
    likely means a changed contract or a wrong base URL than a fault of this one message,
    and another provider may still take the message.
    """
    if status in table:
        return table[status]
    if status >= 500:
        return FailureClass.TRANSIENT
    return FailureClass.PROVIDER_PERMANENT


def match_rules(text: str, rules: Sequence[tuple[str, FailureClass]]) -> FailureClass | None:
    """Return the class of the first rule whose phrase occurs in ``text`` (case-insensitive)."""
    lowered = text.lower()
    for phrase, failure_class in rules:
        if phrase in lowered:
            return failure_class
    return None


def json_body(response: httpx.Response) -> Any:
    """The decoded JSON body, or ``None`` when the body is empty or not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def _messages(body: Any) -> list[str]:
    if not isinstance(body, dict):
        return []
    parts = [str(body[key]) for key in ("name", "message", "Message") if body.get(key)]
    if body.get("ErrorCode"):
        parts.insert(0, f"ErrorCode {body['ErrorCode']}")
    errors = body.get("errors")
    if isinstance(errors, list):
        for error in errors:
            if isinstance(error, dict) and error.get("message"):
                field = f" ({error['field']})" if error.get("field") else ""
                parts.append(f"{error['message']}{field}")
    return parts


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace every occurrence of each non-empty secret in ``text`` with ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def response_detail(response: httpx.Response, *, secrets: Iterable[str] = ()) -> str:
    """A short, safe description of an error response: status and the provider's message.

    Only the response body is read, never the request, so request headers cannot leak;
    ``secrets`` are still masked in case a provider echoes a key back. Capped at
    ``MAX_DETAIL`` characters.
    """
    parts = _messages(json_body(response))
    message = ": ".join(parts) if parts else response.text
    message = " ".join(message.split())
    detail = f"HTTP {response.status_code}" + (f": {message}" if message else "")
    return redact(detail, secrets)[:MAX_DETAIL]


_CODE_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_MAX_CODE: Final = 64


def _vendor_code(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    code = body.get("ErrorCode", body.get("name"))
    if isinstance(code, bool) or not isinstance(code, int | str):
        return None
    text = str(code)
    if not 0 < len(text) <= _MAX_CODE or not set(text) <= _CODE_CHARS:
        return None
    return text


def status_detail(response: httpx.Response) -> str:
    """The status and the vendor's error code (a ``name`` or an ``ErrorCode`` field)
    and nothing else of the body: what a credential check may show, since
    the tenant chose the endpoint and its words must not come back through Homing."""
    code = _vendor_code(json_body(response))
    return f"HTTP {response.status_code}" + (f", {code}" if code else "")


def require_credential(credentials: Mapping[str, Any], key: str, provider: str) -> str:
    """Return ``credentials[key]`` as a non-empty string or raise ``InvalidCredentials``.

    The message names the missing field, never a value.
    """
    value = credentials.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidCredentials(f"{provider} credentials need a non-empty {key!r}")
    if not (value.isascii() and value.isprintable()):
        # It travels in an HTTP header or URL: a line break would inject, and the
        # client refuses anything but ASCII there anyway.
        raise InvalidCredentials(f"{provider} {key!r} must be printable ASCII")
    return value


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delta-seconds or an HTTP-date.

    Returns ``None`` when the value is missing or unreadable; never negative.
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        return _seconds_until(value, now)


def seconds_until_epoch(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds until a reset time given as Unix epoch seconds (``X-RateLimit-Reset``)."""
    if not value:
        return None
    try:
        reset = float(value.strip())
    except ValueError:
        return None
    return max(0.0, reset - (time.time() if now is None else now))


def seconds_until_date_in_text(text: str, *, now: float | None = None) -> float | None:
    """Seconds until the RFC 2822 date in "… try again after <date>" (a vendor's 429 text).

    Linear in the text, of which at most ``MAX_HINT_TEXT`` characters are read.
    """
    date = _date_after_phrase(text[:MAX_HINT_TEXT])
    if date is None or len(date) > _MAX_DATE_TEXT:
        return None
    return _seconds_until(date, now)


def _date_after_phrase(text: str) -> str | None:
    """What follows the first "try again after" + whitespace (any letter case), stripped."""
    lowered = text.translate(_ASCII_LOWER)  # ASCII only, so indices stay aligned
    start = lowered.find(_TRY_AGAIN_AFTER)
    while start != -1:
        end = start + len(_TRY_AGAIN_AFTER)
        if text[end : end + 1].isspace():
            return text[end:].strip().rstrip(".") or None
        start = lowered.find(_TRY_AGAIN_AFTER, end)
    return None


def seconds_until_next_utc_midnight(*, now: float | None = None) -> float:
    """Seconds until the next 00:00 UTC, when daily provider quotas reset."""
    current = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    midnight = datetime.combine(current.date() + timedelta(days=1), datetime.min.time(), UTC)
    return (midnight - current).total_seconds()


def _seconds_until(date_text: str, now: float | None) -> float | None:
    try:
        moment = parsedate_to_datetime(date_text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))
