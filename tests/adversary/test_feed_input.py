"""A hostile page, stranger or tenant against the in-app feed (docs/feed.md): forged,
expired, too-long-lived, other-tenant, oversized and malformed feed tokens; another
tenant's or recipient's item ids on seen/read/archive; URLs that are not http(s);
bodies past their bounds; origins that are not exact. Each is refused, and a refusal
says nothing of why a token failed or whose an item is."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
import pytest

from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.feed_helpers import bearer, feed_token, put_recipient, send_item, sent, sign
from tests.fixtures import settings_for

DAY = 86_400


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        feed_title_max_chars=50,
        feed_body_max_chars=100,
        feed_data_max_bytes=64,
        feed_max_origins=2,
    )


async def _secret(tenant: TenantClient) -> str:
    response = await tenant.post("/v1/feed-secret/rotate")
    assert response.status_code == 200, response.text
    secret: str = response.json()["secret"]
    return secret


async def _refused(api: httpx.AsyncClient, token: str) -> None:
    response = await api.get("/feed", headers=bearer(token))
    assert response.status_code == 401, response.text
    assert response.json()["error"]["message"] == "the feed token is not valid"


async def test_forged_expired_and_too_long_lived_tokens_are_refused(
    services: Services, tenant: TenantClient
) -> None:
    await put_recipient(tenant, "user-1")
    secret = await _secret(tenant)
    now = int(services.clock.now())
    good = sign(secret, tenant.tenant_id, "user-1", now + DAY)
    assert (await tenant.api.get("/feed", headers=bearer(good))).status_code == 200
    message, mac = good.split(".")
    flipped = mac[:-1] + ("0" if mac[-1] != "0" else "1")
    await _refused(tenant.api, f"{message}.{flipped}")
    await _refused(tenant.api, sign("hfs_guessed", tenant.tenant_id, "user-1", now + DAY))
    await _refused(tenant.api, sign(secret, tenant.tenant_id, "user-1", now - 1))
    await _refused(tenant.api, sign(secret, tenant.tenant_id, "user-1", now + 40 * DAY))
    # A signed claim for a recipient the tenant does not have.
    await _refused(tenant.api, sign(secret, tenant.tenant_id, "nobody", now + DAY))


async def test_a_token_cannot_name_another_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    await put_recipient(tenant, "user-1")
    await put_recipient(other, "user-1")
    await sent(other, "user-1", body="other's secret")
    mine = await _secret(tenant)
    await _secret(other)
    now = int(services.clock.now())
    # Signed with this tenant's secret, claiming the other tenant: its MAC fails there.
    await _refused(api, sign(mine, other.tenant_id, "user-1", now + DAY))
    # Swapping the tenant inside a valid token breaks its MAC too.
    good = sign(mine, tenant.tenant_id, "user-1", now + DAY)
    raw = f"{other.tenant_id}.{now + DAY}.user-1".encode()
    swapped = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    await _refused(api, f"{swapped}.{good.split('.')[1]}")
    page = (await api.get("/feed", headers=bearer(good))).json()
    assert page["data"] == [] and page["unread_count"] == 0


@pytest.mark.parametrize(
    "token",
    [
        "x" * 100_000,
        "",
        "no-dot-at-all",
        "%%%%.%s" % ("0" * 64),
        "YWJj.%s" % ("0" * 64),  # "abc": not tenant.expires.external
        "YWJj.%s" % ("G" * 64),
        base64.urlsafe_b64encode(b"t.1.\xff\xfe").decode().rstrip("=") + "." + "0" * 64,
        base64.urlsafe_b64encode(b"t.99999999999999.u").decode().rstrip("=") + "." + "0" * 64,
        "\u00e9" * 40 + "." + "0" * 64,
    ],
)
async def test_malformed_and_oversized_tokens_are_refused(tenant: TenantClient, token: str) -> None:
    header = f"Bearer {token}".encode()  # as bytes: a header of UTF-8, not only ASCII
    response = await tenant.api.get("/feed", headers={"Authorization": header})
    assert response.status_code == 401


async def test_another_recipients_or_tenants_item_is_not_found_and_unchanged(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    for client in (tenant, other):
        await put_recipient(client, "user-1")
    await put_recipient(tenant, "user-2")
    await sent(tenant, "user-2", body="user-2's")
    await sent(other, "user-1", body="other tenant's")
    theirs = bearer(await feed_token(tenant, "user-2"))
    [item] = (await api.get("/feed", headers=theirs)).json()["data"]
    [foreign] = (await api.get("/feed", headers=bearer(await feed_token(other, "user-1")))).json()[
        "data"
    ]
    mine = bearer(await feed_token(tenant, "user-1"))
    for target in (item["id"], foreign["id"], "no-such-item"):
        for mark in ("seen", "read", "archive"):
            response = await api.post(f"/feed/{target}/{mark}", headers=mine)
            assert response.status_code == 404, response.text
            assert response.json()["error"]["message"] == "no such feed item"
    [still] = (await api.get("/feed", headers=theirs)).json()["data"]
    assert (still["seen_at"], still["read_at"], still["archived_at"]) == (None, None, None)
    assert (await api.post(f"/feed/{item['id']}/delete", headers=mine)).status_code == 422


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/path",
        "https://",
        "https://app.example/\nx",
        " https://app.example/",
        "https://app.example/" + "a" * 2100,
    ],
)
async def test_urls_that_are_not_http_are_refused(tenant: TenantClient, url: str) -> None:
    await put_recipient(tenant, "user-1")
    response = await send_item(tenant, "user-1", url=url)
    assert response.status_code == 422, response.text
    assert (await tenant.get("/v1/recipients/user-1/feed")).json()["data"] == []


async def test_bodies_past_their_bounds_are_refused(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    for fields in (
        {"title": "t" * 51},
        {"body": "b" * 101},
        {"data": {"k": "v" * 100}},
        {"body": "nul\x00"},
        {"body": "b" * 30_000},
        {"extra": "field"},
    ):
        response = await send_item(tenant, "user-1", **fields)
        assert response.status_code == 422, (fields, response.text)
    ok = await send_item(tenant, "user-1", title="<img src=x onerror=alert(1)>", body="<b>x</b>")
    assert ok.status_code == 202
    # Stored as text and answered as JSON text: never markup.
    [item] = (await tenant.get("/v1/recipients/user-1/feed")).json()["data"]
    assert item["title"] == "<img src=x onerror=alert(1)>"


async def test_origins_must_be_exact_and_bounded(tenant: TenantClient) -> None:
    for origins in (
        ["*"],
        ["https://app.example/path"],
        ["HTTPS://APP.EXAMPLE"],
        ["https://app.example", "https://b.example", "https://c.example"],
        ["null"],
        ["https://app.example:99999999"],
        ["x" * 300],
    ):
        response = await tenant.put("/v1/feed-origins", json={"origins": origins})
        assert response.status_code == 422, (origins, response.text)
    assert (await tenant.get("/v1/feed-origins")).json()["origins"] == []


async def test_a_malformed_last_event_id_is_refused(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    headers = bearer(await feed_token(tenant, "user-1"))
    for value in ("-1", "abc", "1" * 19, "1e5"):
        response = await tenant.api.get("/feed/stream", headers={**headers, "Last-Event-ID": value})
        assert response.status_code == 422, value
