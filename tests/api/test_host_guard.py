"""The host guard (``homing.api.middleware.host_guard``) is the first gate: a refused request never
reaches the app behind it (no body read, no session, no database), and two Host headers
are one too many."""

from __future__ import annotations

import json

from starlette.responses import PlainTextResponse
from starlette.types import Message, Receive, Scope, Send

from homing.api.middleware.host_guard import HostGuard
from homing.console.routing import refusal_page
from homing.hosts import AllowedHosts


class Behind:
    """The app behind the guard: records that it was reached."""

    def __init__(self) -> None:
        self.reached = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.reached += 1
        await PlainTextResponse("behind")(scope, receive, send)


async def _call(path: str, *hosts: bytes) -> tuple[Behind, int, bytes, dict[bytes, bytes]]:
    behind = Behind()
    guard = HostGuard(behind, AllowedHosts.of(None, {"homing.lan"}), refusal_page)
    sent: list[Message] = []

    async def receive() -> Message:
        raise AssertionError("the guard read the body")

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", host) for host in hosts],
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
    }
    await guard(scope, receive, send)
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return behind, start["status"], body, dict(start["headers"])


async def test_a_refused_host_never_reaches_the_app_or_its_body() -> None:
    behind, status, body, headers = await _call("/v1/email", b"evil.example")
    assert behind.reached == 0 and status == 400
    assert json.loads(body)["error"]["code"] == "host_not_allowed"
    behind, status, body, headers = await _call("/t/x/users/invite", b"evil.example")
    assert behind.reached == 0 and status == 400
    assert headers[b"content-type"].startswith(b"text/html") and b"Wrong address" in body


async def test_two_host_headers_are_refused_even_when_one_is_allowed() -> None:
    behind, status, _, _ = await _call("/sign-in", b"127.0.0.1", b"evil.example")
    assert behind.reached == 0 and status == 400


async def test_an_allowed_host_a_probe_and_no_host_at_all_pass() -> None:
    for path, hosts in (("/sign-in", (b"homing.lan:80",)), ("/healthz", (b"evil",)), ("/", ())):
        behind, status, _, _ = await _call(path, *hosts)
        assert behind.reached == 1 and status == 200, path
