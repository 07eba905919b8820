"""A hostile tenant's SMS: numbers that are huge, garbage or smuggle a second
recipient, bodies past the segment bound, suppression keys that are no number. Every
one is a 422 before it becomes a job, and phonenumbers never sees an unbounded text."""

from __future__ import annotations

from typing import Any

import phonenumbers
import pytest
from pydantic import ValidationError

from homing.addresses import MAX_PHONE, InvalidPhoneNumber, phone_key, sms_sender
from homing.api.schemas.sms import MAX_SMS_SEGMENTS, SmsCreate
from homing.settings import Settings
from tests.conftest import TenantClient

GARBAGE = [
    "",
    "+",
    "4155552671",  # no country code: no region is guessed
    "+1 415 555 2671, +1 415 555 2672",
    "+14155552671;+14155552672",
    "+1415555267\n1",
    "+1\u00a0415 555 2671",
    "+" + "".join(chr(0xFF10 + int(d)) for d in "14155552671"),  # fullwidth digits
    "tel:+14155552671",
    "+1-800-FLOWERS",
    "+999999999999",
    "++14155552671",
    "+14155552671+",
    "+0",
]


@pytest.mark.parametrize("number", GARBAGE)
def test_garbage_numbers_are_refused(number: str) -> None:
    with pytest.raises(InvalidPhoneNumber):
        phone_key(number)


def test_a_ten_megabyte_number_never_reaches_phonenumbers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[int] = []
    real = phonenumbers.parse

    def spy(number: str, region: str | None = None) -> phonenumbers.PhoneNumber:
        seen.append(len(number))
        return real(number, region)

    monkeypatch.setattr(phonenumbers, "parse", spy)
    for huge in ("+1" + "5" * 10_000_000, "+" + " " * 10_000_000 + "14155552671"):
        with pytest.raises(InvalidPhoneNumber):
            phone_key(huge)
        with pytest.raises(InvalidPhoneNumber):
            sms_sender(huge)
    assert phone_key("+14155552671") == "+14155552671"
    assert seen and max(seen) <= MAX_PHONE


@pytest.mark.parametrize("sender", ["", "Acme Corp Ltd", "12345", "Ac\u202eme", "Acme\r\n"])
def test_odd_sender_ids_are_refused(sender: str) -> None:
    with pytest.raises(InvalidPhoneNumber):
        sms_sender(sender)


def _body(**fields: Any) -> dict[str, Any]:
    return {"to": "+14155552671", "body": "hi", **fields}


def test_the_body_is_bounded_in_segments_for_either_encoding() -> None:
    SmsCreate.model_validate(_body(body="x" * 153 * MAX_SMS_SEGMENTS))
    with pytest.raises(ValidationError, match="segments"):
        SmsCreate.model_validate(_body(body="x" * (153 * MAX_SMS_SEGMENTS + 1)))
    SmsCreate.model_validate(_body(body="ж" * 67 * MAX_SMS_SEGMENTS))
    with pytest.raises(ValidationError, match="segments"):
        SmsCreate.model_validate(_body(body="ж" * (67 * MAX_SMS_SEGMENTS + 1)))
    # An emoji is two UTF-16 units: half as many fit.
    with pytest.raises(ValidationError, match="segments"):
        SmsCreate.model_validate(_body(body="😀" * (67 * MAX_SMS_SEGMENTS // 2 + 1)))
    with pytest.raises(ValidationError):
        SmsCreate.model_validate(_body(body="x" * 5_000_000))
    with pytest.raises(ValidationError):
        SmsCreate.model_validate(_body(body="a\x00b"))


async def test_hostile_numbers_and_bodies_are_422_at_the_api(tenant: TenantClient) -> None:
    for fields in (
        {"to": "+1" + "5" * 100_000},
        {"to": "+14155552671, +14155552672"},
        {"from": "x" * 100_000},
        {"body": "x" * 2000},
        {"body": ""},
        {"to": 14155552671},
    ):
        response = await tenant.post("/v1/notifications/sms", json=_body(**fields))
        assert response.status_code == 422, (fields, response.text)
        assert response.json()["error"]["code"] == "validation_error"
        assert len(response.text) < 5000
    listed = await tenant.get("/v1/jobs", params={"channel": "sms"})
    assert listed.json()["data"] == []


async def test_a_suppression_key_that_is_no_number_is_422(tenant: TenantClient) -> None:
    for address in ("ada@example.com", "+1" + "5" * 300, "not a number"):
        response = await tenant.post(
            "/v1/suppressions", json={"channel": "sms", "address": address}
        )
        assert response.status_code == 422, response.text


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "ftp://homing.example.com",
        "https://homing.example.com/?next=evil",
        "https://homing.example.com/#x",
        "https://" + "a" * 3000 + ".example.com",
    ],
)
def test_the_public_url_setting_refuses_what_is_no_base_url(url: str) -> None:
    with pytest.raises(ValidationError):
        Settings(public_url=url)


def test_a_blank_public_url_is_unset() -> None:
    assert Settings(public_url="").public_url is None
    assert Settings(public_url="https://h.example").public_url == "https://h.example"


def test_fallback_on_undelivered_is_a_boolean_and_keeps_no_order() -> None:
    with pytest.raises(ValidationError):
        SmsCreate.model_validate(_body(fallback_on_undelivered=True, ordering_key="k"))
    with pytest.raises(ValidationError):
        SmsCreate.model_validate(_body(fallback_on_undelivered="x" * 1000))
    assert SmsCreate.model_validate(_body(fallback_on_undelivered=True)).fallback_on_undelivered
