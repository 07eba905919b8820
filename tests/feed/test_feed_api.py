"""The in-app feed through the API, on SQLite and PostgreSQL: an in-app send writes
its item and a COMPLETED job together; the tenant reads the recipient's feed; the
recipient reads and marks its own with a signed token; a category the recipient
opted out of in-app ends SUPPRESSED with no item; the feed keeps at most its cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, job
from tests.feed_helpers import bearer, feed_token, put_recipient, send_item, sent, sign
from tests.fixtures import settings_for


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, feed_max_items_per_recipient=10)


async def test_an_in_app_send_is_a_completed_job_and_an_unread_item(
    tenant: TenantClient,
) -> None:
    await put_recipient(tenant, "user-1")
    job_id = await sent(tenant, "user-1", title="Report", url="https://app.example/r/1")
    shown = await job(tenant, job_id)
    assert (shown["status"], shown["channel"]) == ("COMPLETED", "in_app")
    page = (await tenant.get("/v1/recipients/user-1/feed")).json()
    assert page["unread_count"] == 1
    [item] = page["data"]
    assert (item["title"], item["body"], item["job_id"]) == (
        "Report",
        "Your report is ready",
        job_id,
    )
    assert item["url"] == "https://app.example/r/1" and item["read_at"] is None


async def test_a_repeated_idempotency_key_replays_and_a_changed_body_conflicts(
    tenant: TenantClient,
) -> None:
    await put_recipient(tenant, "user-1")
    key = {"Idempotency-Key": "k-1"}
    first = await send_item(tenant, "user-1", headers=key)
    again = await send_item(tenant, "user-1", headers=key)
    assert again.status_code == 202 and again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    changed = await send_item(tenant, "user-1", body="Another", headers=key)
    assert changed.status_code == 422
    page = (await tenant.get("/v1/recipients/user-1/feed")).json()
    assert len(page["data"]) == 1


async def test_an_opted_out_category_is_suppressed_with_no_item(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    category = {"name": "Digest", "kind": "transactional"}
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code in (200, 201)
    choice = {"categories": {"digest": {"in_app": False}}}
    assert (await tenant.patch("/v1/recipients/user-1/preferences", json=choice)).status_code == 200
    response = await send_item(tenant, "user-1", category="digest")
    assert response.status_code == 202 and response.json()["status"] == "SUPPRESSED"
    assert (await job(tenant, response.json()["id"]))["error_class"] == "preference"
    assert (await tenant.get("/v1/recipients/user-1/feed")).json()["data"] == []
    allowed = await send_item(tenant, "user-1")  # no category: no preference applies
    assert allowed.json()["status"] == "COMPLETED"


async def test_an_unknown_recipient_or_category_is_refused(tenant: TenantClient) -> None:
    assert (await send_item(tenant, "nobody")).status_code == 422
    await put_recipient(tenant, "user-1")
    assert (await send_item(tenant, "user-1", category="nope")).status_code == 422


async def test_the_recipient_reads_and_marks_its_feed_with_a_token(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    for n in range(3):
        await sent(tenant, "user-1", body=f"item {n}")
    headers = bearer(await feed_token(tenant, "user-1"))
    page = (await tenant.api.get("/feed?limit=2", headers=headers)).json()
    assert [i["body"] for i in page["data"]] == ["item 2", "item 1"]
    assert page["unread_count"] == 3
    rest = await tenant.api.get(f"/feed?limit=2&cursor={page['next_cursor']}", headers=headers)
    assert [i["body"] for i in rest.json()["data"]] == ["item 0"]
    assert rest.json()["next_cursor"] is None
    newest = page["data"][0]["id"]
    for _ in range(2):  # idempotent
        read = await tenant.api.post(f"/feed/{newest}/read", headers=headers)
        assert read.status_code == 200 and read.json()["seen_at"] is not None
    archived = await tenant.api.post(f"/feed/{page['data'][1]['id']}/archive", headers=headers)
    assert archived.status_code == 200
    after = (await tenant.api.get("/feed", headers=headers)).json()
    assert [i["body"] for i in after["data"]] == ["item 2", "item 0"]
    assert after["unread_count"] == 1


async def test_the_feed_keeps_its_cap_dropping_read_items_first(
    services: Services, tenant: TenantClient
) -> None:
    await put_recipient(tenant, "user-1")
    headers = bearer(await feed_token(tenant, "user-1"))
    await sent(tenant, "user-1", body="old unread")
    await sent(tenant, "user-1", body="read")
    item_id = (await tenant.api.get("/feed", headers=headers)).json()["data"][0]["id"]
    assert (await tenant.api.post(f"/feed/{item_id}/read", headers=headers)).status_code == 200
    for n in range(9):
        await sent(tenant, "user-1", body=f"new {n}")
    page = (await tenant.api.get("/feed?limit=100", headers=headers)).json()
    bodies = [i["body"] for i in page["data"]]
    assert len(bodies) == 10 and "read" not in bodies and "old unread" in bodies
    await sent(tenant, "user-1", body="newest")
    page = (await tenant.api.get("/feed?limit=100", headers=headers)).json()
    bodies = [i["body"] for i in page["data"]]
    assert len(bodies) == 10 and "old unread" not in bodies and bodies[0] == "newest"


async def test_a_token_signed_by_the_tenants_backend_works_until_rotation(
    services: Services, tenant: TenantClient
) -> None:
    await put_recipient(tenant, "user.1@x")
    await sent(tenant, "user.1@x")
    rotated = await tenant.post("/v1/feed-secret/rotate")
    assert rotated.status_code == 200 and rotated.headers["Cache-Control"] == "no-store"
    secret = rotated.json()["secret"]
    expires = int(services.clock.now()) + 3600
    token = sign(secret, tenant.tenant_id, "user.1@x", expires)
    assert (await tenant.api.get("/feed", headers=bearer(token))).status_code == 200
    again = (await tenant.post("/v1/feed-secret/rotate")).json()["secret"]
    assert again != secret
    assert (await tenant.api.get("/feed", headers=bearer(token))).status_code == 401
    fresh = sign(again, tenant.tenant_id, "user.1@x", expires)
    assert (await tenant.api.get("/feed", headers=bearer(fresh))).status_code == 200


async def test_deleting_the_recipient_deletes_its_feed_and_its_tokens_stop(
    services: Services, tenant: TenantClient
) -> None:
    await put_recipient(tenant, "user-1")
    await sent(tenant, "user-1")
    headers = bearer(await feed_token(tenant, "user-1"))
    assert (await tenant.delete("/v1/recipients/user-1")).status_code == 200
    assert (await tenant.api.get("/feed", headers=headers)).status_code == 401
    await put_recipient(tenant, "user-1")  # the same external id again: a new person
    page = (await tenant.api.get("/feed", headers=headers)).json()
    assert page["data"] == [] and page["unread_count"] == 0
