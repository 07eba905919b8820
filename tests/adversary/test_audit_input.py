"""A hostile tenant against the audit log: huge or tricky values in a change are bounded
in what is stored, the list's filters are bounded, a forged request id is not kept."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
import pytest

from homing.managers.audit import (
    CHANGED,
    MAX_CHANGES_BYTES,
    MAX_FIELDS,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    bounded_changes,
)
from homing.sandbox.server import SandboxServer
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.fixtures import settings_for

ADMIN_TOKEN = "admin-token-for-audit-adversary-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
TRICKS = "\u202e\u2066\u200b\u200d\ufeff\x00\x1b[31m\r\n\u2028"


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(database_url, tmp_path, secret_key, admin_token=ADMIN_TOKEN)


async def _provider(tenant: TenantClient, sandbox: SandboxServer, config: dict[str, Any]) -> None:
    body = {
        "channel": "email",
        "provider": "resend",
        "credentials": {"api_key": "re_live_AdversaryAudit_777"},
        "config": {"base_url": sandbox.provider_base_url("resend"), **config},
    }
    response = await tenant.post("/v1/providers", json=body)
    assert response.status_code == 201, response.text


async def _changes(tenant: TenantClient) -> dict[str, Any]:
    response = await tenant.get("/v1/audit-log")
    assert response.status_code == 200, response.text
    (event,) = response.json()["data"]
    changes: dict[str, Any] = event["changes"]
    return changes


async def test_a_ten_kilobyte_value_with_unicode_tricks_is_cut_and_cleaned(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    hostile = {
        "from_name": "\u202eAcme" + "A" * 10_000,
        "reply_name": "safe" + TRICKS.replace("\x00", "") + "name",
        "k" * 10_000: 1,
        "deep": {"a": {"b": {"c": {"d": {"e": 1}}}}},
        "smtp_password": "hunter2-in-the-config",
    }
    await _provider(tenant, sandbox, hostile)
    config = (await _changes(tenant))["config"]
    assert len(config["from_name"]) == MAX_TEXT_CHARS
    assert config["from_name"].startswith("AcmeAAA") and config["from_name"].endswith("…")
    assert config["reply_name"] == "safe[31mname"
    assert max(len(name) for name in config) <= MAX_NAME_CHARS
    assert config["deep"] == {"a": {"b": "…"}}
    assert config["smtp_password"] == CHANGED


async def test_thousands_of_fields_are_bounded_in_count_and_bytes(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    many = {f"field{i:04}": "x" * 200 for i in range(2_000)}
    await _provider(tenant, sandbox, many)
    changes = await _changes(tenant)
    assert len(orjson.dumps(changes)) <= MAX_CHANGES_BYTES
    shown = changes["config"] if "config" in changes else changes["fields"]
    assert len(shown) <= MAX_FIELDS + 1


def test_values_no_json_can_carry_are_made_storable() -> None:
    nested: dict[str, Any] = {}
    inner = nested
    for _ in range(5_000):
        inner["n"] = {}
        inner = inner["n"]
    changes = bounded_changes(
        {
            "surrogate": "a\ud800b",
            "nul": "a\x00b",
            "huge": 2**200,
            "nan": math.nan,
            "set": {1, 2},
            "bytes": b"\x00raw",
            "list": list(range(10_000)),
            7: "a number as a name",
            "nested": nested,
            "token": "hk_live_" + "s" * 40,
            "free text": "my key is hk_live_" + "s" * 40,
        }
    )
    encoded = orjson.dumps(changes)
    assert len(encoded) <= MAX_CHANGES_BYTES
    assert changes["surrogate"] == "ab" and changes["nul"] == "ab"
    assert changes["huge"] == str(2**200)[:31] + "…"
    assert changes["nan"] is None and changes["set"] == []
    assert changes["bytes"] == "bytes"
    assert len(changes["list"]) == 16
    assert changes["7"] == "a number as a name"
    assert changes["token"] == CHANGED
    assert "s" * 40 not in encoded.decode()


BAD_QUERIES: list[dict[str, Any]] = [
    {"limit": 0},
    {"limit": 201},
    {"limit": "many"},
    {"cursor": "c" * 37},
    {"since": "yesterday"},
    {"since": "9999-12-31T23:59:59-23:59"},
    {"until": "0001-01-01T00:00:00+23:59"},
    {"until": "1" * 5_000},
    {"action": "tenant.deleted"},
    {"action": "x" * 5_000},
]


@pytest.mark.parametrize("params", BAD_QUERIES, ids=lambda p: next(iter(p)))
async def test_the_list_refuses_unbounded_or_malformed_filters(
    tenant: TenantClient, params: dict[str, Any]
) -> None:
    for path, headers in (("/v1/audit-log", tenant.headers), ("/admin/v1/audit-log", ADMIN)):
        response = await tenant.api.get(path, params=params, headers=headers)
        assert response.status_code == 422, (path, params, response.text)
        assert response.json()["error"]["code"] == "validation_error"
        assert len(response.content) < 4_096


async def test_since_after_until_is_refused(tenant: TenantClient) -> None:
    params = {"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}
    response = await tenant.get("/v1/audit-log", params=params)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_the_admin_tenant_filter_is_bounded(tenant: TenantClient) -> None:
    params = {"tenant_id": "t" * 37}
    response = await tenant.api.get("/admin/v1/audit-log", params=params, headers=ADMIN)
    assert response.status_code == 422


async def test_a_forged_request_id_is_never_stored(tenant: TenantClient) -> None:
    forged = "evil id; with spaces " + "A" * 500
    response = await tenant.post(
        "/v1/api-keys", json={"name": "ci"}, headers={"X-Request-Id": forged}
    )
    assert response.status_code == 201
    (event,) = (await tenant.get("/v1/audit-log")).json()["data"]
    assert event["request_id"] == response.headers["x-request-id"]
    assert len(event["request_id"]) == 32 and "evil" not in event["request_id"]
