"""A suspended tenant changes nothing, through any door (issue #22, item 3).

The API answered 403 to a suspended tenant, but the console let its owner mint keys,
invite, change suppressions, providers and pacing, rotate the webhook secret, add and
check domains, retry and redrive jobs (quota charged). Over a real ``homing run``: the
owner, signed in, tries every changing route of the tenant's console (walked from the
audit scope, which holds every route of the app, so a route added later fails here
until it is listed) and every
changing ``/v1`` route with the tenant's key; each is refused with ``tenant_suspended``
(an HTML page, a 403 JSON body), no row of the tenant's changes (no quota, no audit
event), and the pages still read. Once resumed, the same forms change things again, so
the refusals were the suspension's, not the forms'.
"""

from __future__ import annotations

from pathlib import Path

from homing.api.audit_scope import AUDITED, EXEMPT
from homing.models import JobStatus
from tests.adversary.suspension_helpers import (
    ADMIN,
    World,
    console_sign_in,
    homing_run,
    nowhere,
    suspend,
    tenant_rows,
    world,
)
from tests.processes import eventually

REFUSED = 'data-code="tenant_suspended"'


def console_changes(w: World) -> dict[str, tuple[str, dict[str, str]]]:
    """Each changing console route of a tenant: the URL and a form that would change
    something of ``w``'s."""
    t = f"/t/{w.tenant_id}"
    first, second = w.providers
    rule = {"scope-0": "account", "limit-0": "9", "per_seconds-0": "1"}
    vendor = {"vendor": "sendgrid", "api_key": "SG." + "k" * 30, "base_url": nowhere()}
    return {
        "/t/{tenant_id}/api-keys": (f"{t}/api-keys", {"name": "minted"}),
        "/t/{tenant_id}/api-keys/{key_id}/revoke": (f"{t}/api-keys/{w.key_id}/revoke", {}),
        "/t/{tenant_id}/users/invite": (
            f"{t}/users/invite",
            {"email": "more@suspect.test", "role": "viewer"},
        ),
        "/t/{tenant_id}/invitations/{invitation_id}/revoke": (
            f"{t}/invitations/{w.invitation_id}/revoke",
            {},
        ),
        "/t/{tenant_id}/users/{user_id}/role": (f"{t}/users/{w.viewer_id}/role", {"role": "owner"}),
        "/t/{tenant_id}/users/{user_id}/remove": (f"{t}/users/{w.viewer_id}/remove", {}),
        "/t/{tenant_id}/suppressions": (
            f"{t}/suppressions",
            {"channel": "email", "address": "fresh@example.com"},
        ),
        "/t/{tenant_id}/suppressions/remove": (
            f"{t}/suppressions/remove",
            {"channel": "email", "address": "gone@example.com"},
        ),
        "/t/{tenant_id}/providers/new": (f"{t}/providers/new", vendor),
        "/t/{tenant_id}/providers/{provider_id}/move": (
            f"{t}/providers/{second}/move",
            {"direction": "up"},
        ),
        "/t/{tenant_id}/providers/{provider_id}/enabled": (
            f"{t}/providers/{first}/enabled",
            {"enabled": "0"},
        ),
        "/t/{tenant_id}/providers/{provider_id}/pacing": (f"{t}/providers/{second}/pacing", rule),
        "/t/{tenant_id}/providers/{provider_id}/pacing/reset": (
            f"{t}/providers/{first}/pacing/reset",
            {},
        ),
        "/t/{tenant_id}/webhooks/secret/rotate": (f"{t}/webhooks/secret/rotate", {}),
        "/t/{tenant_id}/webhooks/secret/delete": (f"{t}/webhooks/secret/delete", {}),
        "/t/{tenant_id}/webhooks/secret": (f"{t}/webhooks/secret", {}),
        "/t/{tenant_id}/domains": (
            f"{t}/domains",
            {"domain": "more.suspect.test", "provider_account_id": first},
        ),
        "/t/{tenant_id}/domains/{domain_id}/verify": (f"{t}/domains/{w.domain_id}/verify", {}),
        "/t/{tenant_id}/messages/{job_id}/retry": (f"{t}/messages/{w.job_id}/retry", {}),
        "/t/{tenant_id}/dead-letters/redrive": (f"{t}/dead-letters/redrive", {}),
        "/t/{tenant_id}/dead-letters/purge": (f"{t}/dead-letters/purge", {}),
        "/t/{tenant_id}/domains/{domain_id}/remove": (f"{t}/domains/{w.domain_id}/remove", {}),
        "/t/{tenant_id}/providers/{provider_id}/inbound": (
            f"{t}/providers/{first}/inbound",
            {"verification_key": "a-key"},
        ),
        "/t/{tenant_id}/providers/{provider_id}/inbound/remove": (
            f"{t}/providers/{first}/inbound/remove",
            {},
        ),
        "/t/{tenant_id}/webhooks/endpoints/enable": (
            f"{t}/webhooks/endpoints/enable",
            {"url": "https://hooks.suspect.test/in"},
        ),
        "/t/{tenant_id}/providers/{provider_id}/remove": (f"{t}/providers/{second}/remove", {}),
        "/t/{tenant_id}/send-test": (
            f"{t}/send-test",
            {
                "channel": "email",
                "to": "ada@example.com",
                "from": "ops@suspect.test",
                "subject": "A test",
                "text": "Hello",
            },
        ),
        "/t/{tenant_id}/templates": (f"{t}/templates", {"key": "fresh", "name": "Fresh"}),
        "/t/{tenant_id}/templates/{ref}/versions": (f"{t}/templates/welcome/versions", {}),
        "/t/{tenant_id}/templates/{ref}/versions/{number}": (
            f"{t}/templates/welcome/versions/1",
            {"action": "save", "sms_body": "changed"},
        ),
        "/t/{tenant_id}/layouts": (f"{t}/layouts", {"key": "fresh", "name": "Fresh"}),
        "/t/{tenant_id}/layouts/{ref}/versions": (f"{t}/layouts/brand/versions", {}),
        "/t/{tenant_id}/layouts/{ref}/versions/{number}": (
            f"{t}/layouts/brand/versions/1",
            {"action": "save", "html": "<p>{{ content }}</p>"},
        ),
    }


def changing_routes(prefix: str) -> set[tuple[str, str]]:
    """(method, path template) of every changing route under ``prefix``: from the
    audit scope, which ``tests/api/test_audit_log.py`` holds equal to the app's."""
    return {(m, path) for m, path in (*AUDITED, *EXEMPT) if path.startswith(prefix)}


PAGES = (
    "",
    "api-keys",
    "users",
    "suppressions",
    "providers",
    "domains",
    "webhooks",
    "messages",
    "dead-letters",
    "audit",
    "templates",
    "layouts",
    "layouts/brand",
    "layouts/brand/versions/1",
)


async def test_a_suspended_tenants_owner_changes_nothing_in_the_console(tmp_path: Path) -> None:
    async with homing_run(tmp_path) as (client, services):
        w = await world(client, services)
        changes = console_changes(w)
        walked = changing_routes("/t/{tenant_id}/")
        assert walked == {("POST", path) for path in changes}, "list every changing route"
        await suspend(client, w.tenant_id)
        csrf = await console_sign_in(client, w.owner)
        before = await tenant_rows(services, w.tenant_id)

        for template, (url, form) in changes.items():
            answer = await client.post(url, data={"csrf": csrf, **form})
            assert answer.status_code == 403, (template, answer.status_code, answer.text[:300])
            assert REFUSED in answer.text, (template, answer.text[:300])
            assert "suspended" in answer.text
        for page in PAGES:
            shown = await client.get(f"/t/{w.tenant_id}/{page}")
            assert shown.status_code == 200, (page, shown.text[:300])
        assert await tenant_rows(services, w.tenant_id) == before, "a refused change changed"

        await suspend(client, w.tenant_id, suspended=False)
        minted = await client.post(f"/t/{w.tenant_id}/api-keys", data={"csrf": csrf, "name": "m"})
        assert minted.status_code == 303, minted.text[:300]
        retried = await client.post(
            f"/t/{w.tenant_id}/messages/{w.job_id}/retry", data={"csrf": csrf}
        )
        assert retried.status_code == 303, retried.text[:300]
        job, _ = await services.jobs.get(w.tenant_id, w.job_id)
        assert job.status is not JobStatus.FAILED, "resumed, the tenant retries again"


async def test_a_suspended_tenants_key_changes_nothing_through_the_api(tmp_path: Path) -> None:
    async with homing_run(tmp_path) as (client, services):
        w = await world(client, services)
        await suspend(client, w.tenant_id)
        before = await tenant_rows(services, w.tenant_id)
        ids = {
            "{provider_id}": w.providers[0],
            "{key_id}": w.key_id,
            "{domain_id}": w.domain_id,
            "{job_id}": w.job_id,
        }
        routes = changing_routes("/v1/")
        assert ("POST", "/v1/jobs/{job_id}/retry") in routes
        for method, template in sorted(routes):
            url = template
            for name, value in ids.items():
                url = url.replace(name, value)
            answer = await client.request(method, url, json={}, headers=w.auth)
            assert answer.status_code == 403, (method, template, answer.text)
            assert answer.json()["error"]["code"] == "tenant_suspended", (template, answer.text)
        assert await tenant_rows(services, w.tenant_id) == before, "a refused change changed"


async def test_the_operator_still_acts_on_a_suspended_tenant(tmp_path: Path) -> None:
    """Suspension binds the tenant, not the operator: the admin API redrives its dead
    letters (held with its jobs until it resumes) and can resume it."""
    async with homing_run(tmp_path) as (client, services):
        w = await world(client, services)
        await suspend(client, w.tenant_id)
        redriven = await client.post(
            "/admin/v1/dead-letters/redrive",
            json={"filter": {"tenant_id": w.tenant_id}},
            headers=ADMIN,
        )
        assert redriven.status_code == 200, redriven.text
        assert redriven.json()["redriven"] == 1

        async def held() -> bool:
            job, _ = await services.jobs.get(w.tenant_id, w.job_id)
            assert job.status in (JobStatus.PENDING, JobStatus.PROCESSING), job.status
            return job.status is JobStatus.PENDING and job.error_class == "tenant_suspended"

        # A worker claims it, sees the suspension and puts it back: held, not sent.
        await eventually(held, what="the redriven job to be held")
        await suspend(client, w.tenant_id, suspended=False)
        answer = await client.get(f"/v1/jobs/{w.job_id}", headers=w.auth)
        assert answer.status_code == 200, answer.text
