"""Signatures: the public Standard Webhooks vector, the ``X-Webhook-*`` formats
(``design``, ``notifykit``), and the helper."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import standardwebhooks
from svix.webhooks import Webhook as SvixWebhook

from homing.webhooks import WebhookVerificationError, generate_secret, verify
from homing.webhooks.signing import (
    SECRET_PREFIX,
    SignatureFormat,
    seed_signature,
    signature_headers,
    standard_signature,
)

VECTOR: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "data" / "signatures.json").read_text()
)["standard_webhooks_v1"]

NOW = 1_700_000_000
NOW_MS = NOW * 1000
BODY = b'{"event":"order.paid","id":42}'


def _seed(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def test_the_standard_webhooks_vector_signs_to_its_expected_signature() -> None:
    signature = standard_signature(
        VECTOR["secret"], VECTOR["msg_id"], VECTOR["timestamp"], VECTOR["payload"].encode()
    )
    assert signature == VECTOR["expected_signature"]


def test_the_standard_webhooks_vector_verifies_with_the_helper() -> None:
    headers = {
        "webhook-id": VECTOR["msg_id"],
        "webhook-timestamp": str(VECTOR["timestamp"]),
        "webhook-signature": VECTOR["expected_signature"],
    }
    event = verify(VECTOR["secret"], headers, VECTOR["payload"], now=VECTOR["timestamp"])
    assert event == {"test": 2432232314}


def test_generated_secrets_are_whsec_base64_of_32_bytes() -> None:
    secret = generate_secret()
    assert secret.startswith(SECRET_PREFIX)
    assert len(base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)) == 32
    assert generate_secret() != secret


def test_signature_headers_verify_with_standardwebhooks_and_svix_and_the_design_rule() -> None:
    secret = generate_secret()
    now = time.time()
    headers = signature_headers([secret], "msg_1", now, BODY)
    assert standardwebhooks.Webhook(secret).verify(BODY, headers) == json.loads(BODY)
    svix_headers = {k.replace("webhook-", "svix-"): v for k, v in headers.items()}
    SvixWebhook(secret).verify(BODY, svix_headers)  # raises when not verified
    ms = int(now * 1000)
    assert headers["webhook-timestamp"] == str(ms // 1000)
    assert headers["X-Webhook-Timestamp"] == str(ms)
    assert headers["X-Webhook-Signature"] == _seed(secret, ms, BODY)


def test_the_notifykit_format_is_seconds_and_t_v1() -> None:
    secret = generate_secret()
    headers = signature_headers([secret], "msg_1", NOW + 0.75, BODY, SignatureFormat.NOTIFYKIT)
    assert headers["webhook-timestamp"] == headers["X-Webhook-Timestamp"] == str(NOW)
    assert headers["X-Webhook-Signature"] == f"t={NOW},v1={_seed(secret, NOW, BODY)}"
    assert verify(secret, headers, BODY, now=NOW) == json.loads(BODY)


def test_unsigned_without_a_secret_but_with_id_and_timestamp() -> None:
    headers = signature_headers([], "msg_1", NOW, BODY)
    assert headers == {
        "webhook-id": "msg_1",
        "webhook-timestamp": str(NOW),
        "X-Webhook-Timestamp": str(NOW_MS),
    }
    notifykit = signature_headers([], "msg_1", NOW, BODY, SignatureFormat.NOTIFYKIT)
    assert notifykit["X-Webhook-Timestamp"] == str(NOW)
    assert "X-Webhook-Signature" not in notifykit


@pytest.mark.parametrize("fmt", list(SignatureFormat))
def test_during_an_overlap_standard_carries_both_and_x_webhook_only_the_previous(
    fmt: SignatureFormat,
) -> None:
    new, old = generate_secret(), generate_secret()
    headers = signature_headers([new, old], "msg_1", NOW, BODY, fmt)
    standard = headers["webhook-signature"].split(" ")
    assert standard == [standard_signature(s, "msg_1", NOW, BODY) for s in (new, old)]
    stamp = NOW_MS if fmt is SignatureFormat.DESIGN else NOW
    single = _seed(old, stamp, BODY)
    expected = single if fmt is SignatureFormat.DESIGN else f"t={NOW},v1={single}"
    assert headers["X-Webhook-Signature"] == expected
    x_only = {k: v for k, v in headers.items() if not k.startswith("webhook-")}
    for secret in (new, old):
        verify(secret, headers, BODY, now=NOW)
    verify(old, x_only, BODY, now=NOW)
    with pytest.raises(WebhookVerificationError, match="no matching signature"):
        verify(new, x_only, BODY, now=NOW)


def _both_schemes(secret: str, timestamp: int = NOW) -> list[dict[str, str]]:
    headers = signature_headers([secret], "msg_1", timestamp, BODY)
    x_only = {k: v for k, v in headers.items() if k.startswith("X-")}
    notifykit = signature_headers([secret], "msg_1", timestamp, BODY, SignatureFormat.NOTIFYKIT)
    notifykit_only = {k: v for k, v in notifykit.items() if k.startswith("X-")}
    return [headers, x_only, notifykit_only]


SCHEMES = pytest.mark.parametrize("scheme", [0, 1, 2], ids=["standard", "design", "notifykit"])


@SCHEMES
def test_the_helper_accepts_a_genuine_delivery_with_headers_in_any_case(scheme: int) -> None:
    secret = generate_secret()
    headers = _both_schemes(secret)[scheme]
    shouted = {k.upper(): v for k, v in headers.items()}
    assert verify(secret, shouted, BODY, now=NOW + 299) == json.loads(BODY)
    assert verify(secret, headers, BODY.decode(), now=NOW - 299) == json.loads(BODY)


@SCHEMES
def test_the_helper_rejects_a_tampered_body(scheme: int) -> None:
    secret = generate_secret()
    headers = _both_schemes(secret)[scheme]
    with pytest.raises(WebhookVerificationError, match="no matching signature"):
        verify(secret, headers, BODY.replace(b"42", b"43"), now=NOW)


@SCHEMES
def test_the_helper_rejects_a_wrong_secret(scheme: int) -> None:
    headers = _both_schemes(generate_secret())[scheme]
    with pytest.raises(WebhookVerificationError, match="no matching signature"):
        verify(generate_secret(), headers, BODY, now=NOW)


@SCHEMES
def test_the_helper_rejects_a_timestamp_older_than_five_minutes(scheme: int) -> None:
    secret = generate_secret()
    headers = _both_schemes(secret)[scheme]
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify(secret, headers, BODY, now=NOW + 301)
    with pytest.raises(WebhookVerificationError, match="too new"):
        verify(secret, headers, BODY, now=NOW - 301)


def test_the_helper_rejects_a_replayed_signature_under_a_new_timestamp() -> None:
    secret = generate_secret()
    headers = signature_headers([secret], "msg_1", NOW, BODY)
    headers["webhook-timestamp"] = str(NOW + 100)
    with pytest.raises(WebhookVerificationError):
        verify(secret, headers, BODY, now=NOW + 100)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"webhook-id": "msg_1", "webhook-timestamp": str(NOW)},
        {"webhook-signature": "v1,AAAA", "webhook-timestamp": str(NOW)},
        {"webhook-id": "m", "webhook-timestamp": "soon", "webhook-signature": "v1,AAAA"},
        {"X-Webhook-Signature": "00", "X-Webhook-Timestamp": "\uff11\uff12\uff13"},
    ],
)
def test_the_helper_rejects_missing_or_malformed_headers(headers: dict[str, str]) -> None:
    with pytest.raises(WebhookVerificationError):
        verify(generate_secret(), headers, BODY, now=NOW)


def test_the_former_seconds_form_of_x_webhook_timestamp_is_refused_as_stale() -> None:
    secret = generate_secret()
    former = {"X-Webhook-Timestamp": str(NOW), "X-Webhook-Signature": _seed(secret, NOW, BODY)}
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify(secret, former, BODY, now=NOW)


def test_a_notifykit_t_that_differs_from_x_webhook_timestamp_is_refused() -> None:
    secret = generate_secret()
    headers = signature_headers([secret], "m", NOW, BODY, SignatureFormat.NOTIFYKIT)
    x_only = {k: v for k, v in headers.items() if k.startswith("X-")}
    x_only["X-Webhook-Timestamp"] = str(NOW + 1)
    with pytest.raises(WebhookVerificationError, match="t= does not match"):
        verify(secret, x_only, BODY, now=NOW)


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Webhook-Signature": "0" * 64, "X-Webhook-Timestamp": "9" * 5000},
        {"X-Webhook-Signature": "t=1," + "v1=00," * 500, "X-Webhook-Timestamp": "1"},
        {"X-Webhook-Signature": f"t={NOW}," + "v1=00," * 20, "X-Webhook-Timestamp": str(NOW)},
        {"webhook-id": "m", "webhook-timestamp": str(NOW), "webhook-signature": "v1,A " * 20},
    ],
    ids=["huge-timestamp", "huge-header", "many-v1", "many-standard"],
)
def test_the_helper_refuses_oversized_headers_with_its_own_error(
    headers: dict[str, str],
) -> None:
    with pytest.raises(WebhookVerificationError):
        verify(generate_secret(), headers, BODY, now=NOW)


def test_the_helper_refuses_a_secret_that_is_not_base64() -> None:
    headers = signature_headers([generate_secret()], "msg_1", NOW, BODY)
    with pytest.raises(WebhookVerificationError, match="whsec_"):
        verify("whsec_not base64!", headers, BODY, now=NOW)


def test_seed_signature_is_hex_hmac_of_timestamp_dot_body_keyed_by_the_whole_secret() -> None:
    secret = generate_secret()
    assert seed_signature(secret, NOW, BODY) == _seed(secret, NOW, BODY)


def test_the_receiver_helper_imports_nothing_but_the_standard_library() -> None:
    code = (
        "import sys, homing.webhooks; "
        "print(sorted(m for m in ('sqlalchemy', 'httpx', 'fastapi', 'pydantic', "
        "'cryptography', 'orjson') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
