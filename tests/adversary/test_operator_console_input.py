"""Hostile input at the operator's console pages: dates that are no dates or out of
range, over-long text and cursors, values of the wrong type, an unknown tenant (404,
nothing changed), a redrive without its CSRF token or with another session's, a
tenant's viewer on every operator page, and markup in tenant-controlled strings."""

from __future__ import annotations

import httpx
import pytest

from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter

LETTERS = "/operator/dead-letters"
OPERATOR_PAGES = (
    "/operator/tenants",
    "/operator/queues",
    "/operator/dead-letters",
    "/operator/providers",
    "/operator/alerts",
    "/operator/audit",
)


async def _failed(services: Services, tenant: TenantClient, letter_id: str) -> bool:
    letter = await services.dead_letter_store.get(tenant.tenant_id, letter_id)
    job, _ = await services.jobs.get(tenant.tenant_id, letter.job_id)
    return job.status.value == "FAILED"


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"since": "yesterday"}, "From: a date like"),
        ({"until": "2026-13-45"}, "Until: a date like"),
        ({"since": "0001-01-01"}, "From: a date like"),
        ({"since": "9999-12-31T23:59:59-14:00"}, "From: a date like"),
        ({"since": "2026-05-02", "until": "2026-05-01"}, "From must not be after Until"),
        ({"queue": "no-such-queue"}, "Choose a queue from the list"),
    ],
)
async def test_bad_dates_and_values_are_refused_with_what_went_wrong(
    services: Services, tenant: TenantClient, params: dict[str, str], says: str
) -> None:
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        answer = await client.get(LETTERS, params=params)
    assert answer.status_code == 422 and says in answer.text


async def test_over_long_text_cursors_and_wrong_types_are_refused(
    services: Services, tenant: TenantClient
) -> None:
    letter_id = await dead_letter(services, tenant, error_class="provider_error")
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        gets = [
            await client.get(LETTERS, params=p)
            for p in (
                {"q": "x" * 201},
                {"cursor": "c" * 37},
                {"tenant_id": "t" * 37},
                {"error_class": "e" * 41},
                {"provider": "p" * 41},
                {"since": "2026-05-01" * 5},
            )
        ]
        odd_cursor = await client.get(LETTERS, params={"cursor": "' OR 1=1 --"})
        health = [
            await client.get("/operator/providers", params=p)
            for p in ({"window": "1y"}, {"page": "0"}, {"page": "abc"}, {"page": "1001"})
        ]
        posted = await client.post(
            f"{LETTERS}/redrive", data={"csrf": csrf, "q": "x" * 201, "error_class": "x"}
        )
    assert [g.status_code for g in gets] == [422] * 6
    assert odd_cursor.status_code == 200
    assert [h.status_code for h in health] == [422] * 4
    assert "Choose a window" in health[0].text
    assert posted.status_code == 422 and "at most 200 characters" in posted.text
    assert await _failed(services, tenant, letter_id)


async def test_an_unknown_tenant_is_404_and_its_redrive_changes_nothing(
    services: Services, tenant: TenantClient
) -> None:
    letter_id = await dead_letter(services, tenant)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        listed = await client.get(LETTERS, params={"tenant_id": "t_missing"})
        redrive = await client.post(
            f"{LETTERS}/redrive", data={"csrf": csrf, "tenant_id": "t_missing", "all": "1"}
        )
    assert listed.status_code == 404 and "There is no such tenant" in listed.text
    assert redrive.status_code == 404
    assert await _failed(services, tenant, letter_id)


async def test_a_redrive_without_its_csrf_token_or_with_another_sessions_is_refused(
    services: Services, tenant: TenantClient
) -> None:
    letter_id = await dead_letter(services, tenant, error_class="provider_error")
    await add_user(services, "root@example.com", operator=True)
    await add_user(services, "eve@example.com", operator=True)
    wanted = {"error_class": "provider_error"}
    async with browser(services) as root, browser(services) as eve:
        await sign_in(root, "root@example.com")
        stolen = await sign_in(eve, "eve@example.com")
        missing = await root.post(f"{LETTERS}/redrive", data=wanted)
        borrowed = await root.post(f"{LETTERS}/redrive", data={"csrf": stolen, **wanted})
    assert missing.status_code == 403 and borrowed.status_code == 403
    assert await _failed(services, tenant, letter_id)


async def test_a_tenants_viewer_gets_404_on_every_operator_page(
    services: Services, tenant: TenantClient
) -> None:
    letter_id = await dead_letter(services, tenant)
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        pages = [await client.get(p) for p in OPERATOR_PAGES]
        redrive = await client.post(f"{LETTERS}/redrive", data={"csrf": csrf, "all": "1"})
    assert [p.status_code for p in pages] == [404] * len(OPERATOR_PAGES)
    assert redrive.status_code == 404
    assert await _failed(services, tenant, letter_id)


MARKUP = '<script>alert("x")</script>'


async def test_tenant_controlled_strings_are_text_on_the_operator_pages(
    services: Services, api: httpx.AsyncClient
) -> None:
    evil = await make_tenant(services, api, "Evil " + MARKUP)
    await dead_letter(services, evil, error="500 " + MARKUP, error_class="x" + MARKUP[:20])
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        answers = [
            await client.get(p) for p in (LETTERS, "/operator/providers", "/operator/alerts")
        ]
    for answer in answers:
        assert answer.status_code == 200
        assert "<script>alert" not in answer.text
    assert "&lt;script&gt;" in answers[0].text
