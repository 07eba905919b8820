"""A tenant sending in bulk tries to use provider batch calls to starve or out-spend a
small one: its jobs never share a batch call with another tenant's, never make one
larger than the vendor allows, each still spends its own attempt and provider call,
and the small tenant's jobs wait no longer than the batch window however big the
neighbour's backlog is (the claim stays fair between tenants, docs/architecture.md).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job, register
from tests.fixtures import settings_for

pytestmark = pytest.mark.sql("the claim statement's fair pick")

WINDOW = 0.3
BIG = 700
SMALL = 5


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url, tmp_path, secret_key, batch_window_seconds=WINDOW, claim_batch_size=300
    )


async def _accept(tenant: TenantClient, count: int, tag: str) -> list[str]:
    good = {"from": "a@acme.example", "subject": "s", "text": "t"}
    ids: list[str] = []
    for start in range(0, count, 500):
        messages = [
            {**good, "to": f"{tag}{i}@example.com"} for i in range(start, min(count, start + 500))
        ]
        response = await tenant.post("/v1/notifications/email/batch", json={"messages": messages})
        assert response.status_code == 202, response.text
        ids += [str(r["id"]) for r in response.json()["results"]]
    return ids


async def test_a_bulk_tenant_cannot_starve_or_share_calls_with_a_small_one(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    big = await make_tenant(services, api, "big")
    small = await make_tenant(services, api, "small")
    await register(big, sandbox, "resend", 0)
    await register(small, sandbox, "resend", 0)
    big_ids = await _accept(big, BIG, "big")
    small_ids = await _accept(small, SMALL, "small")

    assert await deliver(services) == BIG + SMALL

    owner = {**dict.fromkeys(big_ids, "big"), **dict.fromkeys(small_ids, "small")}
    calls: dict[str | None, list[str]] = defaultdict(list)
    for message in await sb.messages("resend"):
        calls[message["idempotency_key"]].append(message["job_id"])
    assert None not in calls, "every email left in a batch call"
    for members in calls.values():
        assert len({owner[j] for j in members}) == 1, "a batch call mixed two tenants"
        assert len(members) <= 100, "a batch call beyond Resend's limit"
    assert sum(len(m) for m in calls.values()) == BIG + SMALL
    # The small tenant's five leave together, once, in a call of their own.
    assert sorted(len(m) for m in calls.values() if owner[m[0]] == "small") == [SMALL]

    for job_id in small_ids:
        body = await job(small, job_id)
        assert body["status"] == "COMPLETED"
        (attempt,) = body["attempts"]
        # Claimed in the first claim (the walk is fair), and waited the window at most:
        # not behind the 700 jobs of its neighbour.
        assert attempt["duration_ms"] < (WINDOW + 1.0) * 1000, attempt
    for job_id in big_ids[::50]:
        body = await job(big, job_id)
        # Each job spent its own attempt: a batch is no way to send more for less.
        assert [a["outcome"] for a in body["attempts"]] == ["success"]
