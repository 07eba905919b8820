"""A hostile person at the console: guessing passwords, one tenant's member on another
tenant's pages, forged or borrowed CSRF tokens, markup in tenant-controlled strings,
oversized forms and addresses, open redirects, and the session token in the logs."""

from __future__ import annotations

import re

import httpx
import pytest

from homing.api.app import create_app
from homing.managers.audit import CLI_ACTOR
from homing.models import Role, new_id
from homing.sandbox.server import SandboxServer
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import PASSWORD, add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter
from tests.e2e.conftest import register
from tests.fixtures import captured_logs

_PARAM = re.compile(r"{(\w+)}")


async def test_guessing_one_password_locks_the_email_and_one_address_is_capped(
    services: Services,
) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        answers = [
            (await client.post("/sign-in", data={"email": "ada@example.com", "password": g}))
            for g in [f"guess number {n}" for n in range(8)]
        ]
        assert [a.status_code for a in answers] == [401] * 5 + [429] * 3
        right = await client.post(
            "/sign-in", data={"email": "ada@example.com", "password": PASSWORD}
        )
        assert right.status_code == 429
        # Spraying other emails from the same address hits the per-address cap.
        codes = [
            (
                await client.post(
                    "/sign-in", data={"email": f"u{n}@example.com", "password": "x" * 12}
                )
            ).status_code
            for n in range(30)
        ]
    assert codes.count(401) == 30 - 9 and codes[-1] == 429


async def _objects_of(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer, name: str
) -> dict[str, str]:
    tenant = await make_tenant(services, api, name)
    provider = await register(tenant, sandbox, "resend", 1)
    letter_id = await dead_letter(services, tenant)
    letter = await services.dead_letter_store.get(tenant.tenant_id, letter_id)
    second = await tenant.post("/v1/api-keys", json={"name": "second"})
    domain = await tenant.post(
        "/v1/domains", json={"domain": f"{name}.example", "provider_account_id": provider["id"]}
    )
    member = await add_user(services, f"member@{name}.example", tenant.tenant_id, Role.VIEWER)
    invited = await services.invitations.invite(
        tenant.tenant_id, name, f"new@{name}.example", Role.VIEWER, CLI_ACTOR, "http://h"
    )
    return {
        "tenant_id": tenant.tenant_id,
        "user_id": member.id,
        "invitation_id": invited.invitation_id,
        "job_id": letter.job_id,
        "key_id": second.json()["id"],
        "provider_id": provider["id"],
        "domain_id": domain.json()["id"],
        # Any well-formed id: the tenant is refused first.
        "notification_id": new_id(),
    }


def _console_tenant_routes() -> list[tuple[str, str]]:
    from homing.console import (
        audit_pages,
        dead_letter_pages,
        domain_pages,
        inbound_secret_pages,
        key_pages,
        notification_pages,
        pacing_pages,
        provider_pages,
        provider_setup,
        suppression_pages,
        tenant_pages,
        user_pages,
        webhook_pages,
    )

    found = []
    modules = (
        tenant_pages,
        notification_pages,
        dead_letter_pages,
        provider_pages,
        provider_setup,
        pacing_pages,
        inbound_secret_pages,
        domain_pages,
        suppression_pages,
        webhook_pages,
        key_pages,
        audit_pages,
    )
    modules += (user_pages,)
    for module in modules:
        for route in module.router.routes:
            path = getattr(route, "path", "")
            for method in sorted(getattr(route, "methods", ()) or ()):
                if path.startswith("/t/"):
                    found.append((method, path))
    return found


async def test_a_member_of_one_tenant_gets_404_on_every_page_of_another(
    services: Services, api: httpx.AsyncClient, sandbox: SandboxServer
) -> None:
    mine = await _objects_of(services, api, sandbox, "mine")
    theirs = await _objects_of(services, api, sandbox, "theirs")
    await add_user(services, "ada@example.com", mine["tenant_id"], Role.OWNER)
    routes = _console_tenant_routes()
    assert len(routes) >= 20
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        for method, path in routes:
            url = path
            for name in _PARAM.findall(path):
                url = url.replace("{" + name + "}", theirs[name])
            data = None
            if method == "POST":
                data = {"csrf": csrf, "name": "x", "direction": "up", "enabled": "0"}
                data |= {"email": "me@evil.example", "role": "owner"}
                data |= {"domain": "x.example", "provider_account_id": theirs["provider_id"]}
            answer = await client.request(method, url, data=data)
            assert answer.status_code == 404, (method, path, answer.status_code)
            assert "no such tenant among yours" in answer.text
    assert len(await services.keys.live(theirs["tenant_id"])) == 2
    job, _ = await services.jobs.get(theirs["tenant_id"], theirs["job_id"])
    assert job.status.value == "FAILED"
    accounts = await services.providers.all(theirs["tenant_id"])
    assert [(a.priority, a.enabled) for a in accounts] == [(1, True)]
    assert len(await services.domains.all(theirs["tenant_id"])) == 1
    assert not (await services.webhooks.secrets.status(theirs["tenant_id"])).configured
    assert len(await services.invitations.pending(theirs["tenant_id"])) == 1
    members, _ = await services.members.page(theirs["tenant_id"], limit=10, after=None)
    assert [m.role for m in members] == [Role.VIEWER]


async def test_a_csrf_token_of_another_session_is_refused(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "eve@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as ada, browser(services) as eve:
        await sign_in(ada, "ada@example.com")
        stolen = await sign_in(eve, "eve@example.com")
        refused = await ada.post(
            f"/t/{tenant.tenant_id}/api-keys", data={"csrf": stolen, "name": "evil"}
        )
    assert refused.status_code == 403
    assert len(await services.keys.live(tenant.tenant_id)) == 1


async def test_a_sign_in_posted_from_another_site_is_refused(services: Services) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        answer = await client.post(
            "/sign-in",
            data={"email": "ada@example.com", "password": PASSWORD},
            headers={"Origin": "https://evil.example"},
        )
    assert answer.status_code == 403 and "set-cookie" not in answer.headers


MARKUP = '<script>alert("x")</script><img src=x onerror=alert(1)>'


async def test_tenant_controlled_strings_are_rendered_as_text(
    services: Services, api: httpx.AsyncClient
) -> None:
    tenant = await make_tenant(services, api, "Evil " + MARKUP)
    letter_id = await dead_letter(
        services, tenant, error="500 " + MARKUP, provider="p" + MARKUP[:30]
    )
    letter = await services.dead_letter_store.get(tenant.tenant_id, letter_id)
    await tenant.post("/v1/api-keys", json={"name": "key " + MARKUP})
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "root@example.com", operator=True)
    base = f"/t/{tenant.tenant_id}"
    pages = [
        f"{base}/",
        f"{base}/messages",
        f"{base}/messages/{letter.job_id}",
        f"{base}/dead-letters",
        f"{base}/api-keys",
        f"{base}/audit",
    ]
    async with browser(services) as client, browser(services) as operator:
        await sign_in(client, "ada@example.com")
        await sign_in(operator, "root@example.com")
        answers = [await client.get(p) for p in pages]
        answers.append(await operator.get("/operator/tenants"))
        answers.append(await operator.get("/operator/audit"))
    for answer in answers:
        assert answer.status_code == 200, answer.url
        assert "<script>alert" not in answer.text and "<img src=x" not in answer.text
        assert "&lt;script&gt;" in answer.text or "&lt;scr" in answer.text, answer.url


async def test_oversized_forms_fields_and_addresses_are_refused(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        huge = await client.post(f"{base}/api-keys", data={"csrf": csrf, "name": "k" * 20_000})
        long_name = await client.post(f"{base}/api-keys", data={"csrf": csrf, "name": "k" * 201})
        many = await client.post(
            f"{base}/api-keys", data={"csrf": csrf, **{f"f{n}": "1" for n in range(60)}}
        )
        long_to = await client.get(f"{base}/messages", params={"to": "a" * 5000 + "@x.example"})
        long_next = await client.get("/sign-in", params={"next": "/" + "a" * 600})
        long_email = await client.post(
            "/sign-in", data={"email": "a" * 300 + "@example.com", "password": PASSWORD}
        )
    assert huge.status_code == 413
    assert long_name.status_code == 422 and "at most 200 characters" in long_name.text.lower()
    assert many.status_code == 422
    assert long_to.status_code == 422
    assert long_next.status_code == 422
    assert long_email.status_code == 422
    assert len(await services.keys.live(tenant.tenant_id)) == 1


async def test_the_audit_pages_filters_are_bounded_and_checked_against_the_vocabulary(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "root@example.com", operator=True)
    page = f"/t/{tenant.tenant_id}/audit"
    async with browser(services) as client, browser(services) as operator:
        await sign_in(client, "ada@example.com")
        await sign_in(operator, "root@example.com")
        long_action = await client.get(page, params={"action": "a" * 41})
        unknown = await client.get(page, params={"action": MARKUP[:40]})
        long_cursor = await client.get(page, params={"cursor": "c" * 37})
        long_tenant = await operator.get("/operator/audit", params={"tenant_id": "t" * 37})
        other = await operator.get("/operator/audit", params={"action": "api_key.issued' OR 1=1"})
    assert long_action.status_code == 422
    assert unknown.status_code == 422 and "Choose an action from the list" in unknown.text
    assert "<script>" not in unknown.text and "&lt;script&gt;" in unknown.text
    assert long_cursor.status_code == 422
    assert long_tenant.status_code == 422
    assert other.status_code == 422


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example",
        "/%0d%0aSet-Cookie:x=1",
        "javascript:alert(1)",
        "/ok\nLocation: //evil.example",
    ],
)
async def test_next_never_leaves_the_site(services: Services, target: str) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        form = await client.get("/sign-in", params={"next": target})
        assert 'name="next" value="/"' in form.text
        answer = await client.post(
            "/sign-in", data={"email": "ada@example.com", "password": PASSWORD, "next": target}
        )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/"


async def test_the_session_token_is_never_logged_nor_shown(services: Services) -> None:
    await add_user(services, "ada@example.com", operator=True)
    with captured_logs() as logs:
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://homing.test") as client:
            await sign_in(client, "ada@example.com")
            token = client.cookies.get("homing_session")
            assert token and len(token) >= 40
            pages = [await client.get(p) for p in ("/operator/tenants", "/operator/queues")]
            await client.post("/sign-in", data={"email": "ada@example.com", "password": "nope"})
    assert token not in logs.getvalue()
    assert PASSWORD not in logs.getvalue()
    for page in pages:
        assert token not in page.text
    session = await services.people.session(token)
    assert session is not None and token not in repr(session)
