"""Signing in and out of the console: sessions, their ends, lockout and CSRF."""

from __future__ import annotations

import httpx

from homing.clock import ManualClock
from homing.managers.audit import CLI_ACTOR
from homing.models import Role
from homing.services import Services
from tests.conftest import stored_tenant
from tests.console_helpers import PASSWORD, add_user, browser, csrf_of, sign_in


async def test_signing_in_sets_a_strict_session_cookie_and_shows_the_users_tenants(
    services: Services,
) -> None:
    first = await stored_tenant(services, "Acme")
    second = await stored_tenant(services, "Globex")
    await add_user(services, "ada@example.com", first, Role.OWNER)
    user = await services.people.user("ada@example.com")
    assert user is not None
    await services.people.set_role(user, second, Role.VIEWER, CLI_ACTOR)
    async with browser(services) as client:
        answer = await client.post(
            "/sign-in", data={"email": "Ada@Example.com ", "password": PASSWORD}
        )
        assert answer.status_code == 303
        assert answer.headers["location"] == "/"
        cookie = answer.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
        assert "secure" not in cookie  # plain http here; https sets it
        home = await client.get("/")
    assert home.status_code == 200
    assert "Acme" in home.text and "Globex" in home.text
    assert "default-src 'self'" in home.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in home.headers["content-security-policy"]
    assert home.headers["cache-control"] == "no-store"


async def test_a_wrong_password_or_unknown_email_is_one_same_refusal(services: Services) -> None:
    await add_user(services, "ada@example.com", await stored_tenant(services))
    async with browser(services) as client:
        wrong = await client.post(
            "/sign-in", data={"email": "ada@example.com", "password": "not the password"}
        )
        unknown = await client.post(
            "/sign-in", data={"email": "bob@example.com", "password": PASSWORD}
        )
    for answer in (wrong, unknown):
        assert answer.status_code == 401
        assert "do not match" in answer.text
        assert "set-cookie" not in answer.headers


async def test_without_a_session_a_page_sends_to_sign_in_with_where_it_was_going(
    services: Services,
) -> None:
    async with browser(services) as client:
        answer = await client.get("/")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/sign-in?next=/"


async def test_an_idle_session_ends(services: Services, clock: ManualClock) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        clock.advance(29 * 60)
        assert (await client.get("/", follow_redirects=True)).url.path == "/operator/tenants"
        clock.advance(31 * 60)
        assert (await client.get("/")).status_code == 303


async def test_a_busy_session_still_ends_at_its_absolute_end(
    services: Services, clock: ManualClock
) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        for _ in range(12 * 3):
            clock.advance(20 * 60)
            answer = await client.get("/")
        assert answer.status_code == 303
        assert answer.headers["location"].startswith("/sign-in")


async def test_signing_out_ends_the_session_and_everywhere_ends_them_all(
    services: Services,
) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as laptop, browser(services) as phone:
        csrf = await sign_in(laptop, "ada@example.com")
        await sign_in(phone, "ada@example.com")
        cookie = laptop.cookies.get("homing_session")
        out = await laptop.post("/sign-out/everywhere", data={"csrf": csrf})
        assert out.status_code == 303 and out.headers["location"] == "/sign-in?done=everywhere"
        said = await laptop.get(out.headers["location"])
        assert "Signed out everywhere" in said.text
        assert (await phone.get("/")).status_code == 303
        async with browser(services) as thief:
            thief.cookies.set("homing_session", str(cookie))
            assert (await thief.get("/")).status_code == 303


async def test_a_post_without_the_sessions_csrf_token_is_refused(services: Services) -> None:
    await add_user(services, "ada@example.com", operator=True)
    await add_user(services, "eve@example.com", operator=True)
    async with browser(services) as ada, browser(services) as eve:
        await sign_in(ada, "ada@example.com")
        evil = await sign_in(eve, "eve@example.com")
        for data in ({"other": "1"}, {"csrf": ""}, {"csrf": evil}):
            refused = await ada.post("/sign-out", data=data)
            assert refused.status_code == 403, data
            assert "expired or came from another page" in refused.text
        assert (await ada.get("/", follow_redirects=True)).status_code == 200


async def test_failed_sign_ins_lock_the_email_even_against_the_right_password(
    services: Services, clock: ManualClock
) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        for _ in range(5):
            answer = await client.post(
                "/sign-in", data={"email": "ada@example.com", "password": "guess guess guess"}
            )
            assert answer.status_code == 401
        locked = await client.post(
            "/sign-in", data={"email": "ada@example.com", "password": PASSWORD}
        )
        assert locked.status_code == 429
        assert "too many failed sign-ins" in locked.text
        clock.advance(15 * 60 + 1)
        assert (
            await client.post("/sign-in", data={"email": "ada@example.com", "password": PASSWORD})
        ).status_code == 303


async def test_the_page_and_its_forms_carry_the_token(services: Services) -> None:
    await add_user(services, "ada@example.com", operator=True)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        page = await client.get("/operator/tenants")
    assert csrf_of(page.text) == csrf


async def test_static_files_are_ours_and_typed(api: httpx.AsyncClient) -> None:
    css = await api.get("/static/console.css")
    js = await api.get("/static/console.js")
    assert css.headers["content-type"].startswith("text/css")
    assert js.headers["content-type"].startswith("text/javascript")
    again = await api.get("/static/console.js", headers={"If-None-Match": js.headers["etag"]})
    assert again.status_code == 304
