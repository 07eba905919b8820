"""The sandbox's webhook receiver over real HTTP: ``POST /hooks/{name}`` records the
body and the signature headers, ``GET /_sandbox/hooks`` lists them (by name), a body
past 1 MiB is 413 and not kept, and reset forgets them."""

from __future__ import annotations

import httpx

from homing.sandbox import SandboxServer
from homing.sandbox.hook_sink import MAX_BODY


async def test_a_delivery_is_recorded_with_its_headers_and_listed_by_name(
    sandbox: SandboxServer,
) -> None:
    headers = {
        "webhook-id": "msg_1",
        "webhook-signature": "v1,abc",
        "X-Webhook-Event": "order.created",
        "Authorization": "Bearer not-kept",
    }
    async with httpx.AsyncClient(base_url=sandbox.base_url, timeout=5) as client:
        first = await client.post("/hooks/orders", content=b'{"order":42}', headers=headers)
        await client.post("/hooks/other/deeper", content=b"{}")
        orders = (await client.get("/_sandbox/hooks", params={"name": "orders"})).json()
        every = (await client.get("/_sandbox/hooks")).json()
    assert first.status_code == 200 and first.json() == {"ok": True}
    [hook] = orders
    assert hook["body"] == '{"order":42}'
    # What a receiver checks, and nothing else (no Authorization).
    assert hook["headers"] == {
        "webhook-id": "msg_1",
        "webhook-signature": "v1,abc",
        "x-webhook-event": "order.created",
    }
    assert [h["name"] for h in every] == ["orders", "other/deeper"]


async def test_a_body_past_the_bound_is_413_and_not_kept_and_reset_forgets(
    sandbox: SandboxServer,
) -> None:
    async with httpx.AsyncClient(base_url=sandbox.base_url, timeout=5) as client:
        huge = await client.post("/hooks/big", content=b"x" * (MAX_BODY + 1))
        kept = await client.post("/hooks/small", content=b"{}")
        assert kept.status_code == 200
        assert huge.status_code == 413
        assert [h["name"] for h in (await client.get("/_sandbox/hooks")).json()] == ["small"]
        assert (await client.post("/_sandbox/reset")).status_code in (200, 204)
        assert (await client.get("/_sandbox/hooks")).json() == []
