"""Links that leave Homing, attacked over HTTP against a real ``homing run`` (issue #22,
items 5, 6 and 8).

- An anonymous caller forging ``Host``: refused before anything else (an HTML page for
  the console, the JSON envelope for the API), and no link Homing mails is ever built
  from it: without HOMING_PUBLIC_URL nothing is mailed, the link is shown to the owner.
- An owner claiming an identity: a link shown to her cannot make an account for
  ``victim@corp.example``; only a link mailed to that address can.
- A tenant naming a dotted-numeric host (``127.0.0.1.``) for a webhook or its
  operations URL: judged as the address it spells; an invitation's email goes through
  the one mailbox parser.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import select

from homing.crypto import csrf_token, generate_master_key
from homing.domain.audit import AuditFilter
from homing.models import AuditAction, Plan, Role
from homing.services import Services, build
from homing.store.tables.core import jobs
from tests.console_helpers import PASSWORD, add_user, csrf_of
from tests.fixtures import settings_for, sqlite_url
from tests.processes import HomingProcess, eventually, free_port, healthy

LINK = re.compile(r"(https?://[^/\"<\s]+)/invitations/([A-Za-z0-9_-]{43})")
OWNER = "owner@acme.example"
VICTIM = "victim@corp.example"
NEW_PASSWORD = "a brand new long password"
PUBLIC_URL = "https://homing.example"


@dataclass
class Site:
    """A database holding a tenant (its owner signs in with ``PASSWORD``) and a
    platform tenant for Homing's own mail, with Services on it for the checks."""

    tmp_path: Path
    services: Services
    secret_key: str
    tenant_id: str
    api_key: str
    platform_id: str

    def mailing(self) -> dict[str, str]:
        """The environment that turns platform email on."""
        return {
            "HOMING_PLATFORM_TENANT_ID": self.platform_id,
            "HOMING_PLATFORM_EMAIL_FROM": "Homing <ops@homing.example>",
        }

    @asynccontextmanager
    async def run(self, **env: str) -> AsyncIterator[httpx.AsyncClient]:
        """``homing run`` on the site's database with ``env``, and a client of its own
        (cookies included) on its loopback address; killed after."""
        port = free_port()
        process_env = {
            "HOMING_DATABASE_URL": self.services.settings.resolved_database_url,
            "HOMING_DATA_DIR": str(self.tmp_path / "data"),
            "HOMING_SECRET_KEY": self.secret_key,
            **env,
        }
        log = self.tmp_path / f"run-{port}.log"
        server = HomingProcess(["run", "--port", str(port)], process_env, log).start()
        try:
            url = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                await eventually(lambda: healthy(client), what="homing run to listen")
                yield client
        finally:
            server.kill()


@asynccontextmanager
async def _site(tmp_path: Path) -> AsyncIterator[Site]:
    secret_key = generate_master_key()
    settings = settings_for(sqlite_url(tmp_path / "data"), tmp_path, secret_key)
    services = await build(settings)
    try:
        tenant, key = await services.tenants.create("acme", Plan.STARTUP)
        platform, _ = await services.tenants.create("homing-platform", Plan.STARTUP)
        await add_user(services, OWNER, tenant.id, Role.OWNER)
        yield Site(tmp_path, services, secret_key, tenant.id, key, platform.id)
    finally:
        await services.aclose()


async def _signed_in(client: httpx.AsyncClient) -> str:
    """Sign the owner in; the CSRF token of the session."""
    answer = await client.post("/sign-in", data={"email": OWNER, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return csrf_of((await client.get("/", follow_redirects=True)).text)


async def _invite(
    client: httpx.AsyncClient, site: Site, csrf: str, email: str = VICTIM, **headers: str
) -> httpx.Response:
    return await client.post(
        f"/t/{site.tenant_id}/users/invite",
        data={"csrf": csrf, "email": email, "role": "owner"},
        headers=headers,
    )


async def _shown_link(client: httpx.AsyncClient, site: Site, csrf: str) -> str:
    """Invite the victim; the path of the link the owner is shown."""
    answer = await _invite(client, site, csrf)
    assert answer.status_code == 303, answer.text
    found = LINK.search((await client.get(answer.headers["location"])).text)
    assert found, "no invitation link shown"
    return f"/invitations/{found.group(2)}"


async def _mail_texts(site: Site) -> list[str]:
    """The text of every mail queued for the platform tenant."""
    query = select(jobs.c.id).where(jobs.c.tenant_id == site.platform_id)
    async with site.services.db.transaction() as conn:
        ids = [row.id for row in (await conn.execute(query)).all()]
    found = [await site.services.jobs.get(site.platform_id, job_id) for job_id in ids]
    return [str(job.payload.get("text", "")) for job, _ in found]


async def _accept_new(client: httpx.AsyncClient, link: str) -> httpx.Response:
    page = await client.get(link)
    assert page.status_code == 200, page.text
    form = {"password": NEW_PASSWORD, "confirm": NEW_PASSWORD}
    return await client.post(link, data={"csrf": csrf_of(page.text), **form})


# Item 5: the anonymous caller with a forged Host -----------------------------------------


async def test_a_forged_host_is_refused_before_anything_else(tmp_path: Path) -> None:
    async with _site(tmp_path) as site, site.run() as client:
        evil = {"Host": "evil.example"}
        page = await client.get("/sign-in", headers=evil)
        api = await client.post(
            "/v1/email",
            headers={**evil, "Authorization": f"Bearer {site.api_key}"},
            json={"to": "a@example.com", "from": "b@example.com", "subject": "s", "text": "t"},
        )
        probe = await client.get("/healthz", headers=evil)
        loopback = [
            await client.get("/sign-in", headers={"Host": host})
            for host in ("localhost:8080", "127.0.0.1", "[::1]:1", "app.localhost")
        ]
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert "evil.example" not in page.text and "HOMING_ALLOWED_HOSTS" in page.text
    assert api.status_code == 400 and api.json()["error"]["code"] == "host_not_allowed"
    assert probe.status_code == 200
    assert [answer.status_code for answer in loopback] == [200] * 4


async def test_the_allowed_hosts_and_the_public_urls_host_are_served(tmp_path: Path) -> None:
    env = {"HOMING_ALLOWED_HOSTS": "homing.lan, 10.1.2.3", "HOMING_PUBLIC_URL": PUBLIC_URL}
    async with _site(tmp_path) as site, site.run(**env) as client:
        codes = {
            host: (await client.get("/sign-in", headers={"Host": host})).status_code
            for host in ("homing.lan:8080", "HOMING.LAN", "10.1.2.3", "homing.example")
        }
        other = await client.get("/sign-in", headers={"Host": "homing.lan.evil.example"})
    assert codes == dict.fromkeys(codes, 200)
    assert other.status_code == 400


async def test_no_mailed_link_is_built_from_the_request_host(tmp_path: Path) -> None:
    # Platform email on, HOMING_PUBLIC_URL unset: an invitation is shown, never mailed.
    async with _site(tmp_path) as site, site.run(**site.mailing()) as client:
        csrf = await _signed_in(client)
        forged = await _invite(client, site, csrf, Host="evil.example")
        link = await _shown_link(client, site, csrf)
        texts = await _mail_texts(site)
    assert forged.status_code == 400
    assert link.startswith("/invitations/")
    assert not any("evil.example" in text or "/invitations/" in text for text in texts)


async def test_with_a_public_url_the_mailed_link_is_built_on_it(tmp_path: Path) -> None:
    async with _site(tmp_path) as site:
        env = {**site.mailing(), "HOMING_PUBLIC_URL": PUBLIC_URL}
        async with site.run(**env) as client:
            csrf = await _signed_in(client)
            answer = await _invite(client, site, csrf, Host=f"localhost:{client.base_url.port}")
            told = await client.get(answer.headers["location"])
            texts = await _mail_texts(site)
    assert "Invitation sent by email" in told.text and LINK.search(told.text) is None
    [text] = texts
    found = LINK.search(text)
    assert found and found.group(1) == PUBLIC_URL


# Item 6: the owner claiming an identity -------------------------------------------------


async def test_an_owner_cannot_claim_an_identity_with_the_link_shown_to_her(
    tmp_path: Path,
) -> None:
    async with _site(tmp_path) as site, site.run() as client:
        csrf = await _signed_in(client)
        link = await _shown_link(client, site, csrf)
        async with httpx.AsyncClient(base_url=client.base_url) as herself:
            page = await herself.get(link)
            form = {"password": NEW_PASSWORD, "confirm": NEW_PASSWORD}
            # The form's token is an HMAC keyed by the link's: she can make it herself.
            form_token = csrf_token(link.rpartition("/")[2])
            claimed = await herself.post(link, data={"csrf": form_token, **form})
            signed_in = await herself.post(
                "/sign-in", data={"email": VICTIM, "password": NEW_PASSWORD}
            )
        victim = await site.services.people.user(VICTIM)
    assert page.status_code == 200 and "New password" not in page.text
    assert "homing user add" in page.text
    assert claimed.status_code == 403 and "set-cookie" not in claimed.headers
    assert signed_in.status_code == 401
    assert victim is None


async def test_a_shown_link_makes_an_account_once_it_went_by_mail(tmp_path: Path) -> None:
    async with _site(tmp_path) as site:
        async with site.run() as client:
            link = await _shown_link(client, site, await _signed_in(client))
        env = {**site.mailing(), "HOMING_PUBLIC_URL": PUBLIC_URL}
        async with site.run(**env) as client:
            page = await client.get(link)
            assert "Email me the link" in page.text and "New password" not in page.text
            sent = await client.post(f"{link}/mail", data={"csrf": csrf_of(page.text)})
            old = await client.get(link)
            [text] = await _mail_texts(site)
            found = LINK.search(text)
            assert found and found.group(1) == PUBLIC_URL
            accepted = await _accept_new(client, f"/invitations/{found.group(2)}")
        victim = await site.services.people.user(VICTIM)
        assert victim is not None
        seat = await site.services.people.membership(victim, site.tenant_id)
        audit = AuditFilter(tenant_id=site.tenant_id)
        events, _ = await site.services.audit.page(audit, limit=10, cursor=None)
    assert sent.status_code == 200 and VICTIM in sent.text
    assert old.status_code == 404
    assert accepted.status_code == 303
    assert seat is not None and seat.role is Role.OWNER
    actions = [event.action for event in events]
    assert actions == [
        AuditAction.INVITATION_ACCEPTED,
        AuditAction.INVITATION_MAILED,
        AuditAction.USER_INVITED,
        AuditAction.USER_ADDED,  # the owner, by the operator's command
    ]
    assert all(found.group(2) not in repr(event) for event in events)


# Item 8: dotted-numeric hosts and invitation emails -------------------------------------


async def test_a_dotted_numeric_host_is_the_literal_it_spells(tmp_path: Path) -> None:
    urls = {
        "https://127.0.0.1./hook": "loopback",
        "https://0x7f.1./hook": "loopback",
        "https://10.0.0.1./hook": "private",
        "https://169.254.169.254./latest": "cloud_metadata",
        "https://1.2.3.4.5/hook": "host",
        "https://example.999/hook": "host",
    }
    async with _site(tmp_path) as site, site.run() as client:
        auth = {"Authorization": f"Bearer {site.api_key}"}
        webhooks = {
            url: await client.post(
                "/v1/notifications/webhook", headers=auth, json={"url": url, "payload": {}}
            )
            for url in urls
        }
        operations = await client.patch(
            "/v1/settings", headers=auth, json={"operations_url": "https://127.0.0.1./ops"}
        )
        csrf = await _signed_in(client)
        invited = await _invite(client, site, csrf, email="victim@[127.0.0.1]")
        pending = await site.services.invitations.pending(site.tenant_id)
    for url, reason in urls.items():
        answer = webhooks[url]
        assert answer.status_code == 422, (url, answer.text)
        assert answer.json()["error"]["details"]["reason"] == reason, url
    assert operations.status_code == 422
    assert operations.json()["error"]["details"]["reason"] == "loopback"
    assert invited.status_code == 422 and pending == []
