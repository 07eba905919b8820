"""The audit log: every change through the API records one event, with its actor, its
request id and what changed, in the change's transaction; never a secret."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from sqlalchemy import select

from homing.api.app import create_app
from homing.api.audit_scope import AUDITED, EXEMPT
from homing.clock import ManualClock
from homing.models import AuditAction
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from homing.store.tables.audit import audit_events
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import settings_for

ADMIN_TOKEN = "admin-token-for-audit-tests-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
RESEND_KEY = "re_live_AuditTopSecret_12345"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, admin_token=ADMIN_TOKEN)


async def _log(client: TenantClient, **params: Any) -> list[dict[str, Any]]:
    response = await client.get("/v1/audit-log", params=params)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def _admin_log(api: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    response = await api.get("/admin/v1/audit-log", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


async def _own_key_id(client: TenantClient) -> str:
    keys = (await client.get("/v1/api-keys")).json()["data"]
    assert len(keys) == 1
    key_id: str = keys[0]["id"]
    return key_id


async def _resend(client: TenantClient, sandbox: SandboxServer, **extra: Any) -> dict[str, Any]:
    body = {
        "channel": "email",
        "provider": "resend",
        "credentials": {"api_key": RESEND_KEY},
        "config": {"base_url": sandbox.provider_base_url("resend")},
        "priority": 1,
        **extra,
    }
    response = await client.post("/v1/providers", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_every_changing_route_is_audited_or_exempt(services: Services) -> None:
    routes = {
        (method, route.path)
        for route in iter_route_contexts(create_app(services).routes)
        if isinstance(route.original_route, APIRoute) and route.path
        for method in (route.methods or set()) & CHANGING
    }
    unclassified = routes - set(AUDITED) - set(EXEMPT)
    assert not unclassified, f"audit these or exempt them with a reason: {sorted(unclassified)}"
    assert not (set(AUDITED) | set(EXEMPT)) - routes, "a classified route is gone"
    assert not set(AUDITED) & set(EXEMPT)
    assert all(reason.strip() for reason in EXEMPT.values())


def test_every_action_of_the_vocabulary_has_a_route_or_a_command() -> None:
    by_routes = set().union(*AUDITED.values())

    by_commands = {
        AuditAction.MASTER_KEY_ROTATED,  # homing keys rotate
        AuditAction.USER_ADDED,  # homing user add, homing run --demo
        AuditAction.USER_PASSWORD_SET,  # a second homing run --demo
    }
    assert set(AuditAction) - by_routes == by_commands


async def test_issuing_and_revoking_a_key_records_the_key_that_did_it(
    tenant: TenantClient,
) -> None:
    actor = {"kind": "api_key", "id": await _own_key_id(tenant), "name": None}
    issued = await tenant.post(
        "/v1/api-keys", json={"name": "ci"}, headers={"X-Request-Id": "req-issue-1"}
    )
    assert issued.status_code == 201
    new_id = issued.json()["id"]
    assert (await tenant.delete(f"/v1/api-keys/{new_id}")).status_code == 204
    revoked, created = await _log(tenant)
    assert created["action"] == "api_key.issued"
    assert created["actor"] == actor
    assert created["target_type"] == "api_key"
    assert created["target_id"] == new_id
    assert created["changes"] == {"name": "ci", "test": False}
    assert created["request_id"] == "req-issue-1"
    assert created["tenant_id"] == tenant.tenant_id
    assert revoked["action"] == "api_key.revoked"
    assert revoked["target_id"] == new_id
    assert revoked["actor"] == actor


async def test_provider_changes_record_before_and_after_and_never_credentials(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    provider = await _resend(tenant, sandbox)
    pid = provider["id"]
    assert (await tenant.patch(f"/v1/providers/{pid}", json={"priority": 5})).status_code == 200
    disabled = await tenant.patch(f"/v1/providers/{pid}", json={"enabled": False})
    assert disabled.status_code == 200
    assert (await tenant.delete(f"/v1/providers/{pid}")).status_code == 204
    removed, updated, reordered, added = await _log(tenant)
    assert added["action"] == "provider.added"
    assert added["target_id"] == pid
    assert added["changes"]["credentials"] == "changed"
    assert added["changes"]["provider"] == "resend"
    assert reordered["action"] == "provider.reordered"
    assert reordered["changes"] == {"priority": {"from": 1, "to": 5}}
    assert updated["action"] == "provider.updated"
    assert updated["changes"] == {"enabled": {"from": True, "to": False}}
    assert removed["action"] == "provider.removed"
    assert removed["target_id"] == pid


async def test_no_secret_ever_reaches_the_audit_table(
    services: Services, tenant: TenantClient, sandbox: SandboxServer
) -> None:
    secrets = [RESEND_KEY]
    issued = await tenant.post("/v1/api-keys", json={"name": "second"})
    secrets.append(issued.json()["key"])
    created = await tenant.post("/v1/webhook-secret")
    secrets.append(created.json()["secret"])
    rotated = await tenant.post("/v1/webhook-secret/rotate")
    secrets.append(rotated.json()["secret"])
    provider = await _resend(
        tenant, sandbox, config={"base_url": sandbox.provider_base_url("resend")}
    )
    inbound = {"signing_secret": "whsec_" + "QXVkaXRJbmJvdW5kU2VjcmV0MTIzNDU2Nzg5MA=="}
    put = await tenant.api.put(
        f"/v1/providers/{provider['id']}/inbound", json=inbound, headers=tenant.headers
    )
    assert put.status_code == 200, put.text
    secrets.append(inbound["signing_secret"])
    async with services.db.transaction() as conn:
        rows = (await conn.execute(select(audit_events))).all()
    dump = repr([tuple(row) for row in rows])
    assert len(rows) == 5
    for secret in secrets:
        assert secret not in dump
        assert secret[8:-4] not in dump


async def test_a_tenant_sees_only_its_own_events_and_operators_see_all(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other")
    assert (await tenant.post("/v1/api-keys", json={"name": "mine"})).status_code == 201
    assert (await other.post("/v1/api-keys", json={"name": "theirs"})).status_code == 201
    mine, theirs = await _log(tenant), await _log(other)
    assert [e["changes"]["name"] for e in mine] == ["mine"]
    assert [e["changes"]["name"] for e in theirs] == ["theirs"]
    everyone = await _admin_log(api)
    assert {e["tenant_id"] for e in everyone} == {tenant.tenant_id, other.tenant_id}
    narrowed = await _admin_log(api, tenant_id=other.tenant_id)
    assert [e["changes"]["name"] for e in narrowed] == ["theirs"]


async def test_a_failing_change_records_no_event(
    api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    last = await tenant.delete(f"/v1/api-keys/{await _own_key_id(tenant)}")
    assert last.status_code == 409
    missing = "0194d1c0-0000-7000-8000-000000000000"
    assert (await tenant.delete(f"/v1/providers/{missing}")).status_code == 404
    assert (await tenant.delete("/v1/webhook-secret")).status_code == 404
    assert (await tenant.post("/v1/webhook-secret")).status_code == 201
    assert (await tenant.post("/v1/webhook-secret")).status_code == 409
    gone = await tenant.delete("/v1/suppressions", params={"address": "ada@example.com"})
    assert gone.status_code == 404
    assert (
        await api.post(f"/admin/v1/tenants/{missing}/suspend", headers=ADMIN)
    ).status_code == 404
    assert [e["action"] for e in await _log(tenant)] == ["webhook_secret.created"]
    assert len(await _admin_log(api)) == 1


async def test_operator_actions_record_the_admin_and_the_tenant_sees_them(
    api: httpx.AsyncClient,
) -> None:
    created = await api.post("/admin/v1/tenants", json={"name": "acme"}, headers=ADMIN)
    assert created.status_code == 201
    tid = created.json()["id"]
    path = f"/admin/v1/tenants/{tid}"
    assert (await api.patch(path, json={"plan": "INDIE"}, headers=ADMIN)).status_code == 200
    assert (await api.patch(path, json={"name": "Acme"}, headers=ADMIN)).status_code == 200
    assert (await api.post(f"{path}/suspend", headers=ADMIN)).status_code == 200
    assert (await api.post(f"{path}/unsuspend", headers=ADMIN)).status_code == 200
    events = await _admin_log(api, tenant_id=tid)
    assert [e["action"] for e in events] == [
        "tenant.resumed",
        "tenant.suspended",
        "tenant.updated",
        "tenant.plan_changed",
        "tenant.created",
    ]
    assert {e["actor"]["kind"] for e in events} == {"admin"}
    assert events[3]["changes"] == {"plan": {"from": "FREE", "to": "INDIE"}}
    assert events[2]["changes"] == {"name": {"from": "acme", "to": "Acme"}}
    assert events[4]["target_id"] == tid
    client = TenantClient(api, tid, created.json()["api_key"])
    assert [e["action"] for e in await _log(client)] == [e["action"] for e in events]


async def test_settings_suppressions_and_endpoints_are_recorded(tenant: TenantClient) -> None:
    patched = await tenant.patch("/v1/settings", json={"webhook_signature_format": "notifykit"})
    assert patched.status_code == 200
    body = {"channel": "email", "address": "Ada@Example.com", "reason": "manual"}
    assert (await tenant.post("/v1/suppressions", json=body)).status_code == 201
    assert (await tenant.post("/v1/suppressions", json=body)).status_code == 200
    removed = await tenant.delete("/v1/suppressions", params={"address": "ada@example.com"})
    assert removed.status_code == 204
    events = await _log(tenant)
    assert [e["action"] for e in events] == [
        "suppression.removed",
        "suppression.added",
        "settings.updated",
    ]
    assert events[2]["changes"] == {
        "webhook_signature_format": {"from": "design", "to": "notifykit"}
    }
    assert events[1]["target_id"] == "ada@example.com"


async def test_the_list_filters_by_action_and_time_and_pages_newest_first(
    tenant: TenantClient, clock: ManualClock
) -> None:
    for name in ("a", "b", "c"):
        assert (await tenant.post("/v1/api-keys", json={"name": name})).status_code == 201
        clock.advance(60)
    assert (await tenant.post("/v1/webhook-secret")).status_code == 201
    keys = await _log(tenant, action="api_key.issued")
    assert [e["changes"]["name"] for e in keys] == ["c", "b", "a"]
    first = (await tenant.get("/v1/audit-log", params={"limit": 2})).json()
    assert len(first["data"]) == 2 and first["next_cursor"] is not None
    rest = await _log(tenant, limit=2, cursor=first["next_cursor"])
    assert [e["changes"].get("name") for e in first["data"] + rest] == [None, "c", "b", "a"]
    middle = keys[1]["created_at"]
    since = await _log(tenant, since=middle, action="api_key.issued")
    until = await _log(tenant, until=middle, action="api_key.issued")
    assert [e["changes"]["name"] for e in since] == ["c", "b"]
    assert [e["changes"]["name"] for e in until] == ["a"]


async def test_audit_events_outlive_job_retention_and_go_after_their_own(
    services: Services, tenant: TenantClient, clock: ManualClock
) -> None:
    assert (await tenant.post("/v1/api-keys", json={"name": "old"})).status_code == 201
    clock.advance(timedelta(days=services.settings.retention.days + 1).total_seconds())
    kept = await services.retention().run()
    assert kept.audit_events == 0
    assert len(await _log(tenant)) == 1
    clock.advance(timedelta(days=services.settings.retention.audit_days).total_seconds())
    assert (await services.retention().run(dry_run=True)).audit_events == 1
    purged = await services.retention().run()
    assert purged.audit_events == 1
    assert await _log(tenant) == []
