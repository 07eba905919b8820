"""The Vonage verifier: an HS256 JWT whose payload_hash is the body's, signed recently."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from homing.inbound.events import EventType
from homing.inbound.verification import VerificationFailed
from homing.sandbox.vonage_events import jwt
from homing.vendors.vonage import parse
from homing.vendors.vonage.verify import b64url, sign, verify

SECRET = "vonage-signature-secret"
NOW = 1_760_000_000
BODY = b'{"message_uuid": "aaaaaaaa-0000", "status": "delivered", "to": "447911123456"}'


def _claims(**overrides: object) -> dict[str, object]:
    return {"iat": NOW, "payload_hash": hashlib.sha256(BODY).hexdigest(), **overrides}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_token_signed_with_the_secret_over_this_body_verifies() -> None:
    verify(SECRET, BODY, _bearer(sign(SECRET, _claims())), now=NOW + 10)
    # The sandbox's independent signer agrees.
    verify(SECRET, BODY, _bearer(jwt(SECRET, _claims())), now=NOW)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic abc"},
        _bearer(sign("another-secret", _claims())),
        _bearer(sign(SECRET, _claims(payload_hash="0" * 64))),
        _bearer(sign(SECRET, _claims(iat=NOW - 25 * 3600 - 1))),
        _bearer(sign(SECRET, _claims(iat=NOW + 301))),
        _bearer(sign(SECRET, _claims(iat="1760000000"))),
        _bearer(sign(SECRET, {"payload_hash": hashlib.sha256(BODY).hexdigest()})),
        _bearer("a.b"),
        _bearer("x" * 10_000),
    ],
)
def test_forged_stale_or_malformed_tokens_fail(headers: dict[str, str]) -> None:
    with pytest.raises(VerificationFailed):
        verify(SECRET, BODY, headers, now=NOW)


def test_a_retry_signed_within_vonages_day_of_retries_verifies() -> None:
    verify(SECRET, BODY, _bearer(sign(SECRET, _claims(iat=NOW - 24 * 3600))), now=NOW)


def test_the_body_must_be_the_one_signed() -> None:
    with pytest.raises(VerificationFailed):
        verify(SECRET, BODY + b" ", _bearer(sign(SECRET, _claims())), now=NOW)


def test_alg_none_and_other_spellings_of_the_signature_fail() -> None:
    claims = b64url(json.dumps(_claims()).encode())
    none = b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    with pytest.raises(VerificationFailed):
        verify(SECRET, BODY, _bearer(f"{none}.{claims}."), now=NOW)
    head, body, signature = sign(SECRET, _claims()).split(".")
    padded = base64.urlsafe_b64encode(base64.urlsafe_b64decode(signature + "=")).decode()
    with pytest.raises(VerificationFailed):
        verify(SECRET, BODY, _bearer(f"{head}.{body}.{padded}"), now=NOW)


def test_statuses_map_onto_the_one_vocabulary() -> None:
    def event(status: str) -> tuple[EventType, str | None]:
        parsed = parse.interpret(
            {"message_uuid": "u1", "status": status, "to": "447911123456", "client_ref": "j"}
        )
        assert (parsed.address, parsed.job_hint) == ("+447911123456", "j")
        return parsed.type, parsed.reroute

    assert event("delivered") == (EventType.DELIVERED, None)
    assert event("submitted") == (EventType.INFO, None)
    assert event("undeliverable") == (EventType.FAILED, None)
    assert event("rejected") == (EventType.FAILED, "rejected by the carrier")
    [raw] = parse.split(BODY, {})
    assert raw.event_id == "aaaaaaaa-0000:delivered"


def _inbound(text: object, sender: object = "447911123456") -> dict[str, object]:
    return {
        "channel": "sms",
        "message_uuid": "bbbbbbbb-0000",
        "to": "447700900000",
        "from": sender,
        "text": text,
        "message_type": "text",
    }


@pytest.mark.parametrize(
    ("text", "opt_out"),
    [("STOP", True), (" stop ", True), ("Quit", True), ("START", False), ("unstop", False)],
)
def test_opt_keywords_in_inbound_messages(text: str, opt_out: bool) -> None:
    event = parse.interpret(_inbound(text))
    assert (event.type, event.opt_out, event.address) == (
        EventType.UNSUBSCRIBED if opt_out else EventType.INFO,
        opt_out,
        "+447911123456",
    )
    [raw] = parse.split(json.dumps(_inbound(text)).encode(), {})
    assert raw.event_id == "bbbbbbbb-0000:inbound"


@pytest.mark.parametrize(
    ("text", "sender"),
    [
        ("please stop texting me", "447911123456"),
        ("STOP" * 1000, "447911123456"),
        (["STOP"], "447911123456"),
        (None, "447911123456"),
        ("STOP", "not a number"),
        ("STOP", None),
    ],
)
def test_other_inbound_messages_are_ignored(text: object, sender: object) -> None:
    event = parse.interpret(_inbound(text, sender))
    assert (event.type, event.opt_out, event.address) == (EventType.OTHER, None, None)
