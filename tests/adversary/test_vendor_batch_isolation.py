"""A hostile tenant tries to use SendGrid and Mailgun batch requests against a
neighbour: sending more than a request may carry, the neighbour's very addresses at the
same moment, and content holding Mailgun's ``%recipient.x%`` and SendGrid-style
substitution tags. Its messages never share a request with another tenant's, no
request exceeds the vendor's limits or names an address twice, and no message is
substituted with another's data.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.e2e.conftest import Sandbox, deliver, job, register
from tests.fixtures import settings_for

BIG = 1100  # more than one SendGrid request may carry (1,000 personalizations)
SHARED = [f"shared{i}@example.com" for i in range(5)]


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        batch_window_seconds=0.3,
        claim_batch_size=600,
        provider_timeout_seconds=5,
        provider_deadline_seconds=5,
    )


async def _accept(tenant: TenantClient, messages: list[dict[str, Any]]) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(messages), 500):
        response = await tenant.post(
            "/v1/notifications/email/batch", json={"messages": messages[start : start + 500]}
        )
        assert response.status_code == 202, response.text
        ids += [str(r["id"]) for r in response.json()["results"]]
    return ids


def _requests(recorded: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for message in recorded:
        by_id[message["message_id"]].append(message)
    return by_id


async def test_a_hostile_sendgrid_tenant_cannot_share_or_overfill_a_request(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    hostile = await make_tenant(services, api, "hostile")
    neighbour = await make_tenant(services, api, "neighbour")
    await register(hostile, sandbox, "sendgrid", 0)
    await register(neighbour, sandbox, "sendgrid", 0)
    base = {"from": "a@acme.example", "subject": "s", "text": "t"}
    flood = [{**base, "to": f"h{i}@example.com", "text": f"t{i}"} for i in range(BIG)]
    # The neighbour's addresses, twice each, and a body made of substitution-like tags.
    flood += [{**base, "to": to, "text": "-hjtext- -hjhtml- %recipient.hjid%"} for to in SHARED]
    flood += [{**base, "to": to} for to in SHARED]
    hostile_ids = await _accept(hostile, flood)
    mine = [{**base, "to": to, "text": f"private to {to}"} for to in SHARED]
    neighbour_ids = await _accept(neighbour, mine)

    assert await deliver(services) == len(flood) + len(mine)

    owner = {**dict.fromkeys(hostile_ids, "h"), **dict.fromkeys(neighbour_ids, "n")}
    recorded = await sb.messages("sendgrid")
    # Few requests, none refused: a request the sandbox refused (an address twice, too
    # many personalizations) would have been resent item by item, over a thousand.
    stats = (await sb.http.get("/_sandbox/stats")).json()
    assert stats["requests"]["sendgrid"] <= 12, stats["requests"]
    assert sorted(m["job_id"] for m in recorded) == sorted(owner)
    for members in _requests(recorded).values():
        assert len({owner[m["job_id"]] for m in members}) == 1, "a request mixed tenants"
        assert len(members) <= 1000, "a request beyond SendGrid's 1,000 personalizations"
        addresses = [to for m in members for to in m["to"]]
        assert len(addresses) == len(set(addresses)), "an address twice in a request"
    by_job = {m["job_id"]: m for m in recorded}
    for job_id, message in zip(neighbour_ids, mine, strict=True):
        assert by_job[job_id]["text"] == message["text"]
    for job_id in hostile_ids[BIG : BIG + len(SHARED)]:
        assert by_job[job_id]["text"] == "-hjtext- -hjhtml- %recipient.hjid%"
    for job_id in neighbour_ids + hostile_ids[::100]:
        assert (await job(neighbour if owner[job_id] == "n" else hostile, job_id))[
            "status"
        ] == "COMPLETED"


async def test_mailgun_recipient_variables_never_carry_another_tenants_data(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    hostile = await make_tenant(services, api, "hostile")
    neighbour = await make_tenant(services, api, "neighbour")
    await register(hostile, sandbox, "mailgun", 0)
    await register(neighbour, sandbox, "mailgun", 0)
    base = {"from": "a@acme.example", "text": "Same body"}
    # The hostile subjects ask Mailgun for another recipient's variables.
    probes = [
        {**base, "to": to, "subject": "%recipient.subject% %recipient.hjid%"} for to in SHARED
    ]
    hostile_ids = await _accept(hostile, [*probes, {**base, "to": "x@example.com", "subject": "x"}])
    neighbour_ids = await _accept(
        neighbour, [{**base, "to": to, "subject": f"secret for {to}"} for to in SHARED]
    )

    assert await deliver(services) == len(hostile_ids) + len(neighbour_ids)

    owner = {**dict.fromkeys(hostile_ids, "h"), **dict.fromkeys(neighbour_ids, "n")}
    recorded = await sb.messages("mailgun")
    assert sorted(m["job_id"] for m in recorded) == sorted(owner)
    for members in _requests(recorded).values():
        assert len({owner[m["job_id"]] for m in members}) == 1, "a request mixed tenants"
    for message in recorded:
        if owner[message["job_id"]] == "h":
            assert "secret" not in (message["subject"] or "")
    by_job = {m["job_id"]: m for m in recorded}
    for job_id in hostile_ids[: len(SHARED)]:
        assert by_job[job_id]["subject"] == "%recipient.subject% %recipient.hjid%"
