"""A hostile owner at Send a test (``/t/{tenant}/send-test``): a flood is bounded by the
tenant's sending rate, the same bucket as the API's (the API is refused after it too);
another tenant's page is 404 and its template unknown; over-large forms and fields are
refused, not cut and not echoed; hostile JSON (nesting past the parser, NaN), a URL to
the metadata address, a header injection and markup are refused beside their field or
shown as text, and nothing is queued for any of them."""

from __future__ import annotations

import httpx

from homing.domain.job_search import JobFilter
from homing.models import Plan, Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant, stored_provider
from tests.console_helpers import add_user, browser, sign_in
from tests.e2e.test_templates import make_template, publish

OWNER = "mallory@example.com"
EMAIL = {
    "channel": "email",
    "to": "ada@example.com",
    "from": "hello@acme.example",
    "subject": "Flood",
    "text": "x",
}


async def _count(services: Services, tenant_id: str) -> int:
    return len((await services.jobs.page(JobFilter(tenant_id=tenant_id), limit=100)).jobs)


async def test_a_flood_of_tests_is_bounded_by_the_apis_sending_rate(
    services: Services, api: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, api, "flood", Plan.STARTUP, rate_limit_per_minute=3)
    await stored_provider(services, tenant.tenant_id)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    where = f"/t/{tenant.tenant_id}/send-test"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        answers = [await client.post(where, data={"csrf": csrf, **EMAIL}) for _ in range(6)]
    assert [a.status_code for a in answers] == [303] * 3 + [429] * 3
    assert 'role="alert" data-problem>' in answers[-1].text
    assert await _count(services, tenant.tenant_id) == 3
    # One bucket: the API's next send is refused too.
    body = {k: v for k, v in EMAIL.items() if k != "channel"}
    api_send = await tenant.post("/v1/notifications/email", json=body)
    assert api_send.status_code == 429


async def test_another_tenants_page_is_404_and_its_template_unknown(
    services: Services, api: httpx.AsyncClient
) -> None:
    mine = await make_tenant(services, api, "mine", provider=True)
    theirs = await make_tenant(services, api, "theirs", provider=True)
    await make_template(theirs, "secret")
    await publish(theirs, "secret", email={"subject": "theirs only", "text": "theirs only"})
    await add_user(services, OWNER, mine.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        page = await client.get(f"/t/{theirs.tenant_id}/send-test")
        posted = await client.post(f"/t/{theirs.tenant_id}/send-test", data={"csrf": csrf, **EMAIL})
        borrowed = await client.post(
            f"/t/{mine.tenant_id}/send-test",
            data={"csrf": csrf, **EMAIL, "template": "secret"},
        )
    assert page.status_code == posted.status_code == 404
    assert borrowed.status_code == 422 and "theirs only" not in borrowed.text
    assert await _count(services, theirs.tenant_id) == 0
    assert await _count(services, mine.tenant_id) == 0


async def test_oversize_forms_and_fields_are_refused_not_cut_and_not_echoed(
    services: Services, tenant: TenantClient
) -> None:
    await stored_provider(services, tenant.tenant_id)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    where = f"/t/{tenant.tenant_id}/send-test"
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        huge = await client.post(where, data={"csrf": csrf, **EMAIL, "text": "A" * 600_000})
        fields = {f"f{n}": "x" for n in range(60)}
        many = await client.post(where, data={"csrf": csrf, **EMAIL, **fields})
        long_to = await client.post(where, data={"csrf": csrf, **EMAIL, "to": "a" * 500})
        long_data = await client.post(
            where, data={"csrf": csrf, **EMAIL, "template": "t", "data": "[" * 70_000}
        )
    assert huge.status_code == 413 and "A" * 100 not in huge.text
    assert many.status_code == 422
    assert long_to.status_code == 422 and 'id="to-error"' in long_to.text
    assert "a" * 100 not in long_to.text
    assert long_data.status_code == 422 and 'id="data-error"' in long_data.text
    assert await _count(services, tenant.tenant_id) == 0


async def test_hostile_content_is_refused_beside_its_field_or_shown_as_text(
    services: Services, api: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, api, "acme", provider=True)
    await add_user(services, OWNER, tenant.tenant_id, Role.OWNER)
    where = f"/t/{tenant.tenant_id}/send-test"
    hook = {"channel": "webhook", "url": "https://hooks.example.com/in", "payload": "{}"}
    cases = [
        ({**hook, "payload": "[" * 60_000 + "]" * 60_000}, "payload"),  # past the parser
        ({**hook, "payload": '{"n": NaN}'}, "payload"),
        ({**hook, "url": "http://169.254.169.254/latest/meta-data"}, "url"),
        ({**hook, "event_type": "order created<script>"}, "event_type"),
        ({**EMAIL, "from": "a@b.example\r\nBcc: everyone@example.com"}, "from"),
        ({**EMAIL, "to": "<script>alert(1)</script>"}, "to"),
        ({"channel": "sms", "sms_to": "+1415555267" + "1" * 20, "body": "x"}, "sms_to"),
        ({"channel": "sms", "sms_to": "+14155552671", "body": "€" * 800}, "body"),
    ]
    async with browser(services) as client:
        csrf = await sign_in(client, OWNER)
        for form, field in cases:
            answer = await client.post(where, data={"csrf": csrf, **form})
            assert answer.status_code in (413, 422), (field, answer.status_code)
            assert f'id="{field}-error"' in answer.text, (field, answer.text[-2000:])
            assert "<script>" not in answer.text
    assert await _count(services, tenant.tenant_id) == 0
