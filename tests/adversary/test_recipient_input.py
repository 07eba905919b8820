"""A hostile tenant against recipients, categories and preferences: another tenant's
ids, time zones that are paths or no zone at all, huge ``data``, a flood of external
ids, and bodies past every bound. Each is refused before it is stored, and no refusal
shows another tenant's data."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from homing.models import Plan
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import settings_for

MAX_RECIPIENTS = 25


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        max_recipients_per_tenant=MAX_RECIPIENTS,
        max_categories_per_tenant=3,
        recipient_data_max_bytes=1024,
    )


async def _other(services: Services, api: httpx.AsyncClient) -> TenantClient:
    return await make_tenant(services, api, "other", Plan.STARTUP)


async def test_another_tenants_recipient_is_not_found_and_never_shown(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await _other(services, api)
    put = await other.put("/v1/recipients/shared-id", json={"email": "secret@other.example"})
    assert put.status_code == 201, put.text
    await other.put("/v1/categories/news", json={"name": "News", "kind": "transactional"})
    for path in ("/v1/recipients/shared-id", "/v1/recipients/shared-id/preferences"):
        response = await tenant.get(path)
        assert response.status_code == 404, response.text
        assert "secret@other" not in response.text
    assert (await tenant.delete("/v1/recipients/shared-id")).status_code == 404
    listed = await tenant.get("/v1/recipients")
    assert listed.json()["data"] == []
    # The same external id in this tenant is this tenant's own recipient.
    mine = await tenant.put("/v1/recipients/shared-id", json={"email": "mine@example.com"})
    assert mine.status_code == 201, mine.text
    assert "secret@other" not in mine.text
    # A send by it goes to this tenant's address; the other's category is unknown here.
    email = {"recipient": "shared-id", "from": "a@acme.example", "subject": "s", "text": "t"}
    refused = await tenant.post("/v1/notifications/email", json={**email, "category": "news"})
    assert refused.json()["error"]["code"] == "unknown_category", refused.text
    theirs = await other.get("/v1/recipients/shared-id")
    assert theirs.json()["email"] == "secret@other.example"


@pytest.mark.parametrize(
    "zone",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "Europe/../../../etc/passwd",
        "Europe\\Paris",
        "x" * 10_000,
        "Nope/Zone",
        "Europe/Paris\x00",
        "",
        "Etc/../UTC",
    ],
)
async def test_a_hostile_time_zone_is_refused_before_any_lookup(
    tenant: TenantClient, zone: str
) -> None:
    response = await tenant.put("/v1/recipients/tz-user", json={"timezone": zone})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "validation_error"
    assert (await tenant.get("/v1/recipients/tz-user")).status_code == 404


async def test_real_time_zones_and_locales_are_kept(tenant: TenantClient) -> None:
    for zone, locale in [("Europe/Paris", "fr"), ("America/Argentina/Buenos_Aires", "es-AR")]:
        response = await tenant.put(
            "/v1/recipients/tz-ok", json={"timezone": zone, "locale": locale}
        )
        assert response.status_code in (200, 201), response.text
        assert (response.json()["timezone"], response.json()["locale"]) == (zone, locale)


@pytest.mark.parametrize("locale", ["e", "english-language-tag", "en_US", "en-" + "a" * 40, "12"])
async def test_a_locale_that_is_no_language_tag_is_refused(
    tenant: TenantClient, locale: str
) -> None:
    response = await tenant.put("/v1/recipients/loc", json={"locale": locale})
    assert response.status_code == 422, response.text


async def test_huge_or_deep_data_is_refused_and_nothing_is_stored(tenant: TenantClient) -> None:
    huge = await tenant.put("/v1/recipients/big", json={"data": {"blob": "x" * 5000}})
    assert huge.status_code == 422, huge.text
    assert huge.json()["error"]["details"]["max_bytes"] == 1024
    deep: object = 1
    for _ in range(300):
        deep = {"d": deep}
    nested = await tenant.put("/v1/recipients/big", json={"data": deep})
    assert nested.status_code == 422, nested.text
    assert (await tenant.get("/v1/recipients/big")).status_code == 404


async def test_an_external_id_flood_stops_at_the_bound_and_deletes_free_room(
    tenant: TenantClient,
) -> None:
    for n in range(MAX_RECIPIENTS):
        response = await tenant.put(f"/v1/recipients/flood-{n}", json={})
        assert response.status_code == 201, response.text
    over = await tenant.put("/v1/recipients/one-more", json={})
    assert over.status_code == 403, over.text
    assert over.json()["error"]["code"] == "quota_exceeded"
    # Updating one that exists is no new recipient.
    again = await tenant.put("/v1/recipients/flood-0", json={"locale": "en"})
    assert again.status_code == 200, again.text
    assert (await tenant.delete("/v1/recipients/flood-0")).status_code == 200
    assert (await tenant.put("/v1/recipients/one-more", json={})).status_code == 201


@pytest.mark.parametrize(
    "external_id", ["a" * 256, "-leading-dash", "has space", "semi;colon", "caf\u00e9", "%2e%2e"]
)
async def test_an_external_id_out_of_its_pattern_is_refused(
    tenant: TenantClient, external_id: str
) -> None:
    response = await tenant.put(f"/v1/recipients/{external_id}", json={})
    assert response.status_code in (404, 422), response.text
    assert (await tenant.get("/v1/recipients")).json()["data"] == []


async def test_categories_stop_at_their_bound_and_bodies_are_strict(tenant: TenantClient) -> None:
    for key in ("a", "b", "c"):
        body = {"name": key, "kind": "marketing"}
        assert (await tenant.put(f"/v1/categories/{key}", json=body)).status_code == 201
    over = await tenant.put("/v1/categories/d", json={"name": "d", "kind": "marketing"})
    assert over.status_code == 403, over.text
    bad = [
        {"name": "x", "kind": "spam"},
        {"name": "x", "kind": "marketing", "default": {"pigeon": True}},
        {"name": "x", "kind": "marketing", "default": {"email": "yes"}},
        {"name": "x", "kind": "marketing", "frequency_cap": {"count": 0, "per_seconds": 1}},
        {"name": "x", "kind": "marketing", "quiet_hours": {"start": "25:00", "end": "08:00"}},
        {"name": "x", "kind": "marketing", "quiet_hours": {"start": "08:00", "end": "08:00"}},
        {"name": "x" * 201, "kind": "marketing"},
    ]
    for body in bad:
        response = await tenant.put("/v1/categories/a", json=body)
        assert response.status_code == 422, (body, response.text)


async def test_a_preference_for_an_unknown_category_or_channel_is_refused(
    tenant: TenantClient,
) -> None:
    await tenant.put("/v1/recipients/p", json={})
    await tenant.put("/v1/categories/known", json={"name": "K", "kind": "transactional"})
    unknown = await tenant.patch(
        "/v1/recipients/p/preferences", json={"categories": {"nope": {"email": False}}}
    )
    assert unknown.status_code == 422, unknown.text
    assert unknown.json()["error"]["code"] == "unknown_category"
    channel = await tenant.patch(
        "/v1/recipients/p/preferences", json={"categories": {"known": {"pigeon": False}}}
    )
    assert channel.status_code == 422, channel.text
    many = {f"k{n}": {"email": False} for n in range(1001)}
    flood = await tenant.patch("/v1/recipients/p/preferences", json={"categories": many})
    assert flood.status_code == 422, flood.text
    shown = await tenant.get("/v1/recipients/p/preferences")
    known = {"email": True, "sms": True, "chat": True, "in_app": True}
    assert shown.json() == {"categories": {"known": known}}
