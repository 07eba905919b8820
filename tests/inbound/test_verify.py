"""The verifiers: the SendGrid vector, Svix (signed with the ``svix`` package), Postmark,
Mailgun, Paystack and Polar good/bad pairs."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from svix.webhooks import Webhook as SvixWebhook

from homing.inbound.billing import paystack, polar
from homing.inbound.verification import VerificationFailed
from homing.vendors.mailgun import verify as mailgun
from homing.vendors.postmark import verify as postmark
from homing.vendors.resend import verify as resend
from homing.vendors.sendgrid import verify as sendgrid_verify

VECTORS = json.loads((Path(__file__).parents[1] / "data" / "inbound_vectors.json").read_text())
SG = VECTORS["sendgrid_event_webhook_ecdsa"]
SG_NOW = float(SG["timestamp"])


def _sg_headers(signature: str, timestamp: str) -> dict[str, str]:
    return {SG["headers"]["signature"]: signature, SG["headers"]["timestamp"]: timestamp}


def _one_byte_changes(data: bytes) -> Iterator[bytes]:
    for index in range(len(data)):
        yield data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


def _fails(check: Callable[[], None]) -> bool:
    try:
        check()
    except VerificationFailed:
        return True
    return False


def test_sendgrid_vector_verifies() -> None:
    sendgrid_verify.verify(
        SG["public_key"],
        SG["payload"].encode(),
        _sg_headers(SG["signature"], SG["timestamp"]),
        now=SG_NOW,
    )


def test_sendgrid_vector_fails_after_any_one_byte_change_of_the_payload() -> None:
    headers = _sg_headers(SG["signature"], SG["timestamp"])
    for payload in _one_byte_changes(SG["payload"].encode()):
        assert _fails(
            lambda p=payload: sendgrid_verify.verify(SG["public_key"], p, headers, now=SG_NOW)
        )


def test_sendgrid_vector_fails_after_any_one_byte_change_of_the_timestamp() -> None:
    body = SG["payload"].encode()
    for stamp in _one_byte_changes(SG["timestamp"].encode()):
        headers = _sg_headers(SG["signature"], stamp.decode("latin-1"))
        assert _fails(
            lambda h=headers: sendgrid_verify.verify(SG["public_key"], body, h, now=SG_NOW)
        )


def test_sendgrid_vector_fails_after_any_one_byte_change_of_the_signature() -> None:
    body = SG["payload"].encode()
    der = base64.b64decode(SG["signature"])
    changed_text = [s.decode("latin-1") for s in _one_byte_changes(SG["signature"].encode())]
    changed_der = [base64.b64encode(d).decode() for d in _one_byte_changes(der)]
    for signature in changed_text + changed_der:
        headers = _sg_headers(signature, SG["timestamp"])
        assert _fails(
            lambda h=headers: sendgrid_verify.verify(SG["public_key"], body, h, now=SG_NOW)
        )


def test_sendgrid_takes_its_retries_for_a_day_and_refuses_older_or_missing_headers() -> None:
    body = SG["payload"].encode()
    headers = _sg_headers(SG["signature"], SG["timestamp"])
    window = sendgrid_verify.MAX_AGE_SECONDS
    assert window >= 24 * 3600, "SendGrid retries for up to 24 hours with the first signature"
    sendgrid_verify.verify(SG["public_key"], body, headers, now=SG_NOW + 24 * 3600)
    assert _fails(
        lambda: sendgrid_verify.verify(SG["public_key"], body, headers, now=SG_NOW + window + 1)
    )
    assert _fails(lambda: sendgrid_verify.verify(SG["public_key"], body, headers, now=SG_NOW - 301))
    assert _fails(lambda: sendgrid_verify.verify(SG["public_key"], body, {}, now=SG_NOW))


def test_sendgrid_accepts_the_key_as_pem_and_refuses_another_key() -> None:
    body = SG["payload"].encode()
    headers = _sg_headers(SG["signature"], SG["timestamp"])
    der = base64.b64decode(SG["public_key"])
    pem = serialization.load_der_public_key(der).public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    sendgrid_verify.verify(pem.decode(), body, headers, now=SG_NOW)
    other = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    other_key = base64.b64encode(other).decode()
    assert _fails(lambda: sendgrid_verify.verify(other_key, body, headers, now=SG_NOW))


def test_sendgrid_verification_key_must_be_p256() -> None:
    p384 = (
        ec.generate_private_key(ec.SECP384R1())
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    with pytest.raises(ValueError, match="P-256"):
        sendgrid_verify.load_verification_key(base64.b64encode(p384).decode())
    with pytest.raises(ValueError):
        sendgrid_verify.load_verification_key("not a key")


RESEND_SECRET = "whsec_" + base64.b64encode(b"resend-test-secret-0123456789").decode()
RESEND_BODY = b'{"type":"email.delivered","created_at":"2026-05-01T12:00:00Z","data":{}}'


def _svix_headers(
    body: bytes, secret: str = RESEND_SECRET, when: float | None = None
) -> dict[str, str]:
    moment = datetime.fromtimestamp(time.time() if when is None else when, UTC)
    signature = SvixWebhook(secret).sign("msg_2abc", moment, body.decode())
    return {
        "svix-id": "msg_2abc",
        "svix-timestamp": str(int(moment.timestamp())),
        "svix-signature": signature,
    }


def test_resend_accepts_an_event_signed_with_the_svix_package() -> None:
    resend.verify(RESEND_SECRET, RESEND_BODY, _svix_headers(RESEND_BODY))


def test_resend_accepts_when_any_of_several_signatures_matches() -> None:
    headers = _svix_headers(RESEND_BODY)
    headers["svix-signature"] = "v1,AAAA " + headers["svix-signature"]
    resend.verify(RESEND_SECRET, RESEND_BODY, headers)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda b, h: (b.replace(b"delivered", b"bounced"), h),
        lambda b, h: (b, {**h, "svix-id": "msg_other"}),
        lambda b, h: (b, {**h, "svix-timestamp": str(int(h["svix-timestamp"]) + 1)}),
        lambda b, h: (b, {**h, "svix-signature": "v1"}),
        lambda b, h: (b, {k: v for k, v in h.items() if k != "svix-signature"}),
        lambda b, h: (b"\xff\xfe" + b, h),
    ],
    ids=["body", "id", "timestamp", "malformed-signature", "no-signature", "not-utf8"],
)
def test_resend_refuses_a_tampered_event(
    tamper: Callable[[bytes, dict[str, str]], tuple[bytes, dict[str, str]]],
) -> None:
    body, headers = tamper(RESEND_BODY, _svix_headers(RESEND_BODY))
    assert _fails(lambda: resend.verify(RESEND_SECRET, body, headers))


def test_resend_refuses_an_old_event_and_another_secret() -> None:
    old = _svix_headers(RESEND_BODY, when=time.time() - 600)
    assert _fails(lambda: resend.verify(RESEND_SECRET, RESEND_BODY, old))
    other = "whsec_" + base64.b64encode(b"another-secret-0123456789abcd").decode()
    assert _fails(lambda: resend.verify(other, RESEND_BODY, _svix_headers(RESEND_BODY)))


def test_resend_secret_must_be_whsec() -> None:
    with pytest.raises(ValueError):
        resend.check_secret("not-a-secret-at-all")
    resend.check_secret(RESEND_SECRET)


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_postmark_accepts_its_basic_auth_and_refuses_a_wrong_password() -> None:
    postmark.verify("hooks", "s3cret-pass", _basic("hooks", "s3cret-pass"))
    for headers in (
        _basic("hooks", "wrong-pass"),
        _basic("other", "s3cret-pass"),
        _basic("hooks", ""),
        {"Authorization": "Bearer s3cret-pass"},
        {"Authorization": "Basic !!!"},
        {},
    ):
        assert _fails(lambda h=headers: postmark.verify("hooks", "s3cret-pass", h))


def _mailgun_body(key: str, timestamp: int, token: str = "t" * 50) -> bytes:
    digest = hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()
    signature = {"timestamp": str(timestamp), "token": token, "signature": digest}
    return json.dumps({"signature": signature, "event-data": {"event": "delivered"}}).encode()


def test_mailgun_good_and_bad_pairs() -> None:
    now = time.time()
    good = _mailgun_body("mg-signing-key", int(now))
    mailgun.verify("mg-signing-key", good, now=now)
    document: dict[str, Any] = json.loads(good)
    document["signature"]["token"] = "u" * 50
    # Mailgun retries for 8 hours with the first attempt's signature block.
    retried = _mailgun_body("mg-signing-key", int(now) - 8 * 3600)
    nonce = mailgun.verify("mg-signing-key", retried, now=now)
    assert nonce.body_hash == hashlib.sha256(retried).hexdigest()
    bad_bodies = [
        _mailgun_body("another-key", int(now)),
        json.dumps(document).encode(),
        _mailgun_body("mg-signing-key", int(now) - mailgun.MAX_AGE_SECONDS - 1),
        _mailgun_body("mg-signing-key", int(now) + 301),
        b'{"event-data": {}}',
        b"not json",
    ]
    for body in bad_bodies:
        assert _fails(lambda b=body: mailgun.verify("mg-signing-key", b, now=now))


def test_paystack_good_and_bad_pairs() -> None:
    body = b'{"event":"charge.success","data":{"id":1}}'
    signature = hmac.new(b"sk_test_paystack", body, hashlib.sha512).hexdigest()
    paystack.verify("sk_test_paystack", body, {"x-paystack-signature": signature})
    for bad_body, headers in (
        (body + b" ", {"x-paystack-signature": signature}),
        (body, {"x-paystack-signature": signature.upper()}),
        (body, {"x-paystack-signature": hmac.new(b"other", body, hashlib.sha512).hexdigest()}),
        (body, {}),
    ):
        assert _fails(lambda b=bad_body, h=headers: paystack.verify("sk_test_paystack", b, h))


def _polar_headers(secret: str, body: bytes, when: float | None = None) -> dict[str, str]:
    # Polar keys the HMAC with the secret's own bytes (its SDK base64-encodes the secret
    # before handing it to standardwebhooks, which decodes it again).
    stamp = str(int(time.time() if when is None else when))
    signed = f"evt_1.{stamp}.".encode() + body
    digest = base64.b64encode(hmac.new(secret.encode(), signed, hashlib.sha256).digest())
    return {
        "webhook-id": "evt_1",
        "webhook-timestamp": stamp,
        "webhook-signature": f"v1,{digest.decode()}",
    }


def test_polar_good_and_bad_pairs() -> None:
    body = b'{"type":"order.paid","data":{}}'
    polar.verify("polar_whs_secret", body, _polar_headers("polar_whs_secret", body))
    for bad_body, headers in (
        (body + b" ", _polar_headers("polar_whs_secret", body)),
        (body, _polar_headers("another_secret", body)),
        (body, _polar_headers("polar_whs_secret", body, when=time.time() - 900)),
        (body, {}),
    ):
        assert _fails(lambda b=bad_body, h=headers: polar.verify("polar_whs_secret", b, h))
