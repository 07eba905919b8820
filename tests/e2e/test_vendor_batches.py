"""SendGrid and Mailgun batch sends end to end: jobs claimed together leave in one
request (SendGrid personalizations, Mailgun recipient variables), each message keeps
its own subject, bodies and outcome, and each one's events reach its own job although
the request's message id is shared.

Real database (SQLite and PostgreSQL), real sandbox over loopback HTTP.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from homing.sandbox.events import EventPoster
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register
from tests.fixtures import settings_for

SENDER = "Acme <hello@acme.example>"


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        # Long enough for a request of hundreds of items on a loaded machine; the
        # hang test waits it out once.
        provider_timeout_seconds=3,
        provider_deadline_seconds=3,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        batch_window_seconds=0.3,
        claim_batch_size=300,
    )


async def accept(tenant: TenantClient, messages: list[dict[str, Any]]) -> list[str]:
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    return [str(r["id"]) for r in response.json()["results"]]


async def send_requests(sb: Sandbox, provider: str) -> int:
    response = await sb.http.get("/_sandbox/stats")
    response.raise_for_status()
    count: int = response.json()["requests"][provider]
    return count


def own(i: int, **extra: Any) -> dict[str, Any]:
    """An email to user<i> with a subject and text of its own."""
    return {
        "from": SENDER,
        "to": f"user{i}@example.com",
        "subject": f"Order {i} shipped",
        "text": f"Hello user {i}, order {i} is on its way.",
        **extra,
    }


async def test_sendgrid_emails_keep_their_own_subject_and_bodies_in_one_request(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "sendgrid", 0)
    texts = [own(i) for i in range(30)]
    # Ten with an html part too: another set of content blocks, another request.
    htmls = [own(i, html=f"<p>Order {i}</p>") for i in range(30, 40)]
    ids = await accept(tenant, texts + htmls)

    assert await deliver(services) == 40

    assert await send_requests(sb, "sendgrid") == 2
    recorded = {m["job_id"]: m for m in await sb.messages("sendgrid")}
    assert sorted(recorded) == sorted(ids)
    for i, job_id in enumerate(ids):
        message = recorded[job_id]
        assert message["to"] == [f"user{i}@example.com"]
        assert message["subject"] == f"Order {i} shipped"
        assert message["text"] == f"Hello user {i}, order {i} is on its way."
        assert message["html"] == (f"<p>Order {i}</p>" if i >= 30 else None)
    assert len({recorded[j]["message_id"] for j in ids[:30]}) == 1
    for job_id in ids[::7]:
        body = await job(tenant, job_id)
        assert body["status"] == "COMPLETED", body
        assert [a["outcome"] for a in body["attempts"]] == ["success"]


async def test_mailgun_emails_with_one_body_share_a_request_and_others_go_apart(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "mailgun", 0)
    same = [own(i, text="Your weekly digest is ready.") for i in range(25)]
    # Bodies of their own: Mailgun's request shares its bodies, so each goes apart.
    apart = [own(i) for i in range(25, 28)]
    ids = await accept(tenant, same + apart)

    assert await deliver(services) == 28

    assert await send_requests(sb, "mailgun") == 1 + 3
    recorded = {m["job_id"]: m for m in await sb.messages("mailgun")}
    assert sorted(recorded) == sorted(ids)
    for i, job_id in enumerate(ids):
        message = recorded[job_id]
        assert message["to"] == [f"user{i}@example.com"], "each recipient a message of its own"
        assert message["subject"] == f"Order {i} shipped"
        assert message["text"] == (same + apart)[i]["text"]
    assert len({recorded[j]["message_id"] for j in ids[:25]}) == 1
    for job_id in ids:
        assert (await job(tenant, job_id))["status"] == "COMPLETED"


@pytest.mark.parametrize("provider", ["sendgrid", "mailgun"])
async def test_one_address_twice_never_meets_itself_in_a_request(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, provider: str
) -> None:
    await register(tenant, sandbox, provider, 0)
    common = {"from": SENDER, "subject": "Hi", "text": "Hello"}
    messages = [{**common, "to": "ada@example.com"} for _ in range(3)]
    messages += [{**common, "to": f"user{i}@example.com"} for i in range(4)]
    ids = await accept(tenant, messages)

    assert await deliver(services) == 7

    assert await send_requests(sb, provider) == 3
    by_request: dict[str, list[str]] = defaultdict(list)
    for message in await sb.messages(provider):
        by_request[message["message_id"]] += message["to"]
    for addresses in by_request.values():
        assert len(addresses) == len(set(addresses))
    for job_id in ids:
        assert (await job(tenant, job_id))["status"] == "COMPLETED"


@pytest.mark.parametrize("provider", ["sendgrid", "mailgun"])
async def test_a_request_refused_as_a_whole_is_sent_item_by_item(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, provider: str
) -> None:
    await register(tenant, sandbox, provider, 0)
    ids = await accept(tenant, [own(i, text="Same body") for i in range(6)])
    # A 400 names no item: nothing was sent, so each goes again alone.
    await sb.fault(provider, status=400, count=1)

    assert await deliver(services) == 6

    assert await send_requests(sb, provider) == 1 + 6
    assert sorted(m["job_id"] for m in await sb.messages(provider)) == sorted(ids)
    for job_id in ids:
        body = await job(tenant, job_id)
        assert body["status"] == "COMPLETED", body
        assert [a["outcome"] for a in body["attempts"]] == ["success"]


async def test_a_sendgrid_outage_falls_back_for_every_item_of_the_request(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "sendgrid", 0)
    await register(tenant, sandbox, "mailgun", 1)
    ids = await accept(tenant, [own(i, text="Same body") for i in range(8)])
    await sb.fault("sendgrid", status=503, count=1)

    assert await deliver(services) == 8

    assert await send_requests(sb, "sendgrid") == 1
    assert await send_requests(sb, "mailgun") == 1
    for job_id in ids:
        body = await job(tenant, job_id)
        assert [(a["provider"], a["outcome"]) for a in body["attempts"]] == [
            ("sendgrid", "transient"),
            ("mailgun", "success"),
        ]


@pytest.mark.parametrize("provider", ["sendgrid", "mailgun"])
async def test_a_timed_out_request_is_uncertain_for_every_job(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, provider: str
) -> None:
    await register(tenant, sandbox, provider, 0)
    # One body, so Mailgun too takes all twelve in one request.
    ids = await accept(tenant, [own(i, text="Same body") for i in range(12)])
    await sb.fault(provider, mode="accept_then_hang", count=1)

    assert await deliver(services) == 12

    assert await send_requests(sb, provider) == 1
    for job_id in ids:
        body = await job(tenant, job_id)
        assert body["status"] != "COMPLETED", body
        assert [a["outcome"] for a in body["attempts"]] == ["uncertain"], body


async def _connect(
    tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox, provider: str, homing_url: str
) -> str:
    account = await register(tenant, sandbox, provider, 0)
    keys = (await sb.http.get("/_sandbox/keys")).json()
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound", json=keys[provider], headers=tenant.headers
    )
    assert response.status_code == 200, response.text
    return homing_url + str(response.json()["path"])


@pytest.mark.parametrize("provider", ["sendgrid", "mailgun"])
async def test_events_of_a_batched_message_reach_only_its_own_job(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    homing_url: str,
    provider: str,
) -> None:
    url = await _connect(tenant, sandbox, sb, provider, homing_url)
    ids = await accept(tenant, [own(i, text="Same body") for i in range(5)])
    assert await deliver(services) == 5
    assert await send_requests(sb, provider) == 1

    # The vendor's own event, its custom arg / user variable naming the job.
    posted = await sb.http.post(
        "/_sandbox/events",
        json={
            "provider": provider,
            "message_to": "user3@example.com",
            "type": "bounce",
            "target_url": url,
        },
    )
    assert posted.json()["response"]["applied"] == 1, posted.text
    # An event that lost its hjid: the shared message id names five jobs, the
    # recipient one of them.
    (message,) = sandbox.state.recorder.messages(provider, ids[1])
    bare = dataclasses.replace(message, job_id=None)
    reply = await EventPoster(sandbox.state).post(bare, "open", url)
    assert reply["response"]["applied"] == 1, reply
    # Nor to any of them when its recipient is none of theirs: quarantined.
    stranger = dataclasses.replace(bare, to=("stranger@example.com",))
    reply = await EventPoster(sandbox.state).post(stranger, "complaint", url)
    assert reply["response"]["applied"] == 0, reply

    statuses = [(await job(tenant, job_id))["delivery_status"] for job_id in ids]
    assert statuses[3] == "bounced"
    assert statuses[1] == "opened"
    assert [s for i, s in enumerate(statuses) if i not in (1, 3)] == [None, None, None]
