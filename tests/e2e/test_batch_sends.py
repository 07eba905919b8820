"""Provider batch APIs end to end: jobs claimed together leave in one vendor batch call
(Resend ``/emails/batch``, Postmark ``/email/batch``) and each keeps its own outcome.

Real database (SQLite and PostgreSQL), real sandbox over loopback HTTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.e2e.conftest import SLACK_PATH, Sandbox, deliver, job, register, send
from tests.fixtures import settings_for

GOOD = {"from": "Acme <hello@acme.example>", "subject": "Hi", "text": "Hello"}


@pytest.fixture
def settings(
    database_url: str, tmp_path: Path, secret_key: str, sandbox: SandboxServer
) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        provider_timeout_seconds=1,
        provider_deadline_seconds=1,
        alert_slack_webhook_url=sandbox.base_url + SLACK_PATH,
        batch_window_seconds=0.3,
        claim_batch_size=300,
    )


async def accept(tenant: TenantClient, messages: list[dict[str, Any]]) -> list[str]:
    """Queue ``messages`` through the batch route; their job ids, in order."""
    response = await tenant.post("/v1/notifications/email/batch", json={"messages": messages})
    assert response.status_code == 202, response.text
    results = response.json()["results"]
    assert all(r.get("id") for r in results), results
    return [str(r["id"]) for r in results]


async def send_requests(sb: Sandbox, provider: str) -> int:
    response = await sb.http.get("/_sandbox/stats")
    response.raise_for_status()
    count: int = response.json()["requests"][provider]
    return count


def emails(count: int, **overrides: Any) -> list[dict[str, Any]]:
    return [{**GOOD, "to": f"user{i}@example.com", **overrides} for i in range(count)]


async def test_250_resend_emails_leave_in_3_calls_and_all_complete(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 0)
    ids = await accept(tenant, emails(250))

    assert await deliver(services) == 250

    assert await send_requests(sb, "resend") == 3
    recorded = await sb.messages("resend")
    assert sorted(m["job_id"] for m in recorded) == sorted(ids)
    for job_id in ids[::25]:
        body = await job(tenant, job_id)
        assert body["status"] == "COMPLETED", body
        assert [a["outcome"] for a in body["attempts"]] == ["success"]


async def test_a_postmark_batch_with_one_bad_address_fails_only_that_job(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "postmark", 0)
    await register(tenant, sandbox, "resend", 1)
    messages = emails(20)
    # Postmark refuses this recipient (ErrorCode 406, inactive): that item alone.
    messages[7]["to"] = "gone@inactive.example"
    ids = await accept(tenant, messages)

    assert await deliver(services) == 20

    assert await send_requests(sb, "postmark") == 1
    assert await send_requests(sb, "resend") == 0, "a refused recipient does not fall back"
    good = ids[:7] + ids[8:]
    assert sorted(m["job_id"] for m in await sb.messages("postmark")) == sorted(good)
    failed = await job(tenant, ids[7])
    assert failed["status"] == "FAILED", failed
    assert [a["outcome"] for a in failed["attempts"]] == ["message_permanent"]
    assert "ErrorCode 406" in failed["attempts"][-1]["error"]
    for job_id in good:
        assert (await job(tenant, job_id))["status"] == "COMPLETED"


async def test_a_timed_out_batch_is_uncertain_for_every_job(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 0)
    ids = await accept(tenant, emails(30))
    await sb.fault("resend", mode="accept_then_hang", count=1)

    assert await deliver(services) == 30

    assert await send_requests(sb, "resend") == 1
    for job_id in ids:
        body = await job(tenant, job_id)
        assert body["status"] != "COMPLETED", body
        assert [a["outcome"] for a in body["attempts"]] == ["uncertain"], body


async def test_a_failed_batch_falls_back_for_its_items_only(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "postmark", 0)
    await register(tenant, sandbox, "resend", 1)
    ids = await accept(tenant, emails(12))
    # The whole Postmark call answers 503 once: every item in it moves on to Resend,
    # in one Resend batch.
    await sb.fault("postmark", status=503, count=1)

    assert await deliver(services) == 12

    assert await send_requests(sb, "postmark") == 1
    assert await send_requests(sb, "resend") == 1
    for job_id in ids:
        body = await job(tenant, job_id)
        assert body["status"] == "COMPLETED"
        assert [(a["provider"], a["outcome"]) for a in body["attempts"]] == [
            ("postmark", "transient"),
            ("resend", "success"),
        ]


async def test_jobs_with_an_ordering_key_or_at_most_once_go_alone(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await register(tenant, sandbox, "resend", 0)
    await send(tenant, to="a@example.com", ordering_key="order-1")
    await send(tenant, to="b@example.com", delivery="at_most_once")
    await accept(tenant, emails(5))

    assert await deliver(services) == 7

    # The five share one batch call; the other two are a call each.
    assert await send_requests(sb, "resend") == 3
    assert len(await sb.messages("resend")) == 7


async def test_the_sandbox_batch_routes_keep_the_vendors_limits(
    sandbox: SandboxServer,
) -> None:
    async with httpx.AsyncClient(base_url=sandbox.base_url) as http:
        auth = {"Authorization": "Bearer re_key", "User-Agent": "t"}
        item = {"from": "a@acme.example", "to": ["b@example.com"], "subject": "s", "text": "t"}
        over = await http.post("/resend/emails/batch", json=[item] * 101, headers=auth)
        assert over.status_code == 422
        strict = await http.post(
            "/resend/emails/batch", json=[item, {**item, "to": []}], headers=auth
        )
        assert strict.status_code == 422
        assert "emails[1]" in strict.json()["message"]
        loose = await http.post(
            "/resend/emails/batch",
            json=[item, {**item, "to": []}],
            headers={**auth, "x-batch-validation": "permissive"},
        )
        assert loose.status_code == 200
        assert len(loose.json()["data"]) == 1
        assert loose.json()["errors"][0]["index"] == 1

        token = {"X-Postmark-Server-Token": "pm"}
        message = {"From": "a@acme.example", "To": "b@example.com", "TextBody": "t"}
        too_many = await http.post("/postmark/email/batch", json=[message] * 501, headers=token)
        assert too_many.status_code == 422
        assert too_many.json()["ErrorCode"] == 410
        mixed = await http.post(
            "/postmark/email/batch", json=[message, {**message, "To": "nope"}], headers=token
        )
        assert mixed.status_code == 200
        assert [r["ErrorCode"] for r in mixed.json()] == [0, 300]
        assert mixed.json()[0]["MessageID"]
