"""A hostile person at the invitations: over-long or malformed emails, a role that is
none, another tenant's invitations and members, guessing tokens, flooding invitations
(Homing's own mail must not become a spam relay), forms without their tokens, and the
token kept out of the logs."""

from __future__ import annotations

import httpx
import pytest

from homing.clock import ManualClock
from homing.domain.audit import AuditFilter
from homing.errors import Conflict
from homing.managers.audit import CLI_ACTOR
from homing.managers.invitations import INVALID, MAX_PENDING, PER_HOUR
from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient, make_tenant
from tests.console_helpers import PASSWORD, add_user, browser, csrf_of, sign_in
from tests.fixtures import captured_logs


async def _owner(services: Services, tenant: TenantClient, client: httpx.AsyncClient) -> str:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    return await sign_in(client, "owner@acme.example")


@pytest.mark.parametrize(
    ("email", "role", "says"),
    [
        ("a" * 64 + "@" + ".".join(["b" * 63, "c" * 63, "d" * 62]), "viewer", "at most 254"),
        ("a" * 250 + "@example.com", "viewer", "at most 254"),
        ("a" * 65 + "@example.com", "viewer", "at most 64"),
        ("a@b@example.com", "viewer", "one email address"),
        ("nobody", "viewer", "one email address"),
        # The one mailbox parser (homing.addresses) reads invitations' emails too.
        ("victim@[127.0.0.1]", "viewer", "one email address"),
        ("victim@127.0.0.1", "viewer", "an IP address"),
        ("a,b@example.com", "viewer", "one email address"),
        ('"a b"@example.com', "viewer", "one email address"),
        ("Eve <eve@example.com>", "viewer", "the address alone"),
        ("eve@example.com\u202e", "viewer", "invisible format characters"),
        ("eve@example.com (x)", "viewer", "one email address"),
        ("ok@example.com", "admin", "owner or viewer"),
        ("ok@example.com", "", "owner or viewer"),
        ("ok@example.com", "operator", "owner or viewer"),
    ],
)
async def test_a_bad_email_or_role_is_refused_and_invites_nobody(
    services: Services, tenant: TenantClient, email: str, role: str, says: str
) -> None:
    async with browser(services) as client:
        csrf = await _owner(services, tenant, client)
        answer = await client.post(
            f"/t/{tenant.tenant_id}/users/invite",
            data={"csrf": csrf, "email": email, "role": role},
        )
    assert answer.status_code == 422 and says in answer.text
    assert await services.invitations.pending(tenant.tenant_id) == []


async def test_another_tenants_invitation_or_member_is_404_like_a_missing_one(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "globex")
    stranger = await add_user(services, "eve@globex.example", other.tenant_id, Role.OWNER)
    theirs = await services.invitations.invite(
        other.tenant_id, "globex", "x@example.com", Role.OWNER, CLI_ACTOR, "http://h"
    )
    missing = "0190c0de-0000-7000-8000-000000000000"
    base = f"/t/{tenant.tenant_id}"
    async with browser(services) as client:
        csrf = await _owner(services, tenant, client)
        answers = {
            "theirs": await client.post(
                f"{base}/invitations/{theirs.invitation_id}/revoke", data={"csrf": csrf}
            ),
            "missing": await client.post(
                f"{base}/invitations/{missing}/revoke", data={"csrf": csrf}
            ),
            "their member": await client.post(
                f"{base}/users/{stranger.id}/remove", data={"csrf": csrf}
            ),
            "their member's role": await client.post(
                f"{base}/users/{stranger.id}/role", data={"csrf": csrf, "role": "viewer"}
            ),
            "no member": await client.post(f"{base}/users/{missing}/remove", data={"csrf": csrf}),
        }
        their_page = f"/t/{other.tenant_id}"
        on_their_pages = [
            await client.get(f"{their_page}/users"),
            await client.post(
                f"{their_page}/users/invite",
                data={"csrf": csrf, "email": "me@evil.example", "role": "owner"},
            ),
            await client.post(
                f"{their_page}/invitations/{theirs.invitation_id}/revoke", data={"csrf": csrf}
            ),
            await client.post(f"{their_page}/users/{stranger.id}/remove", data={"csrf": csrf}),
        ]
    revoke_texts = {answers["theirs"].text, answers["missing"].text}
    assert len(revoke_texts) == 1
    member_texts = {answers[k].text for k in ("their member", "their member's role", "no member")}
    assert len(member_texts) == 1
    assert all(a.status_code == 404 for a in answers.values()), answers
    for answer in on_their_pages:
        assert answer.status_code == 404 and "no such tenant among yours" in answer.text
    [still] = await services.invitations.pending(other.tenant_id)
    assert still.id == theirs.invitation_id
    assert await services.people.membership(stranger, other.tenant_id) is not None


async def test_guessing_tokens_is_throttled_per_address(
    services: Services, tenant: TenantClient
) -> None:
    real = await services.invitations.invite(
        tenant.tenant_id, "acme", "g@example.com", Role.VIEWER, CLI_ACTOR, "http://h"
    )
    real_path = real.link.removeprefix("http://h")
    async with browser(services) as client:
        guesses = [(await client.get(f"/invitations/guess{n:038d}")) for n in range(30)]
        assert {g.status_code for g in guesses} == {404}
        assert all(INVALID in g.text for g in guesses)
        refused = await client.get(real_path)
        posted = await client.post(real_path, data={"password": "x" * 12})
    assert refused.status_code == 429 and posted.status_code == 429
    assert "retry in" in refused.text


async def test_an_over_long_or_odd_token_is_the_same_invalid_page(services: Services) -> None:
    async with browser(services) as client:
        answers = [
            await client.get("/invitations/" + "A" * 5000),
            await client.get("/invitations/%00%01"),
            await client.post("/invitations/" + "B" * 300, data={"password": "x" * 12}),
        ]
    for answer in answers:
        assert answer.status_code == 404 and INVALID in answer.text


async def test_an_invitation_flood_is_capped_per_hour_and_in_pending(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    async def invite(n: int) -> None:
        await services.invitations.invite(
            tenant.tenant_id, "acme", f"p{n}@example.com", Role.VIEWER, CLI_ACTOR, "http://h"
        )

    async with browser(services) as client:
        csrf = await _owner(services, tenant, client)
        codes = [
            (
                await client.post(
                    f"/t/{tenant.tenant_id}/users/invite",
                    data={"csrf": csrf, "email": f"u{n}@example.com", "role": "viewer"},
                )
            ).status_code
            for n in range(PER_HOUR + 2)
        ]
    assert codes == [303] * PER_HOUR + [429, 429]
    made = PER_HOUR
    while made < MAX_PENDING:
        clock.advance(3601)
        for _ in range(min(PER_HOUR, MAX_PENDING - made)):
            await invite(made)
            made += 1
    clock.advance(3601)
    with pytest.raises(Conflict, match="pending invitations"):
        await invite(made)
    assert len(await services.invitations.pending(tenant.tenant_id)) == MAX_PENDING


async def test_forms_without_their_tokens_or_from_a_viewer_are_refused(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "viewer@acme.example", tenant.tenant_id, Role.VIEWER)
    invited = await services.invitations.invite(
        tenant.tenant_id, "acme", "new@example.com", Role.OWNER, CLI_ACTOR, "http://h"
    )
    link = invited.link.removeprefix("http://h")
    form = {"password": "a long enough password", "confirm": "a long enough password"}
    async with browser(services) as viewer, browser(services) as owner, browser(services) as anon:
        csrf = await sign_in(viewer, "viewer@acme.example")
        by_viewer = await viewer.post(
            f"/t/{tenant.tenant_id}/users/invite",
            data={"csrf": csrf, "email": "me@example.com", "role": "owner"},
        )
        viewer_page = await viewer.get(f"/t/{tenant.tenant_id}/users")
        owner_csrf = await _owner(services, tenant, owner)
        no_csrf = await owner.post(
            f"/t/{tenant.tenant_id}/users/invite", data={"email": "x@example.com"}
        )
        assert owner_csrf
        token = csrf_of((await anon.get(link)).text)
        without = await anon.post(link, data=form)
        foreign = await anon.post(
            link, data={**form, "csrf": token}, headers={"Origin": "https://evil.example"}
        )
        too_long = await anon.post(link, data={"csrf": token, "password": "p" * 300})
        differ = await anon.post(link, data={**form, "csrf": token, "confirm": "another one!!"})
    for answer in (by_viewer, viewer_page, no_csrf, without, foreign):
        assert answer.status_code == 403, answer.text
        assert "set-cookie" not in answer.headers
    assert too_long.status_code == 422 and differ.status_code == 422
    assert await services.people.user("new@example.com") is None
    assert len(await services.invitations.pending(tenant.tenant_id)) == 1


async def test_the_token_and_the_password_stay_out_of_the_logs(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "owner@acme.example", tenant.tenant_id, Role.OWNER)
    with captured_logs() as logs:
        async with browser(services) as client, browser(services) as invitee:
            csrf = await sign_in(client, "owner@acme.example")
            answer = await client.post(
                f"/t/{tenant.tenant_id}/users/invite",
                data={"csrf": csrf, "email": "grace@example.com", "role": "viewer"},
            )
            shown = await client.get(answer.headers["location"])
            shown_link = "/invitations/" + shown.text.split("/invitations/")[1][:43]
            # The operator's command makes links that may make an account (the owner's,
            # shown, may not: test_links); its log is the same.
            invited = await services.invitations.invite(
                tenant.tenant_id, "acme", "ada@example.com", Role.VIEWER, CLI_ACTOR, "http://h"
            )
            assert (await invitee.get(shown_link)).status_code == 200
            link = invited.link.removeprefix("http://h")
            page = await invitee.get(link)
            data = {"csrf": csrf_of(page.text), "password": PASSWORD, "confirm": PASSWORD}
            assert (await invitee.post(link, data=data)).status_code == 303
    token = link.rpartition("/")[2]
    assert token not in logs.getvalue() and PASSWORD not in logs.getvalue()
    assert shown_link.rpartition("/")[2] not in logs.getvalue()
    assert "ada@example.com" not in logs.getvalue()
    events, _ = await services.audit.page(
        AuditFilter(tenant_id=tenant.tenant_id), limit=10, cursor=None
    )
    # The owner added, two invitations, one accepted.
    assert len(events) == 4 and all(token not in repr(e) for e in events)
