"""Post/Redirect/Get with flash messages: a change answers 303 and the next page of
the same session says what was done, once; a new key or secret rides along sealed,
shown by the first page and gone from the database as it is shown."""

from __future__ import annotations

import re

import httpx
from sqlalchemy import select

from homing.clock import ManualClock
from homing.crypto import MasterKey, Sealer, generate_master_key
from homing.managers.flashes import KEEP, MAX_MESSAGE, Flashes, FlashKind
from homing.managers.keyrotation import KeyRotation
from homing.models import Role
from homing.services import Services
from homing.store.flashes import FlashStore
from homing.store.tables.console import console_flashes
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in
from tests.fixtures import captured_logs

_KEY = re.compile(r'class="secret" id="flash-secret-1">(hk_[A-Za-z0-9_-]+)<')


async def _rows(services: Services) -> list[tuple[object, ...]]:
    async with services.db.transaction() as conn:
        return [tuple(row) for row in (await conn.execute(select(console_flashes))).all()]


async def _session_id(services: Services, client: httpx.AsyncClient) -> str:
    session = await services.people.session(str(client.cookies.get("homing_session")))
    assert session is not None
    return session.id


async def test_a_new_key_survives_the_redirect_sealed_and_no_reload_shows_or_issues_it_again(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/api-keys"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        with captured_logs() as logs:
            made = await client.post(base, data={"csrf": csrf, "name": "production"})
        assert made.status_code == 303 and made.headers["location"] == base
        stored = await _rows(services)
        assert len(stored) == 1
        shown = await client.get(base)
        key = _KEY.search(shown.text)
        assert key, shown.text
        assert "API key “production” created" in shown.text
        assert await _rows(services) == []
        reloaded = await client.get(base)
        again = await client.get(base)
    secret = key.group(1)
    row = repr(stored)
    assert secret not in row and secret[3:-4] not in row and "v1:" in row
    assert secret not in logs.getvalue() and secret not in made.text
    for page in (reloaded, again):
        assert 'class="secret"' not in page.text
        assert secret not in page.text and "shown once, right after it is created" in page.text
    names = sorted(k.name for k in await services.keys.live(tenant.tenant_id))
    assert names.count("production") == 1


async def test_a_flash_is_shown_once_and_only_to_the_session_that_made_the_change(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/webhooks"
    async with browser(services) as laptop, browser(services) as phone:
        csrf = await sign_in(laptop, "ada@example.com")
        await sign_in(phone, "ada@example.com")
        made = await laptop.post(f"{base}/secret", data={"csrf": csrf})
        assert made.status_code == 303
        elsewhere = await phone.get(base)
        here = await laptop.get(base)
        reloaded = await laptop.get(base)
    for page in (elsewhere, reloaded):
        assert "Signing secret generated" not in page.text
        assert 'class="secret"' not in page.text and "Current secret" in page.text
    assert 'role="status"' in here.text and "Signing secret generated" in here.text
    assert re.search(r'class="secret" id="flash-secret-1">whsec_', here.text)


async def test_a_post_leaves_the_flashes_for_the_page_it_redirects_to(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/api-keys"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        await client.post(base, data={"csrf": csrf, "name": "one"})
        page = await client.post(base, data={"csrf": csrf, "name": "two"}, follow_redirects=True)
    assert "API key “one” created" in page.text and "API key “two” created" in page.text
    assert page.text.count('class="secret"') == 2


async def test_a_session_keeps_only_its_newest_flashes_each_cut_to_length(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        session_id = await _session_id(services, client)
        for n in range(KEEP + 3):
            await services.flashes.queue(session_id, f"change {n} " + "x" * 400)
        assert len(await _rows(services)) == KEEP
        taken = await services.flashes.take(session_id)
    assert [f.message.split()[1] for f in taken] == [str(n) for n in range(3, KEEP + 3)]
    assert {len(f.message) for f in taken} == {MAX_MESSAGE}
    assert {f.kind for f in taken} == {FlashKind.OK}


async def test_flashes_end_with_their_session_signed_out_or_expired(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    await add_user(services, "bob@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as ada, browser(services) as bob:
        csrf = await sign_in(ada, "ada@example.com")
        await services.flashes.queue(await _session_id(services, ada), "Done.", secret="s3cret")
        assert len(await _rows(services)) == 1
        await ada.post("/sign-out", data={"csrf": csrf})
        assert await _rows(services) == []
        await sign_in(ada, "ada@example.com")
        await services.flashes.queue(await _session_id(services, ada), "Done.", secret="s3cret")
        clock.advance(31 * 60)  # past the idle end: the session ended unseen
        await sign_in(bob, "bob@example.com")
        assert await _rows(services) == []


async def test_a_flash_not_shown_in_time_is_dropped_unseen(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        await services.flashes.queue(await _session_id(services, client), "Old news.")
        clock.advance(11 * 60)
        page = await client.get(f"/t/{tenant.tenant_id}/")
    assert "Old news." not in page.text
    assert await _rows(services) == []


async def test_each_console_change_says_what_it_did(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        key_id = (await services.keys.live(tenant.tenant_id))[0].id
        base = f"/t/{tenant.tenant_id}"
        await client.post(f"{base}/api-keys", data={"csrf": csrf, "name": "spare"})
        await client.get(f"{base}/api-keys")
        revoked = await client.post(
            f"{base}/api-keys/{key_id}/revoke", data={"csrf": csrf}, follow_redirects=True
        )
        counted = await client.post(
            f"{base}/dead-letters/redrive",
            data={"csrf": csrf, "dry_run": "1"},
            follow_redirects=True,
        )
        out = await client.post("/sign-out", data={"csrf": csrf}, follow_redirects=True)
    assert "API key revoked" in revoked.text
    assert "0 dead letters would be redriven. Nothing was changed." in counted.text
    assert "Signed out." in out.text


async def test_a_pending_secret_is_resealed_by_a_master_key_rotation(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    async with browser(services) as client:
        await sign_in(client, "ada@example.com")
        session_id = await _session_id(services, client)
    await services.flashes.queue(session_id, "Key created.", secret="hk_pending_secret")
    new_key = MasterKey.from_b64(generate_master_key())
    old = MasterKey.from_b64(services.settings.secret_key.get_secret_value())  # type: ignore[union-attr]
    report = await KeyRotation(services.db, Sealer(new_key, [old])).run()
    assert report.resealed["console flashes"] == 1
    only_new = Flashes(FlashStore(services.db), Sealer(new_key), services.clock)
    [taken] = await only_new.take(session_id)
    assert taken.secret == "hk_pending_secret"
    assert "hk_pending_secret" not in repr(taken)
