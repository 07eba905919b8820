"""The Twilio verifier against twilio-python's own vectors, and the parser's keywords."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from homing.inbound.events import EventType
from homing.inbound.verification import VerificationFailed
from homing.sandbox.twilio_events import sign
from homing.vendors.twilio import parse
from homing.vendors.twilio.verify import signature, spellings, verify

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "data" / "signatures.json").read_text()
)["twilio_request_signature"]
TOKEN = VECTORS["auth_token"]
URL = VECTORS["url"]


def _params(case: dict[str, Any]) -> list[tuple[str, str]]:
    if "params_list" in case:
        return [(k, v) for k, v in case["params_list"]]
    return list(case.get("params", {}).items())


@pytest.mark.parametrize("case", [c for c in VECTORS["cases"] if "json_body" not in c])
def test_the_signature_matches_twilio_pythons_vectors(case: dict[str, Any]) -> None:
    url = case.get("url", URL)
    assert signature(TOKEN, url, _params(case)) == case["expected"]
    body = urlencode(_params(case)).encode()
    verify(TOKEN, url, body, {"X-Twilio-Signature": case["expected"]})


def test_either_spelling_of_the_default_port_verifies() -> None:
    [plain, with_port] = VECTORS["cases"][:2]
    body = urlencode(plain["params"]).encode()
    # The signature made over ":443" verifies a request Homing sees without the port,
    # and the other way round.
    verify(TOKEN, URL, body, {"X-Twilio-Signature": with_port["expected"]})
    verify(TOKEN, with_port["url"], body, {"X-Twilio-Signature": plain["expected"]})
    assert spellings("http://h/p") == ("http://h/p", "http://h:80/p")
    assert spellings("https://h:8443/p") == ("https://h:8443/p", "https://h:8443/p")


def test_a_json_body_is_signed_through_its_hash_in_the_url() -> None:
    [case] = [c for c in VECTORS["cases"] if "json_body" in c]
    body = case["json_body"].encode()
    verify(TOKEN, case["url_with_hash"], body, {"X-Twilio-Signature": case["expected"]})
    with pytest.raises(VerificationFailed):
        verify(TOKEN, case["url_with_hash"], body + b" ", {"X-Twilio-Signature": case["expected"]})


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-Twilio-Signature": ""},
        {"X-Twilio-Signature": "RSOYDt4T1cUTdK1PDd93/VVr8B8"},
        {"X-Twilio-Signature": "é" * 20},
        {"X-Twilio-Signature": "A" * 100_000},
    ],
)
def test_missing_or_malformed_signatures_fail(headers: dict[str, str]) -> None:
    body = urlencode(VECTORS["cases"][0]["params"]).encode()
    with pytest.raises(VerificationFailed):
        verify(TOKEN, URL, body, headers)


def test_a_changed_field_or_url_fails() -> None:
    case = VECTORS["cases"][0]
    changed = {**case["params"], "Digits": "9999"}
    with pytest.raises(VerificationFailed):
        verify(TOKEN, URL, urlencode(changed).encode(), {"X-Twilio-Signature": case["expected"]})
    with pytest.raises(VerificationFailed):
        verify(
            TOKEN,
            URL.replace("mycompany", "othercompany"),
            urlencode(case["params"]).encode(),
            {"X-Twilio-Signature": case["expected"]},
        )


def test_a_body_with_too_many_fields_fails() -> None:
    body = "&".join(f"k{i}=v" for i in range(10_000)).encode()
    with pytest.raises(VerificationFailed):
        verify(TOKEN, URL, body, {"X-Twilio-Signature": signature(TOKEN, URL, [])})


def test_the_sandbox_signs_as_the_verifier_checks() -> None:
    fields = {"MessageSid": "SM1", "MessageStatus": "delivered", "To": "+14155552671"}
    verify(TOKEN, URL, urlencode(fields).encode(), {"X-Twilio-Signature": sign(TOKEN, URL, fields)})


@pytest.mark.parametrize(
    ("body", "opt_out"),
    [("STOP", True), (" stop ", True), ("Unsubscribe", True), ("START", False), ("unstop", False)],
)
def test_opt_keywords_in_inbound_messages(body: str, opt_out: bool) -> None:
    event = parse.interpret({"MessageSid": "SM1", "From": "+1 415 555 2671", "Body": body})
    assert (event.opt_out, event.address) == (opt_out, "+14155552671")


@pytest.mark.parametrize("body", ["please stop texting me", "STOP" * 1000, "hello"])
def test_other_inbound_messages_are_ignored(body: str) -> None:
    event = parse.interpret({"MessageSid": "SM1", "From": "+14155552671", "Body": body})
    assert (event.type, event.opt_out) == (EventType.OTHER, None)


def test_status_callbacks_map_onto_the_one_vocabulary() -> None:
    base = {"MessageSid": "SM1", "To": "+14155552671"}
    kinds = {
        s: parse.interpret({**base, "MessageStatus": s}).type
        for s in ("delivered", "undelivered", "failed", "sent", "queued")
    }
    assert kinds == {
        "delivered": EventType.DELIVERED,
        "undelivered": EventType.FAILED,
        "failed": EventType.FAILED,
        "sent": EventType.INFO,
        "queued": EventType.INFO,
    }
    [raw] = parse.split(urlencode({**base, "MessageStatus": "sent"}).encode(), {})
    assert raw.event_id == "SM1:sent"
