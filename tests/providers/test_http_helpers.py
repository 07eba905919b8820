"""The shared HTTP helpers: transport error classes, retry hints, safe details."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from homing.errors import InvalidCredentials
from homing.models import FailureClass
from homing.providers.base import ProviderFailure
from homing.providers.http import (
    MAX_DETAIL,
    classify_status,
    match_rules,
    parse_retry_after,
    redact,
    require_credential,
    response_detail,
    seconds_until_date_in_text,
    seconds_until_epoch,
    seconds_until_next_utc_midnight,
    send_request,
    transport_failure,
)

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC).timestamp()
REQUEST = httpx.Request("POST", "https://api.example.test/send")


@pytest.mark.parametrize(
    ("exc_type", "expected"),
    [
        (httpx.ConnectError, FailureClass.TRANSIENT),
        (httpx.ConnectTimeout, FailureClass.TRANSIENT),
        (httpx.PoolTimeout, FailureClass.TRANSIENT),
        (httpx.ReadTimeout, FailureClass.UNCERTAIN),
        (httpx.WriteTimeout, FailureClass.UNCERTAIN),
        (httpx.ReadError, FailureClass.UNCERTAIN),
        (httpx.WriteError, FailureClass.UNCERTAIN),
        (httpx.RemoteProtocolError, FailureClass.UNCERTAIN),
        (httpx.UnsupportedProtocol, FailureClass.PROVIDER_PERMANENT),
    ],
)
def test_transport_errors_are_classified_by_whether_the_request_left(
    exc_type: type[httpx.TransportError], expected: FailureClass
) -> None:
    failure = transport_failure("acme", exc_type("boom secret-url", request=REQUEST))
    assert failure.failure_class is expected
    assert "secret-url" not in failure.detail
    assert exc_type.__name__ in failure.detail


async def test_send_request_raises_provider_failure_from_transport_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        with pytest.raises(ProviderFailure) as info:
            await send_request(http, "acme", "GET", "https://api.example.test/x")
    assert info.value.failure_class is FailureClass.UNCERTAIN
    assert isinstance(info.value.__cause__, httpx.ReadTimeout)


async def test_send_request_does_not_follow_redirects() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": "https://elsewhere.test/"})

    async with httpx.AsyncClient(
        transport=httpx.MockTransport(handler), follow_redirects=True
    ) as http:
        response = await send_request(http, "acme", "GET", "https://api.example.test/x")
    assert response.status_code == 302


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (429, FailureClass.THROTTLED),
        (418, FailureClass.PROVIDER_PERMANENT),
        (301, FailureClass.PROVIDER_PERMANENT),
        (507, FailureClass.TRANSIENT),
    ],
)
def test_classify_status_uses_table_then_fallback(status: int, expected: FailureClass) -> None:
    assert classify_status(status, {429: FailureClass.THROTTLED}) is expected


def test_match_rules_returns_first_matching_phrase_case_insensitively() -> None:
    rules = (
        ("is unverified", FailureClass.MESSAGE_PERMANENT),
        ("not allowed", FailureClass.TRANSIENT),
    )
    assert match_rules("Domain IS UNVERIFIED, not allowed", rules) is FailureClass.MESSAGE_PERMANENT
    assert match_rules("nothing here", rules) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        ("1.5", 1.5),
        ("-3", 0.0),
        ("Sat, 01 Mar 2025 12:00:30 GMT", 30.0),
        ("Sat, 01 Mar 2025 11:00:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after_reads_seconds_and_http_dates(
    value: str | None, expected: float | None
) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_seconds_until_epoch_reads_rate_limit_reset() -> None:
    assert seconds_until_epoch(str(int(NOW) + 42), now=NOW) == 42.0
    assert seconds_until_epoch(str(int(NOW) - 5), now=NOW) == 0.0
    assert seconds_until_epoch("nope", now=NOW) is None
    assert seconds_until_epoch(None, now=NOW) is None


def test_seconds_until_date_in_text_reads_mailgun_try_again_after() -> None:
    text = (
        "Domain example.com is not allowed to send: try again after Sat, 01 Mar 2025 12:01:00 GMT"
    )
    assert seconds_until_date_in_text(text, now=NOW) == 60.0
    assert seconds_until_date_in_text("rate limit exceeded", now=NOW) is None


def test_seconds_until_next_utc_midnight() -> None:
    assert seconds_until_next_utc_midnight(now=NOW) == 12 * 3600.0


def test_response_detail_summarises_json_errors_and_caps_length() -> None:
    body = {"errors": [{"message": "bad from", "field": "from"}, {"message": "x" * 500}]}
    detail = response_detail(httpx.Response(400, json=body))
    assert detail.startswith("HTTP 400: bad from (from): xxx")
    assert len(detail) == MAX_DETAIL


def test_response_detail_reads_plain_text_and_masks_echoed_secrets() -> None:
    response = httpx.Response(401, text="Forbidden\nkey sk-secret-123 is bad")
    assert (
        response_detail(response, secrets=["sk-secret-123"]) == "HTTP 401: Forbidden key *** is bad"
    )


def test_response_detail_includes_postmark_error_code() -> None:
    response = httpx.Response(422, json={"ErrorCode": 300, "Message": "Invalid email request"})
    assert response_detail(response) == "HTTP 422: ErrorCode 300: Invalid email request"


def test_redact_ignores_empty_secrets() -> None:
    assert redact("abc", ["", "b"]) == "a***c"


def test_require_credential_names_the_field_not_the_value() -> None:
    assert require_credential({"api_key": "k"}, "api_key", "Acme") == "k"
    with pytest.raises(InvalidCredentials, match="'domain'"):
        require_credential({"api_key": "k", "domain": ""}, "domain", "Acme")
