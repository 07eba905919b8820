"""Invitations and the tenant's users: an owner invites, the invitee accepts by the
link (a new user choosing a password, or an existing one signing in), tokens that no
longer work, the last owner kept, a removed member locked out at once, and the link
sent by platform email when the operator configured it and a public URL; a link shown
to the owner makes no new account (tests/adversary/test_links.py)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from homing.clock import ManualClock, as_datetime
from homing.console.user_pages import PAGE
from homing.domain.audit import AuditEvent, AuditFilter
from homing.managers.audit import CLI_ACTOR
from homing.managers.invitations import INVALID
from homing.models import AuditAction, Role
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.people import PeopleStore
from tests.conftest import TenantClient, deliver, make_tenant
from tests.console_helpers import PASSWORD, add_user, browser, csrf_of, sign_in
from tests.e2e.conftest import register
from tests.fixtures import Sandbox, settings_for

LINK = re.compile(r"(?:https?://[^/\"<\s]+)?/invitations/([A-Za-z0-9_-]{43})")
NEW_PASSWORD = "a brand new long password"
PLATFORM_FROM = "Homing <ops@homing.example>"
PUBLIC_URL = "https://homing.example"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    # Platform email is on once a test names the platform tenant (``platform_tenant``).
    return settings_for(database_url, tmp_path, secret_key, platform_email_from=PLATFORM_FROM)


async def _invite(
    client: httpx.AsyncClient, csrf: str, tenant_id: str, email: str, role: str = "viewer"
) -> httpx.Response:
    return await client.post(
        f"/t/{tenant_id}/users/invite", data={"csrf": csrf, "email": email, "role": role}
    )


async def _invited_link(
    client: httpx.AsyncClient, csrf: str, tenant_id: str, email: str, role: str = "viewer"
) -> str:
    """The path of the link the page after the answer shows, once (asserted)."""
    answer = await _invite(client, csrf, tenant_id, email, role)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/t/{tenant_id}/users"
    shown = await client.get(answer.headers["location"])
    assert shown.headers["cache-control"] == "no-store"
    found = LINK.search(shown.text)
    assert found, "no invitation link on the page"
    again = await client.get(answer.headers["location"])
    assert LINK.search(again.text) is None, "the link is shown once"
    return f"/invitations/{found.group(1)}"


async def _accept_new(client: httpx.AsyncClient, link: str) -> httpx.Response:
    page = await client.get(link)
    assert page.status_code == 200, page.text
    data = {"csrf": csrf_of(page.text), "password": NEW_PASSWORD, "confirm": NEW_PASSWORD}
    return await client.post(link, data=data)


async def _mailing(services: Services, api: httpx.AsyncClient, sandbox: SandboxServer) -> None:
    """Platform email on, over the sandbox's SendGrid, and a public URL: links go by mail."""
    platform = await make_tenant(services, api, "homing-platform")
    await register(platform, sandbox, "sendgrid", 1)
    services.settings = services.settings.changed(
        platform_tenant_id=platform.tenant_id, public_url=PUBLIC_URL
    )


async def _mailed_link(services: Services, sb: Sandbox, to: str) -> str:
    """The path of the invitation link the sandbox's last mail to ``to`` carries."""
    assert await deliver(services) == 1
    mail = (await sb.messages("sendgrid"))[-1]
    assert mail["to"] == [to]
    found = LINK.search(mail["text"])
    assert found and found.group(0).startswith(f"{PUBLIC_URL}/invitations/")
    return f"/invitations/{found.group(1)}"


async def _fetch(services: Services, path: str) -> httpx.Response:
    """``path`` fetched by a browser of its own (no session)."""
    async with browser(services) as client:
        return await client.get(path)


async def _events(services: Services, tenant_id: str) -> list[AuditEvent]:
    """The tenant's events but the ``user.added`` of the users the test starts with."""
    events, _ = await services.audit.page(AuditFilter(tenant_id=tenant_id), limit=50, cursor=None)
    return [event for event in events if event.action is not AuditAction.USER_ADDED]


async def test_a_shown_link_is_shown_once_and_says_it_makes_no_account(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client, browser(services) as invitee:
        csrf = await sign_in(client, "owner@acme.example")
        link = await _invited_link(client, csrf, tenant.tenant_id, " Grace@Example.com ")
        listed = await client.get(f"/t/{tenant.tenant_id}/users")
        assert "grace@example.com" in listed.text and "Pending invitations" in listed.text
        assert link.rpartition("/")[2] not in listed.text  # shown once, on the answer only
        page = await invitee.get(link)
    assert page.status_code == 200 and "Join acme" in page.text
    assert "homing user add" in page.text and "New password" not in page.text


async def test_an_invitee_chooses_a_password_and_is_a_signed_in_viewer(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
) -> None:
    owner = await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await _mailing(services, api, sandbox)
    async with browser(services) as client, browser(services) as invitee:
        csrf = await sign_in(client, "owner@acme.example")
        answer = await _invite(client, csrf, tenant.tenant_id, " Grace@Example.com ")
        assert answer.status_code == 303
        link = await _mailed_link(services, sb, "grace@example.com")
        page = await invitee.get(link)
        assert "Join acme" in page.text and "viewer" in page.text
        assert "grace@example.com" in page.text and "New password again" in page.text
        accepted = await _accept_new(invitee, link)
        assert accepted.status_code == 303
        assert accepted.headers["location"] == f"/t/{tenant.tenant_id}/"
        assert "httponly" in accepted.headers["set-cookie"].lower()
        overview = await invitee.get(f"/t/{tenant.tenant_id}/")
        assert overview.status_code == 200 and "(viewer)" in overview.text
        refused = await invitee.post(
            f"/t/{tenant.tenant_id}/api-keys", data={"csrf": csrf_of(overview.text), "name": "x"}
        )
        assert refused.status_code == 403
        assert (await invitee.get(f"/t/{tenant.tenant_id}/users")).status_code == 403
        again = await _fetch(services, link)
    assert again.status_code == 404 and INVALID in again.text
    grace = await services.people.user("grace@example.com")
    assert grace is not None
    accepted_event, invited_event = await _events(services, tenant.tenant_id)
    assert invited_event.action is AuditAction.USER_INVITED
    assert invited_event.actor.id == owner.id
    assert invited_event.changes == {"email": "grace@example.com", "role": "viewer"}
    assert accepted_event.action is AuditAction.INVITATION_ACCEPTED
    assert accepted_event.actor.id == grace.id
    assert accepted_event.target_id == invited_event.target_id
    assert len(await services.keys.live(tenant.tenant_id)) == 1


async def test_an_existing_user_signs_in_as_the_invited_email_to_accept(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "globex")
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    await add_user(services, "alan@example.com", other.tenant_id, Role.VIEWER)
    async with browser(services) as client, browser(services) as invitee:
        csrf = await sign_in(client, "owner@acme.example")
        link = await _invited_link(client, csrf, tenant.tenant_id, "alan@example.com", "owner")
        page = await invitee.get(link)
        assert "Sign in and accept" in page.text and "New password" not in page.text
        token = csrf_of(page.text)
        wrong = await invitee.post(link, data={"csrf": token, "password": "not the password"})
        assert wrong.status_code == 401 and "do not match" in wrong.text
        right = await invitee.post(link, data={"csrf": token, "password": PASSWORD})
        assert right.status_code == 303
        home = await invitee.get("/")
    assert "acme" in home.text and "globex" in home.text
    alan = await services.people.user("alan@example.com")
    assert alan is not None
    seat = await services.people.membership(alan, tenant.tenant_id)
    assert seat is not None and seat.role is Role.OWNER


async def test_an_expired_a_revoked_and_an_unknown_invitation_are_one_same_page(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@acme.example")
        expiring = await _invited_link(client, csrf, tenant.tenant_id, "a@example.com")
        revoked = await _invited_link(client, csrf, tenant.tenant_id, "b@example.com")
        pending = {i.email: i for i in await services.invitations.pending(tenant.tenant_id)}
        answer = await client.post(
            f"/t/{tenant.tenant_id}/invitations/{pending['b@example.com'].id}/revoke",
            data={"csrf": csrf},
        )
        assert answer.status_code == 303
        told = await client.get(answer.headers["location"])
        assert "Invitation revoked: its link no longer works." in told.text
        [left] = await services.invitations.pending(tenant.tenant_id)
        assert left.email == "a@example.com"
    assert (await _fetch(services, expiring)).status_code == 200
    clock.advance(72 * 3600 + 1)
    assert await services.invitations.pending(tenant.tenant_id) == []
    unknown = "/invitations/" + "A" * 43
    for link in (expiring, revoked, unknown):
        page = await _fetch(services, link)
        assert page.status_code == 404 and INVALID in page.text, link
    actions = [e.action for e in await _events(services, tenant.tenant_id)]
    assert actions[0] is AuditAction.INVITATION_REVOKED


async def test_inviting_again_replaces_the_link_and_a_member_is_refused(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@acme.example")
        first = await _invited_link(client, csrf, tenant.tenant_id, "c@example.com")
        second = await _invited_link(client, csrf, tenant.tenant_id, "c@example.com", "owner")
        member = await _invite(client, csrf, tenant.tenant_id, "owner@acme.example")
    assert member.status_code == 409 and "member of the tenant already" in member.text
    assert (await _fetch(services, first)).status_code == 404
    [pending] = await services.invitations.pending(tenant.tenant_id)
    assert pending.role is Role.OWNER
    assert (await _fetch(services, second)).status_code == 200


async def test_the_last_owner_can_be_neither_demoted_nor_removed(
    services: Services, tenant: TenantClient
) -> None:
    owner = await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    second = await add_user(services, "two@acme.example", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}/users"
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@acme.example")
        demoted = await client.post(
            f"{base}/{owner.id}/role", data={"csrf": csrf, "role": "viewer"}
        )
        removed = await client.post(f"{base}/{owner.id}/remove", data={"csrf": csrf})
        for answer in (demoted, removed):
            assert answer.status_code == 409 and "needs an owner" in answer.text
        promoted = await client.post(
            f"{base}/{second.id}/role", data={"csrf": csrf, "role": "owner"}
        )
        assert promoted.status_code == 303
        told = await client.get(promoted.headers["location"])
        assert "Role changed to owner: two@acme.example" in told.text
        stepped_down = await client.post(
            f"{base}/{owner.id}/role", data={"csrf": csrf, "role": "viewer"}
        )
        assert stepped_down.status_code == 303
    seat = await services.people.membership(owner, tenant.tenant_id)
    assert seat is not None and seat.role is Role.VIEWER
    changed = await _events(services, tenant.tenant_id)
    assert [e.action for e in changed] == [AuditAction.MEMBER_ROLE_CHANGED] * 2
    assert changed[0].changes == {
        "email": "owner@acme.example",
        "role": {"from": "owner", "to": "viewer"},
    }


async def test_a_removed_member_loses_access_at_once(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    viewer = await add_user(services, "viewer@acme.example", tenant.tenant_id, Role.VIEWER)
    async with browser(services) as owner, browser(services) as member:
        csrf = await sign_in(owner, "owner@acme.example")
        await sign_in(member, "viewer@acme.example")
        assert (await member.get(f"/t/{tenant.tenant_id}/")).status_code == 200
        page = await owner.get(f"/t/{tenant.tenant_id}/users")
        assert "viewer@acme.example" in page.text and ">Users<" in page.text
        removed = await owner.post(
            f"/t/{tenant.tenant_id}/users/{viewer.id}/remove", data={"csrf": csrf}
        )
        assert removed.status_code == 303
        told = await owner.get(removed.headers["location"])
        assert "Removed from the tenant: viewer@acme.example" in told.text
        assert "viewer@acme.example" not in told.text.split('<main id="main"')[1]
        gone = await member.get(f"/t/{tenant.tenant_id}/")
    assert gone.status_code == 404
    [event] = await _events(services, tenant.tenant_id)
    assert event.action is AuditAction.MEMBER_REMOVED and event.target_id == viewer.id


async def test_an_owner_who_leaves_lands_where_home_would_send_them_and_is_told(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    globex = await make_tenant(services, api, "globex")
    both = await add_user(services, "two@acme.example", tenant.tenant_id, Role.OWNER)
    await services.people.set_role(both, globex.tenant_id, Role.VIEWER, CLI_ACTOR)
    only = await add_user(services, "one@acme.example", tenant.tenant_id, Role.OWNER)
    await add_user(services, "stays@acme.example", tenant.tenant_id, Role.OWNER)
    users = f"/t/{tenant.tenant_id}/users"
    async with browser(services) as client:
        csrf = await sign_in(client, "two@acme.example")
        left = await client.post(f"{users}/{both.id}/remove", data={"csrf": csrf})
        # Straight to their one tenant left: through ``/`` its redirect would take the flash.
        assert left.headers["location"] == f"/t/{globex.tenant_id}/"
        assert "You left acme." in (await client.get(left.headers["location"])).text
    async with browser(services) as client:
        csrf = await sign_in(client, "one@acme.example")
        left = await client.post(f"{users}/{only.id}/remove", data={"csrf": csrf})
        home = await client.get(left.headers["location"])
    assert left.headers["location"] == "/" and home.status_code == 200
    assert "You left acme." in home.text


async def test_with_platform_email_the_link_is_mailed_not_shown(
    services: Services,
    api: httpx.AsyncClient,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
) -> None:
    await _mailing(services, api, sandbox)
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "owner@acme.example")
        answer = await _invite(client, csrf, tenant.tenant_id, "hopper@example.com")
        assert answer.status_code == 303
        shown = await client.get(answer.headers["location"])
    assert "Invitation sent by email" in shown.text and LINK.search(shown.text) is None
    # The mailed link is built on HOMING_PUBLIC_URL, never on the request's Host.
    link = await _mailed_link(services, sb, "hopper@example.com")
    [mail] = await sb.messages("sendgrid")
    assert "acme" in mail["subject"] and "homing.test" not in mail["text"]
    async with browser(services) as invitee:
        accepted = await _accept_new(invitee, link)
    assert accepted.status_code == 303


async def test_the_members_list_pages_and_is_for_owners_only(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await add_user(services, "a-owner@acme.example", tenant.tenant_id, Role.OWNER)
    people = PeopleStore(services.db)
    now = as_datetime(clock.now())
    for n in range(PAGE):
        added = services.audit.event(
            CLI_ACTOR, AuditAction.USER_ADDED, tenant_id=tenant.tenant_id, target_type="user"
        )
        await people.add_user(
            f"m{n:02d}@acme.example",
            "unusable",
            operator=False,
            now=now,
            audit=added,
            membership=(tenant.tenant_id, Role.VIEWER),
        )
    async with browser(services) as client:
        await sign_in(client, "a-owner@acme.example")
        first = await client.get(f"/t/{tenant.tenant_id}/users")
        more = re.search(r'href="(/t/[^"]+/users\?after=[^"]+)"', first.text)
        assert more, "no link to the next page"
        second = await client.get(more.group(1).replace("&#64;", "@"))
    assert first.text.count('class="member"') == PAGE
    assert "m48@acme.example" in first.text and "m49@acme.example" not in first.text
    assert second.text.count('class="member"') == 1 and "m49@acme.example" in second.text
    assert "More members" not in second.text
