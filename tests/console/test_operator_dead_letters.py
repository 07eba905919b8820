"""The operator's dead letters across tenants: counted by reason, provider and tenant,
listed with filters, a dry-run count, a redrive of the filtered set only, recorded by
the operator; a tenant's member never sees the page."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import httpx

from homing.domain.audit import AuditFilter
from homing.models import ActorKind, AuditAction, Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import add_user, browser, sign_in
from tests.dead_letter_helpers import dead_letter

PAGE = "/operator/dead-letters"


async def _two_tenants(
    services: Services, api: httpx.AsyncClient
) -> tuple[TenantClient, TenantClient, dict[str, str]]:
    """Acme and Globex with five dead letters between them; the letters' job ids by name."""
    acme = await make_tenant(services, api, "Acme")
    globex = await make_tenant(services, api, "Globex")
    made = {
        "acme-1": (acme, "provider_error", "resend", "resend answered 503"),
        "acme-2": (acme, "provider_error", "resend", "resend answered 502"),
        "acme-3": (acme, "throttled", "postmark", "postmark answered 429"),
        "globex-1": (globex, "provider_error", "resend", "resend answered 500"),
        "globex-2": (globex, "invalid_address", "sendgrid", "sendgrid refused the address"),
    }
    jobs = {}
    for name, (tenant, error_class, provider, error) in made.items():
        letter_id = await dead_letter(
            services, tenant, error=error, error_class=error_class, provider=provider
        )
        jobs[name] = (await services.dead_letter_store.get(None, letter_id)).job_id
    return acme, globex, jobs


def _cell_counts(html: str, key: str) -> tuple[int, int]:
    """(dead letters, not redriven) of the group row named ``key``."""
    found = re.search(rf">{re.escape(key)}</a></td><td>(\d+)</td><td>(\d+)</td>", html)
    assert found, key
    return int(found.group(1)), int(found.group(2))


async def test_dead_letters_of_two_tenants_are_counted_and_listed_with_filters(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme, globex, _ = await _two_tenants(services, api)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "root@example.com")
        every = await client.get(PAGE)
        by_reason = await client.get(PAGE, params={"error_class": "provider_error"})
        narrow = await client.get(
            PAGE, params={"error_class": "provider_error", "tenant_id": globex.tenant_id}
        )
        texts = await client.get(PAGE, params={"q": "answered 50"})
        later = await client.get(PAGE, params={"since": "2999-01-01"})
    assert every.status_code == 200
    assert every.text.count('class="dead-letter"') == 5
    assert _cell_counts(every.text, "provider_error") == (3, 3)
    assert _cell_counts(every.text, "throttled") == (1, 1)
    assert _cell_counts(every.text, "resend") == (3, 3)
    assert _cell_counts(every.text, "Acme") == (3, 3)
    assert _cell_counts(every.text, "Globex") == (2, 2)
    assert by_reason.text.count('class="dead-letter"') == 3
    assert "postmark answered 429" not in by_reason.text
    assert narrow.text.count('class="dead-letter"') == 1 and "resend answered 500" in narrow.text
    assert acme.tenant_id not in narrow.text.split("The dead letters")[-1]
    assert texts.text.count('class="dead-letter"') == 3
    assert later.status_code == 200 and "No dead letters match this filter" in later.text


async def test_a_dry_run_counts_and_the_redrive_requeues_the_filtered_set_only(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme, globex, jobs = await _two_tenants(services, api)
    root = await add_user(services, "root@example.com", operator=True)
    wanted = {"error_class": "provider_error", "provider": "resend"}
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        dry = await client.post(f"{PAGE}/redrive", data={"csrf": csrf, "dry_run": "1", **wanted})
        # Back to the same filter; the count is a flash, said once, not in the address.
        assert dry.status_code == 303 and dry.headers["location"] == f"{PAGE}?{urlencode(wanted)}"
        shown = await client.get(dry.headers["location"])
        assert "3 dead letters would be redriven" in shown.text
        assert "would be redriven" not in (await client.get(dry.headers["location"])).text
        for name in jobs:
            tenant = acme if name.startswith("acme") else globex
            job, _ = await services.jobs.get(tenant.tenant_id, jobs[name])
            assert job.status.value == "FAILED", name
        done = await client.post(f"{PAGE}/redrive", data={"csrf": csrf, **wanted})
        answer = await client.get(done.headers["location"])
        again = await client.post(
            f"{PAGE}/redrive", data={"csrf": csrf, **wanted}, follow_redirects=True
        )
    assert "3 redriven." in answer.text
    assert "0 redriven." in again.text
    statuses = {}
    for name, job_id in jobs.items():
        tenant = acme if name.startswith("acme") else globex
        statuses[name] = (await services.jobs.get(tenant.tenant_id, job_id))[0].status.value
    assert statuses == {
        "acme-1": "PENDING",
        "acme-2": "PENDING",
        "acme-3": "FAILED",
        "globex-1": "PENDING",
        "globex-2": "FAILED",
    }
    f = AuditFilter(action=AuditAction.DEAD_LETTERS_REDRIVEN)
    [event], _ = await services.audit.page(f, limit=10, cursor=None)
    assert event.actor.kind is ActorKind.USER and event.actor.id == root.id
    assert event.tenant_id is None
    assert event.changes == {"filter": wanted, "ids": None, "redriven": 3}


async def test_an_unfiltered_redrive_needs_every_dead_letter_ticked(
    services: Services, api: httpx.AsyncClient
) -> None:
    await _two_tenants(services, api)
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        page = await client.get(PAGE)
        refused = await client.post(f"{PAGE}/redrive", data={"csrf": csrf})
        counted = await client.post(
            f"{PAGE}/redrive", data={"csrf": csrf, "all": "1", "dry_run": "1"}
        )
        told = await client.get(counted.headers["location"])
    assert 'name="all"' in page.text
    assert refused.status_code == 422 and "every dead letter" in refused.text
    assert counted.headers["location"] == PAGE
    assert "5 dead letters would be redriven" in told.text


async def test_a_tenants_member_gets_404_on_the_operators_dead_letters(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme, _, jobs = await _two_tenants(services, api)
    await add_user(services, "ada@example.com", acme.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        listed = await client.get(PAGE)
        redrive = await client.post(
            f"{PAGE}/redrive", data={"csrf": csrf, "tenant_id": acme.tenant_id}
        )
        home = await client.get("/")
    assert listed.status_code == 404 and redrive.status_code == 404
    assert PAGE not in home.text
    job, _ = await services.jobs.get(acme.tenant_id, jobs["acme-1"])
    assert job.status.value == "FAILED"


async def test_a_dry_run_warns_that_an_uncertain_dead_letter_may_be_sent_twice(
    services: Services, api: httpx.AsyncClient
) -> None:
    acme = await make_tenant(services, api, "Acme")
    for error_class in ("uncertain", "provider_error"):
        await dead_letter(services, acme, error="e", error_class=error_class, provider="sendgrid")
    await add_user(services, "root@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "root@example.com")
        page = await client.get(PAGE)
        dry = await client.post(
            f"{PAGE}/redrive",
            data={"csrf": csrf, "dry_run": "1", "tenant_id": acme.tenant_id},
            follow_redirects=True,
        )
    assert "may already have reached its provider" in page.text
    said = "2 dead letters would be redriven. 1 of them is uncertain: the message may"
    assert said in dry.text
    assert "so a redrive may deliver a second copy. Nothing was changed." in dry.text
