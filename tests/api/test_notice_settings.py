"""``contact_email`` and ``operations_url`` in ``/v1/settings``: set, shown, normalised
and cleared; each tenant's own."""

from __future__ import annotations

import httpx

from homing.services import Services
from tests.conftest import TenantClient, make_tenant


async def test_notice_targets_are_set_shown_and_cleared(tenant: TenantClient) -> None:
    response = await tenant.patch(
        "/v1/settings",
        json={
            "contact_email": "Ops <ops@Acme.Example>",
            "operations_url": "https://ops.acme.example/h",
        },
    )
    assert response.status_code == 200, response.text
    shown = (await tenant.get("/v1/settings")).json()
    assert shown["contact_email"] == "Ops <ops@acme.example>"
    assert shown["operations_url"] == "https://ops.acme.example/h"
    assert shown["webhook_signature_format"] == "design"
    cleared = await tenant.patch("/v1/settings", json={"contact_email": None})
    assert cleared.json()["contact_email"] is None
    assert cleared.json()["operations_url"] == "https://ops.acme.example/h"


async def test_notice_targets_are_per_tenant(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    await tenant.patch("/v1/settings", json={"contact_email": "ops@acme.example"})
    assert (await other.get("/v1/settings")).json()["contact_email"] is None
