"""Digests end to end, on SQLite and PostgreSQL, through the sandbox over real HTTP, on
the injected clock: notifications with one recipient and key are gathered and sent
once when the window closes (``window_seconds``, or daily ``at`` a local time in the
recipient's zone), the template getting ``items`` in order and ``count``; one that
arrives after the close starts the next window; a replayed Idempotency-Key gathers
once; two processes sweeping at once send a digest once; a refused send is recorded
on the digest; erasing the recipient scrubs its digests' items; every gathered
notification shows its digest and, once sent, the job."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from homing.api.digest_plans import planner
from homing.clock import ManualClock
from homing.managers.quiet_hours import next_reading
from homing.sandbox.server import SandboxServer
from homing.services import Services, build
from homing.settings import Settings
from homing.store.tables.notifications import digest_items
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver, job, register
from tests.e2e.test_recipients import put_recipient
from tests.e2e.test_templates import make_template, publish

FROM = "Acme <hello@acme.example>"
PARTS: dict[str, Any] = {
    "email": {
        "subject": "{{ count }} new comments",
        "text": "{% for c in items %}{{ c.who }}: {{ c.text }}\n{% endfor %}",
    },
}
WINDOW = {"key": "comments", "window_seconds": 3600}


async def ready(tenant: TenantClient, sandbox: SandboxServer, **recipient: Any) -> None:
    """A digest template, Resend on the sandbox, and the recipient ``user-1``."""
    await make_template(tenant, "comments")
    await publish(tenant, "comments", **PARTS)
    await register(tenant, sandbox, "resend", 1)
    await put_recipient(tenant, "user-1", email="ada@example.com", **recipient)


async def comment(
    tenant: TenantClient,
    who: str,
    text: str,
    digest: dict[str, Any] = WINDOW,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    body = {
        "recipient": "user-1",
        "template": "comments",
        "data": {"who": who, "text": text},
        "channels": ["email"],
        "strategy": "all",
        "from": FROM,
        "digest": digest,
    }
    response = await tenant.post("/v1/notifications", json=body, headers=headers or {})
    assert response.status_code == 202, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def shown(tenant: TenantClient, notification_id: str) -> dict[str, Any]:
    response = await tenant.get(f"/v1/notifications/{notification_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def sweep(services: Services) -> int:
    return await services.digests.sweep(planner(services))


async def test_a_window_gathers_its_notifications_and_sends_them_once(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox)
    first = await comment(tenant, "Bo", "nice")
    clock.advance(60)
    second = await comment(tenant, "Cy", "agreed")
    third = await comment(tenant, "Di", "+1")
    assert first["status"] == "gathered" and first["steps"] == []
    digest = first["digest"]
    assert (digest["key"], digest["status"], digest["position"]) == ("comments", "open", 0)
    assert [second["digest"]["position"], third["digest"]["position"]] == [1, 2]
    assert {n["digest"]["id"] for n in (first, second, third)} == {digest["id"]}
    closes = datetime.fromisoformat(digest["close_at"]).timestamp()
    # The first one opened the window.
    assert closes == pytest.approx(clock.now() - 60 + 3600, abs=1e-3)

    clock.advance(3600 - 61)
    assert await sweep(services) == 0  # the window is still open
    assert await deliver(services) == 0
    clock.advance(1)
    assert await sweep(services) == 1
    assert await sweep(services) == 0  # sent once
    assert await deliver(services) == 1
    [email] = await sb.messages("resend")
    assert email["subject"] == "3 new comments"
    assert email["text"] == "Bo: nice\nCy: agreed\nDi: +1\n"

    await services.notifications.sweep()
    seen = await shown(tenant, second["id"])
    assert seen["status"] == "gathered"
    gathered = seen["digest"]
    assert (gathered["status"], gathered["count"], gathered["position"]) == ("sent", 3, 1)
    [step] = gathered["steps"]
    assert (step["channel"], step["job_status"]) == ("email", "COMPLETED")
    assert (await job(tenant, step["job_id"]))["status"] == "COMPLETED"
    sent_as = await shown(tenant, gathered["notification_id"])
    assert sent_as["status"] == "succeeded" and sent_as["digest"] is None


async def test_a_notification_after_the_close_starts_the_next_window(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox)
    first = await comment(tenant, "Bo", "one")
    clock.advance(3600)  # closed, not sent yet: the next one goes to a new window
    late = await comment(tenant, "Cy", "two")
    assert late["digest"]["id"] != first["digest"]["id"]
    assert late["digest"]["position"] == 0
    assert await sweep(services) == 1
    after = await comment(tenant, "Di", "three")  # while the first is sent: the new one
    assert after["digest"]["id"] == late["digest"]["id"]
    assert await deliver(services) == 1
    clock.advance(3600)
    assert await sweep(services) == 1
    assert await deliver(services) == 1
    subjects = sorted(m["subject"] for m in await sb.messages("resend"))
    assert subjects == ["1 new comments", "2 new comments"]
    assert (await shown(tenant, first["id"]))["digest"]["count"] == 1


async def test_a_daily_digest_closes_at_the_local_time_of_the_recipient(
    services: Services,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    zone = "America/New_York"
    await ready(tenant, sandbox, timezone=zone)
    daily = {"key": "daily", "at": "09:00"}
    body = await comment(tenant, "Bo", "one", daily)
    opened = datetime.fromtimestamp(clock.now(), UTC)
    expected = next_reading(opened, time(9, 0), ZoneInfo(zone))
    closes = datetime.fromisoformat(body["digest"]["close_at"])
    assert abs((closes - expected).total_seconds()) < 1e-3
    local = closes.astimezone(ZoneInfo(zone))
    assert (local.hour, local.minute) == (9, 0)
    assert 0 < closes.timestamp() - clock.now() <= 86_400
    await comment(tenant, "Cy", "two", daily)
    clock.advance(closes.timestamp() - clock.now() - 1)
    assert await sweep(services) == 0
    clock.advance(1)
    assert await sweep(services) == 1
    assert await deliver(services) == 1
    [email] = await sb.messages("resend")
    assert email["subject"] == "2 new comments"


async def test_a_replayed_idempotency_key_gathers_once(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await ready(tenant, sandbox)
    first = await comment(tenant, "Bo", "one", headers={"Idempotency-Key": "c-1"})
    again = await comment(tenant, "Bo", "one", headers={"Idempotency-Key": "c-1"})
    assert again["id"] == first["id"]
    other = await comment(tenant, "Cy", "two")
    assert other["digest"]["count"] == 2  # the replay added no item
    assert other["digest"]["position"] == 1


async def test_two_processes_sweeping_at_once_send_a_digest_once(
    services: Services,
    settings: Settings,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
) -> None:
    await ready(tenant, sandbox)
    body = await comment(tenant, "Bo", "one")
    await comment(tenant, "Cy", "two")
    clock.advance(3600)
    restarted = [await build(settings, clock=clock, run_migrations=False) for _ in range(2)]
    try:
        settled = await asyncio.gather(*(sweep(s) for s in restarted))
    finally:
        for built in restarted:
            await built.aclose()
    assert sum(settled) == 1
    assert await deliver(services) == 1
    assert len(await sb.messages("resend")) == 1
    assert (await shown(tenant, body["id"]))["digest"]["status"] == "sent"


async def test_a_digest_whose_send_is_refused_says_why(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await ready(tenant, sandbox)
    body = await comment(tenant, "Bo", "one")
    deleted = await tenant.delete("/v1/templates/comments")
    assert deleted.status_code == 204, deleted.text
    clock.advance(3600)
    assert await sweep(services) == 1
    digest = (await shown(tenant, body["id"]))["digest"]
    assert (digest["status"], digest["reason"]) == ("failed", "template_error")
    assert digest["notification_id"] is None and digest["steps"] == []
    assert await sweep(services) == 0


async def test_erasing_the_recipient_scrubs_its_digests_and_sends_none(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, clock: ManualClock
) -> None:
    await ready(tenant, sandbox)
    body = await comment(tenant, "Bo", "a secret")
    await comment(tenant, "Cy", "another")
    erased = await tenant.delete("/v1/recipients/user-1")
    assert erased.status_code == 200, erased.text
    assert erased.json()["erased"]["digest_items"] == 2
    async with services.db.transaction() as conn:
        kept = (await conn.execute(select(digest_items.c.data))).scalars().all()
    assert kept == [None, None]
    digest = (await shown(tenant, body["id"]))["digest"]
    assert (digest["status"], digest["reason"]) == ("failed", "erased")
    clock.advance(3600)
    assert await sweep(services) == 0


async def test_concurrent_notifications_share_one_window_each_in_its_own_place(
    services: Services, tenant: TenantClient, sandbox: SandboxServer, sb: Sandbox
) -> None:
    await ready(tenant, sandbox)
    answers = await asyncio.gather(*(comment(tenant, f"u{n}", str(n)) for n in range(12)))
    assert len({a["digest"]["id"] for a in answers}) == 1
    assert sorted(a["digest"]["position"] for a in answers) == list(range(12))
    last = await shown(tenant, answers[0]["id"])
    assert last["digest"]["count"] == 12
