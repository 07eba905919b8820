"""A hostile caller of a Telegram webhook URL, or a hostile tenant setting it up: bodies
past Telegram's size, JSON nested to exhaust a parser, a ten-kilobyte secret token,
chat ids that are no integer. Each is refused, or journaled and quarantined, and
suppresses nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from homing.sandbox.server import SandboxServer
from tests.chat_helpers import register_telegram
from tests.conftest import TenantClient

TOKEN = "hostile-test_token-0123456789"
HEADER = "X-Telegram-Bot-Api-Secret-Token"


async def _url(tenant: TenantClient, sandbox: SandboxServer) -> str:
    account = await register_telegram(tenant, sandbox)
    response = await tenant.api.put(
        f"/v1/providers/{account['id']}/inbound",
        json={"secret_token": TOKEN},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.text
    path: str = response.json()["path"]
    return path


def _blocked(chat_id: Any, update_id: int = 1) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "my_chat_member": {
            "chat": {"id": chat_id, "type": "private"},
            "date": 1_700_000_000,
            "new_chat_member": {"status": "kicked"},
        },
    }


async def _post(tenant: TenantClient, url: str, body: bytes | str) -> Any:
    return await tenant.api.post(url, content=body, headers={HEADER: TOKEN})


async def _suppressions(tenant: TenantClient) -> list[Any]:
    data: list[Any] = (await tenant.get("/v1/suppressions")).json()["data"]
    return data


async def test_a_body_past_64_kib_is_refused_before_it_is_parsed(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    url = await _url(tenant, sandbox)
    padded = _blocked(4242)
    padded["padding"] = "x" * 70_000  # far below HOMING_INBOUND_MAX_BODY_BYTES (1 MiB)
    response = await _post(tenant, url, json.dumps(padded))
    assert response.status_code == 413, response.text
    assert await _suppressions(tenant) == []
    # What is refused was not journaled: the same update_id, small, is new and applied.
    small = await _post(tenant, url, json.dumps(_blocked(4242)))
    assert (small.json()["applied"], small.json()["duplicates"]) == (1, 0)


@pytest.mark.parametrize(
    "body",
    [
        "[" * 60_000,
        '{"update_id": 1, "message": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}",
        json.dumps({"update_id": 1, "my_chat_member": [[[[[[[[[[[]]]]]]]]]]]}),
        json.dumps({"update_id": 2**70}),
    ],
)
async def test_deep_or_strange_json_is_quarantined(
    tenant: TenantClient, sandbox: SandboxServer, body: str
) -> None:
    url = await _url(tenant, sandbox)
    response = await _post(tenant, url, body)
    assert response.status_code == 200, response.text
    assert (response.json()["received"], response.json()["quarantined"]) == (1, 1)
    assert await _suppressions(tenant) == []


async def test_a_ten_kilobyte_secret_token_is_refused_when_set_and_when_sent(
    tenant: TenantClient, sandbox: SandboxServer
) -> None:
    account = await register_telegram(tenant, sandbox)
    path = f"/v1/providers/{account['id']}/inbound"
    for token in ("a" * 10_000, "a" * 257, "no spaces allowed", "tok€n", ""):
        response = await tenant.api.put(path, json={"secret_token": token}, headers=tenant.headers)
        assert response.status_code == 422, response.text
        assert token[:50] not in response.text or not token
    url = await _url(tenant, sandbox)
    for header in ("a" * 10_000, TOKEN + "a" * 10_000):
        response = await tenant.api.post(
            url, content=json.dumps(_blocked(4242)), headers={HEADER: header}
        )
        assert response.status_code == 401, response.text
    assert await _suppressions(tenant) == []


@pytest.mark.parametrize("chat_id", ["4242", "4242 OR 1=1", 4242.5, True, 10**30, [4242], None])
async def test_a_chat_id_that_is_no_integer_suppresses_nothing(
    tenant: TenantClient, sandbox: SandboxServer, chat_id: Any
) -> None:
    url = await _url(tenant, sandbox)
    response = await _post(tenant, url, json.dumps(_blocked(chat_id)))
    assert response.status_code == 200, response.text
    assert (response.json()["received"], response.json()["quarantined"]) == (1, 1)
    assert await _suppressions(tenant) == []
