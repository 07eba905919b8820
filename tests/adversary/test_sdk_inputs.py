"""What a hostile peer can hand the Python SDK is bounded before it is parsed: the
webhook helper's signature headers and timestamps, and the Retry-After a server sends."""

from __future__ import annotations

import time

import httpx
import pytest
from homing_client import WebhookVerificationError, verify_webhook
from homing_client._core import retry_delay

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
NOW = 1_700_000_000


def _refused_quickly(headers: dict[str, str], match: str) -> None:
    started = time.perf_counter()
    with pytest.raises(WebhookVerificationError, match=match):
        verify_webhook(SECRET, headers, b"{}", now=NOW)
    assert time.perf_counter() - started < 0.5


def test_a_megabyte_signature_header_is_refused_before_it_is_split() -> None:
    headers = {"webhook-id": "m", "webhook-timestamp": str(NOW)}
    _refused_quickly({**headers, "webhook-signature": "v1,a " * 200_000}, "too long")
    _refused_quickly({"x-webhook-signature": "t=1," + "v1=a," * 200_000}, "too long")


def test_many_signatures_within_the_length_bound_are_refused() -> None:
    headers = {"webhook-id": "m", "webhook-timestamp": str(NOW)}
    _refused_quickly({**headers, "webhook-signature": "v1,a " * 100}, "too many")


def test_a_timestamp_of_a_thousand_digits_is_refused_without_int_parsing() -> None:
    headers = {"webhook-id": "m", "webhook-timestamp": "9" * 100_000, "webhook-signature": "v1,a"}
    _refused_quickly(headers, "malformed timestamp")


def test_a_huge_or_hostile_retry_after_is_never_waited_on() -> None:
    for value in ("9" * 100_000, "1e9", "-5", "999999"):
        wait = retry_delay(httpx.Response(429, headers={"Retry-After": value}), 0, 0.1)
        assert wait is None or wait < 61
