"""The sandbox's signed events and domain APIs: signed as the vendors sign, read as Homing
reads them."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest

from homing.inbound.events import EventType
from homing.inbound.sources import KINDS as SECRET_KINDS
from homing.inbound.sources import SOURCES
from homing.inbound.verification import Signed
from homing.sandbox import SandboxServer
from homing.sandbox.event_bodies import KINDS, build
from homing.sandbox.signing import SandboxKeys
from homing.sandbox.state import RecordedMessage
from homing.vendors.mailgun import parse as mailgun
from homing.vendors.postmark import parse as postmark
from homing.vendors.resend import parse as resend
from homing.vendors.sendgrid import parse as sendgrid
from homing.vendors.sendgrid.verify import load_verification_key

MESSAGE = RecordedMessage(
    provider="resend",
    to=("ada@example.com",),
    sender="hello@acme.example",
    subject="Welcome",
    text="Hi",
    html=None,
    message_id="<20240101.abc@mg.example.com>",
    job_id="0195a0c0-0000-7000-8000-000000000001",
)
PARSERS = {"sendgrid": sendgrid, "resend": resend, "postmark": postmark, "mailgun": mailgun}
EXPECTED = {
    "delivered": EventType.DELIVERED,
    "bounce": EventType.BOUNCED,
    "soft_bounce": EventType.DEFERRED,
    "deferred": EventType.DEFERRED,
    "complaint": EventType.COMPLAINED,
    "open": EventType.OPENED,
    "click": EventType.CLICKED,
}


@pytest.mark.parametrize("provider", sorted(PARSERS))
@pytest.mark.parametrize("kind", KINDS)
def test_every_sandbox_event_verifies_and_reads_as_what_it_is(provider: str, kind: str) -> None:
    keys = SandboxKeys.generate()
    body, headers = build(provider, MESSAGE, kind, keys)
    secret = keys.listing()[provider]
    value = secret[SECRET_KINDS[provider]]
    SOURCES[provider].signature.check(value, Signed(body, headers, time.time()))
    [entry] = PARSERS[provider].split(body, headers)
    event = PARSERS[provider].interpret(entry.payload)
    assert event.type is EXPECTED[kind]
    assert event.job_hint == MESSAGE.job_id
    assert event.address == "ada@example.com"
    assert event.occurred_at is not None


def test_the_keys_listing_is_what_homing_takes() -> None:
    listing = SandboxKeys.generate().listing()
    load_verification_key(listing["sendgrid"]["verification_key"])
    assert listing["resend"]["signing_secret"].startswith("whsec_")
    assert sorted(listing["postmark"]["basic_auth"]) == ["password", "username"]
    assert repr(SandboxKeys.generate()) == "SandboxKeys()"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with SandboxServer(smtp_port=None) as server:
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as client:
            yield client


async def test_event_requests_are_checked(http: httpx.AsyncClient) -> None:
    bad = [
        {"provider": "smtp", "type": "delivered", "target_url": "http://x.test"},
        {"provider": "resend", "type": "exploded", "target_url": "http://x.test"},
        {"provider": "resend", "type": "delivered"},
    ]
    for payload in bad:
        assert (await http.post("/_sandbox/events", json=payload)).status_code == 400
    missing = {
        "provider": "resend",
        "type": "delivered",
        "message_to": "nobody@x.test",
        "target_url": "http://127.0.0.1:9/",
    }
    assert (await http.post("/_sandbox/events", json=missing)).status_code == 404
    hook = {"provider": "resend", "url": "ftp://nope"}
    assert (await http.post("/_sandbox/webhooks", json=hook)).status_code == 400
    hook = {"provider": "resend", "url": "http://127.0.0.1:9/hook", "events": ["bounce"]}
    assert (await http.post("/_sandbox/webhooks", json=hook)).status_code == 201
    assert (await http.get("/_sandbox/webhooks")).json()["resend"]["events"] == ["bounce"]
    await http.post("/_sandbox/reset")
    assert (await http.get("/_sandbox/webhooks")).json() == {}


async def test_postmark_domains_take_the_account_token_and_match_paths_case_insensitively(
    http: httpx.AsyncClient,
) -> None:
    server_token = {"X-Postmark-Server-Token": "server-token"}
    refused = await http.post("/postmark/domains", json={"Name": "acme.io"}, headers=server_token)
    assert refused.status_code == 401 and refused.json()["ErrorCode"] == 10
    account = {"X-Postmark-Account-Token": "account-token"}
    created = (
        await http.post("/postmark/domains", json={"Name": "acme.io"}, headers=account)
    ).json()
    assert created["DKIMHost"] == "" and created["DKIMPendingHost"].endswith("._domainkey.acme.io")
    again = await http.post("/postmark/domains", json={"Name": "acme.io"}, headers=account)
    assert again.status_code == 422
    verified = await http.put(f"/postmark/domains/{created['ID']}/verifyDKIM", headers=account)
    assert verified.json()["DKIMVerified"] is True
    assert verified.json()["DKIMHost"] == created["DKIMPendingHost"]


async def test_resend_and_sendgrid_refuse_a_domain_twice(http: httpx.AsyncClient) -> None:
    bearer = {"Authorization": "Bearer re_key", "User-Agent": "t"}
    first = await http.post("/resend/domains", json={"name": "acme.io"}, headers=bearer)
    assert first.json()["status"] == "not_started"
    again = await http.post("/resend/domains", json={"name": "acme.io"}, headers=bearer)
    assert (again.status_code, again.json()["name"]) == (403, "validation_error")
    sendgrid_bearer = {"Authorization": "Bearer SG.key"}
    made = await http.post(
        "/sendgrid/v3/whitelabel/domains", json={"domain": "acme.io"}, headers=sendgrid_bearer
    )
    assert made.status_code == 201 and sorted(made.json()["dns"]) == [
        "dkim1",
        "dkim2",
        "mail_cname",
    ]
    twice = await http.post(
        "/sendgrid/v3/whitelabel/domains", json={"domain": "acme.io"}, headers=sendgrid_bearer
    )
    assert twice.status_code == 400
