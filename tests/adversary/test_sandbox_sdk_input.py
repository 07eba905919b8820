"""A hostile client against what the sandbox now reads as the vendors do: Telegram's
parameters from the query string and form bodies, Vonage's ``page_size``. Each is
bounded (a chat id of at most 20 digits, a page size of at most 3) and refused the way
the vendor refuses it, with nothing recorded."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from homing.sandbox import SandboxServer

TOKEN = "123456:AAHsandboxsandboxsandboxsandbox_t"


@pytest.fixture
async def server() -> AsyncIterator[SandboxServer]:
    async with SandboxServer(port=0, smtp_port=None) as sandbox:
        yield sandbox


async def _send(server: SandboxServer, **request: Any) -> httpx.Response:
    url = f"{server.provider_base_url('telegram')}/bot{TOKEN}/sendMessage"
    method = request.pop("method", "POST")
    async with httpx.AsyncClient() as http:
        return await http.request(method, url, **request)


@pytest.mark.parametrize(
    ("request_", "description"),
    [
        ({"method": "GET", "params": {"chat_id": "9" * 10_000, "text": "hi"}}, "chat not found"),
        ({"data": {"chat_id": "-" * 5000, "text": "hi"}}, "chat not found"),
        ({"data": {"chat_id": "4242", "text": "x" * 5000}}, "message is too long"),
        # A file is no text: file parts are skipped, whatever their name.
        ({"data": {"chat_id": "4242"}, "files": {"text": ("t.txt", b"hi")}}, "text is empty"),
        ({"content": b"[1, 2]", "headers": {"Content-Type": "application/json"}}, "JSON"),
        ({"content": b"\xff\xfe" * 1000, "headers": {"Content-Type": "text/plain"}}, "JSON"),
    ],
)
async def test_telegram_parameters_are_bounded_and_refused_as_telegram_does(
    server: SandboxServer, request_: dict[str, Any], description: str
) -> None:
    response = await _send(server, **request_)
    assert response.status_code == 400, response.text
    assert response.json()["ok"] is False and description in response.json()["description"]
    assert server.state.recorder.messages("telegram") == []


async def test_many_form_fields_are_read_once_and_the_last_of_a_name_wins(
    server: SandboxServer,
) -> None:
    fields = [(f"k{i}", "v") for i in range(20_000)]
    body = urlencode([*fields, ("chat_id", "1"), ("chat_id", "4242"), ("text", "hi")])
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    response = await _send(server, content=body, headers=headers)
    assert response.status_code == 200, response.text
    [recorded] = server.state.recorder.messages("telegram")
    assert recorded.to == ("4242",)


async def test_the_body_wins_over_the_query_string(server: SandboxServer) -> None:
    response = await _send(
        server, params={"chat_id": "4031", "text": "q"}, data={"chat_id": "4242", "text": "b"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["chat"]["id"] == 4242


@pytest.mark.parametrize("size", ["9" * 5000, "0", "-1", "101", "1e3", ""])
async def test_a_vonage_page_size_out_of_bounds_is_the_default(
    server: SandboxServer, size: str
) -> None:
    auth = base64.b64encode(b"abcd1234:sandbox-secret").decode()
    async with httpx.AsyncClient(base_url=server.provider_base_url("vonage")) as http:
        response = await http.get(
            "/v2/applications",
            params={"page_size": size},
            headers={"Authorization": f"Basic {auth}"},
        )
    assert response.status_code == 200, response.text
    assert response.json()["page_size"] == 100
