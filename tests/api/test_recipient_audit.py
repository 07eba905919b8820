"""Audit events of recipients, categories and preferences (docs/recipients.md, "Audit
events"), on both databases: one event per change, in its transaction, naming the
recipient's row id or the category's key and the fields changed, never a value."""

from __future__ import annotations

from typing import Any

from tests.conftest import TenantClient

EMAIL = "Ada Lovelace <ada.lovelace@example.org>"
SECRET_DATA = "plan-of-ada-4242"


async def log(tenant: TenantClient) -> list[dict[str, Any]]:
    response = await tenant.get("/v1/audit-log")
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return list(reversed(data))  # oldest first


async def test_recipient_category_and_preference_changes_name_fields_not_values(
    tenant: TenantClient,
) -> None:
    body = {"email": EMAIL, "phone": "+1 415 555 2671", "data": {"plan": SECRET_DATA}}
    created = await tenant.put("/v1/recipients/user-1", json=body)
    assert created.status_code == 201, created.text
    changed = await tenant.put("/v1/recipients/user-1", json={"phone": None})
    assert changed.status_code == 200, changed.text
    category = {"name": "Weekly digest", "kind": "marketing", "default": {"email": True}}
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code == 201
    assert (await tenant.put("/v1/categories/digest", json=category)).status_code == 200
    patch = {"categories": {"digest": {"email": False, "sms": True}}}
    chosen = await tenant.patch("/v1/recipients/user-1/preferences", json=patch)
    assert chosen.status_code == 200, chosen.text

    events = await log(tenant)
    assert [(e["action"], e["target_type"]) for e in events] == [
        ("recipient.created", "recipient"),
        ("recipient.updated", "recipient"),
        ("category.created", "category"),
        ("category.updated", "category"),
        ("recipient.preferences_changed", "recipient"),
    ]
    row_id = events[0]["target_id"]
    assert row_id and row_id != "user-1"
    assert {events[i]["target_id"] for i in (0, 1, 4)} == {row_id}
    assert events[0]["changes"] == {"fields": ["data", "email", "phone"]}
    assert events[1]["changes"] == {"fields": ["phone"]}
    assert events[2]["target_id"] == "digest"
    assert events[4]["changes"] == {"categories": {"digest": ["email", "sms"]}}
    shown = str(events)
    for value in ("ada.lovelace", "2671", SECRET_DATA, "Weekly digest"):
        assert value not in shown


async def test_a_refused_change_records_no_event(tenant: TenantClient) -> None:
    big = {"data": {"x": "y" * 20_000}}
    assert (await tenant.put("/v1/recipients/user-2", json=big)).status_code == 422
    assert (await tenant.put("/v1/recipients/user-3", json={})).status_code == 201
    unknown = {"categories": {"nope": {"email": False}}}
    refused = await tenant.patch("/v1/recipients/user-3/preferences", json=unknown)
    assert refused.status_code == 422, refused.text
    assert [e["action"] for e in await log(tenant)] == ["recipient.created"]
