"""Twilio signs the URL it posted to and the form it posted: ``X-Twilio-Signature``.

The signature is ``base64(HMAC-SHA1(auth_token, url + key+value for every form
parameter, sorted by key and then by value))``, as twilio-python's
``RequestValidator`` computes it; a JSON body is signed as the URL alone, which then
carries ``bodySHA256`` (the hex SHA-256 of the body). The URL is the public one Twilio
was given (``HOMING_PUBLIC_URL`` + the inbound path, or the request's own URL); Twilio
signs it with or without the default port depending on the product, so both spellings
are tried. No timestamp is signed: a replayed callback verifies, and is then a repeat
the journal answers without applying it twice (each status of a message is one event).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import parse_qs, parse_qsl, urlsplit, urlunsplit

from homing.inbound.verification import Signed, VerificationFailed, lowered, masked, secret_string

HEADER: Final = "x-twilio-signature"
# Twilio's status callbacks and inbound messages hold a few dozen fields.
MAX_FIELDS: Final = 200
_MAX_SIGNATURE: Final = 100
_DEFAULT_PORTS: Final = {"https": 443, "http": 80}


def form_fields(body: bytes) -> list[tuple[str, str]]:
    """The form-encoded body as (key, value) pairs; VerificationFailed when it is not one."""
    try:
        return parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=MAX_FIELDS,
        )
    except (UnicodeDecodeError, ValueError):
        raise VerificationFailed() from None


def signature(auth_token: str, url: str, params: Sequence[tuple[str, str]]) -> str:
    """The X-Twilio-Signature of a request to ``url`` with these form ``params``."""
    values: dict[str, set[str]] = {}
    for key, value in params:
        values.setdefault(key, set()).add(value)
    signed = url + "".join(key + value for key in sorted(values) for value in sorted(values[key]))
    mac = hmac.new(auth_token.encode(), signed.encode("utf-8"), hashlib.sha1)
    return base64.b64encode(mac.digest()).decode()


def spellings(url: str) -> tuple[str, str]:
    """``url`` without and with its scheme's default port (one of them is ``url``)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    default = _DEFAULT_PORTS.get(parts.scheme)
    port = parts.port
    if port is None:
        with_port = urlunsplit(parts._replace(netloc=f"{host}:{default}")) if default else url
        return url, with_port
    without = urlunsplit(parts._replace(netloc=host)) if port == default else url
    return without, url


def verify(auth_token: str, url: str, body: bytes, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless ``X-Twilio-Signature`` signs ``url`` and ``body``."""
    given = lowered(headers).get(HEADER, "")
    if not given or len(given) > _MAX_SIGNATURE or not given.isascii():
        raise VerificationFailed()
    query = parse_qs(urlsplit(url).query)
    if "bodySHA256" in query:
        digest = hashlib.sha256(body).hexdigest()
        if not hmac.compare_digest(digest.encode(), query["bodySHA256"][0].encode()):
            raise VerificationFailed()
        params: list[tuple[str, str]] = []
    else:
        params = form_fields(body)
    matched = False
    for spelling in spellings(url):
        expected = signature(auth_token, spelling, params)
        matched |= hmac.compare_digest(expected.encode(), given.encode())
    if not matched:
        raise VerificationFailed()


def accept(value: Any) -> None:
    """ValueError unless ``value`` can be the account's auth token."""
    secret_string(value)


def check(value: Any, request: Signed) -> None:
    """``verify`` with the account's auth token, over the URL Twilio posted to."""
    verify(value, request.url, request.body, request.headers)


preview = masked
