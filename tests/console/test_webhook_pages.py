"""The webhook signing secret in the console: generate (shown once, on the page the
form redirects to), rotate with the overlap shown, delete; gone endpoints listed."""

from __future__ import annotations

import re

from homing.models import Role
from homing.services import Services
from tests.conftest import TenantClient
from tests.console_helpers import add_user, browser, sign_in

_SECRET = re.compile(r'class="secret" id="flash-secret-1">(whsec_[A-Za-z0-9+/=]+)<')


async def test_a_secret_is_generated_rotated_with_overlap_and_deleted(
    services: Services, tenant: TenantClient
) -> None:
    await add_user(services, "ada@example.com", tenant.tenant_id, Role.OWNER)
    base = f"/t/{tenant.tenant_id}/webhooks"
    async with browser(services) as client:
        csrf = await sign_in(client, "ada@example.com")
        assert "No signing secret" in (await client.get(base)).text
        made = await client.post(f"{base}/secret", data={"csrf": csrf})
        assert made.status_code == 303 and made.headers["location"] == base
        first = _SECRET.search((shown_once := await client.get(base)).text)
        assert first, shown_once.text
        assert "Signing secret generated" in shown_once.text
        assert shown_once.headers["cache-control"] == "no-store"
        shown = await client.get(base)
        assert first.group(1) not in shown.text and "Current secret" in shown.text
        twice = await client.post(f"{base}/secret", data={"csrf": csrf})
        assert twice.status_code == 409
        rotated = await client.post(
            f"{base}/secret/rotate", data={"csrf": csrf}, follow_redirects=True
        )
        second = _SECRET.search(rotated.text)
        assert second and second.group(1) != first.group(1)
        assert "The previous secret signs beside it until" in rotated.text
        after = await client.get(base)
        assert "Previous secret" in after.text and "still signs until" in after.text
        api = await tenant.get("/v1/webhook-secret")
        assert api.json()["previous_preview"] is not None
        gone = await client.post(f"{base}/secret/delete", data={"csrf": csrf})
        assert gone.status_code == 303
        assert "Signing secret deleted" in (await client.get(base)).text
    assert (await tenant.get("/v1/webhook-secret")).json()["configured"] is False


async def test_a_viewer_sees_the_preview_but_cannot_rotate(
    services: Services, tenant: TenantClient
) -> None:
    assert (await tenant.post("/v1/webhook-secret")).status_code == 201
    before = (await tenant.get("/v1/webhook-secret")).json()["preview"]
    await add_user(services, "vic@example.com", tenant.tenant_id, Role.VIEWER)
    base = f"/t/{tenant.tenant_id}/webhooks"
    async with browser(services) as client:
        csrf = await sign_in(client, "vic@example.com")
        page = await client.get(base)
        assert before in page.text and "Rotate secret" not in page.text
        for path in ("/secret", "/secret/rotate", "/secret/delete"):
            assert (await client.post(base + path, data={"csrf": csrf})).status_code == 403
    assert (await tenant.get("/v1/webhook-secret")).json()["preview"] == before
