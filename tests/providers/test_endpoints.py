"""The provider endpoint policy, its resolver and the client's bounds
(docs/architecture.md, "Provider endpoints")."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import httpx
import pytest

from homing.dispatch.sandbox_guard import SandboxGuard
from homing.errors import EndpointRefused
from homing.providers.endpoints import EndpointPolicy
from homing.providers.guard import EndpointGuard
from homing.providers.transport import MAX_RESPONSE_BYTES, build_client
from homing.providers.webhook.ssrf import IPAddress, parse_networks

SANDBOX = "http://127.0.0.1:8025"


def _policy(networks: str = "", sandbox: tuple[str, ...] = (SANDBOX,)) -> EndpointPolicy:
    return EndpointPolicy(parse_networks(networks.split(",")), SandboxGuard(sandbox))


def _reason(call: object) -> str:
    assert callable(call)
    with pytest.raises(EndpointRefused) as refused:
        call()
    reason: str = refused.value.details["reason"]
    return reason


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("sendgrid", "https://api.sendgrid.com"),
        ("sendgrid", "https://api.eu.sendgrid.com/"),
        ("sendgrid", "https://API.SendGrid.com:443"),
        ("resend", "https://api.resend.com"),
        ("postmark", "https://api.postmarkapp.com"),
        ("mailgun", "https://api.eu.mailgun.net"),
        ("resend", SANDBOX + "/resend"),
    ],
)
def test_official_hosts_and_the_sandbox_are_allowed(provider: str, url: str) -> None:
    _policy().check_url(url, provider)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://api.sendgrid.com", "https_required"),
        ("https://api.sendgrid.com:444", "port"),
        ("https://api.mailgun.net", "other_vendor"),
        ("https://127.0.0.1:8025/sendgrid", "not_official"),  # the sandbox, other scheme
        ("http://127.0.0.1:8026/sendgrid", "not_official"),  # the sandbox host, other port
        ("https://sendgrid.example", "not_official"),
        ("http://user:pw@api.sendgrid.com", "credentials"),
        ("gopher://api.sendgrid.com", "scheme"),
        ("http://127.1:8025", "host"),
        ("http://2130706433:8025", "host"),
    ],
)
def test_everything_else_is_refused_without_an_allowance(url: str, reason: str) -> None:
    assert _reason(lambda: _policy().check_url(url, "sendgrid")) == reason


def test_allowed_networks_open_literals_inside_them_only() -> None:
    policy = _policy("127.0.0.0/8")
    policy.check_url("http://127.0.0.1:9/x", "sendgrid")
    policy.check_url("http://relay.internal:9/x", "sendgrid")  # judged when it resolves
    assert _reason(lambda: policy.check_url("http://10.0.0.1/", "sendgrid")) == "private"
    assert _reason(lambda: policy.check_url("http://[::1]/", "sendgrid")) == "loopback"
    assert _reason(lambda: policy.check_url("http://8.8.8.8/", "sendgrid")) == (
        "not_in_allowed_networks"
    )


def test_a_base_url_with_a_query_is_refused_but_a_request_with_one_is_not() -> None:
    policy = _policy()
    config = {"base_url": SANDBOX + "/mailgun?x=1"}
    assert _reason(lambda: policy.check_account("mailgun", {}, config)) == "malformed"
    policy.check_url(SANDBOX + "/mailgun/v3/domains?limit=1")


def test_smtp_hosts_must_be_public_or_allowed() -> None:
    policy = _policy(sandbox=("smtp://127.0.0.1:2525",))
    policy.check_server("smtp.example.com", 587)
    policy.check_server("127.0.0.1", 2525)
    assert _reason(lambda: policy.check_server("127.0.0.1", 25)) == "loopback"
    assert _reason(lambda: policy.check_server("localhost", 2525)) == "loopback"
    assert _reason(lambda: policy.check_server("192.168.1.1", 25)) == "private"
    assert _reason(lambda: policy.check_server("mail.example.com/x", 25)) == "host"
    _policy("192.168.0.0/16").check_server("192.168.1.1", 25)


class StubResolver:
    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        if host not in self.answers:
            raise OSError("no such name")
        return [ipaddress.ip_address(self.answers[host])]


async def test_the_resolver_checks_every_address_before_a_connection() -> None:
    stub = StubResolver(
        {"api.sendgrid.com": "10.1.2.3", "relay.internal": "127.0.0.1", "far.example": "8.8.8.8"}
    )
    resolver = EndpointGuard(_policy("127.0.0.0/8"), stub).resolver()
    with pytest.raises(EndpointRefused):  # a poisoned answer for an official host
        await resolver.resolve("api.sendgrid.com", 443)
    with pytest.raises(EndpointRefused):  # not official: allowed networks only
        await resolver.resolve("far.example", 443)
    [result] = await resolver.resolve("relay.internal", 8080, socket.AF_INET)
    assert (result["host"], result["hostname"], result["port"]) == (
        "127.0.0.1",
        "relay.internal",
        8080,
    )
    with pytest.raises(OSError):
        await resolver.resolve("unknown.example", 443)


async def _serve(reply: bytes) -> tuple[asyncio.Server, str]:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        try:
            writer.write(reply)
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_a_body_is_read_up_to_the_cap() -> None:
    size = 4 * MAX_RESPONSE_BYTES
    server, url = await _serve(
        f"HTTP/1.1 500 Oops\r\nContent-Length: {size}\r\n\r\n".encode() + b"x" * size
    )
    async with server, build_client(2, max_connections=2) as http:
        for way in ({"json": {}}, {"content": b"x"}):
            response = await http.post(url + "/send", **way)  # type: ignore[arg-type]
            assert response.status_code == 500
            assert len(response.content) == MAX_RESPONSE_BYTES


async def test_a_guarded_client_refuses_a_redirect_and_what_the_policy_refuses() -> None:
    server, url = await _serve(
        b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/\r\nContent-Length: 0\r\n\r\n"
    )
    guard = EndpointGuard(_policy("127.0.0.0/8"), StubResolver({}))
    async with server, build_client(2, max_connections=2, guard=guard) as http:
        with pytest.raises(EndpointRefused) as redirected:
            await http.get(url + "/v3/scopes")
        assert redirected.value.details["reason"] == "redirect"
        with pytest.raises(EndpointRefused):
            await http.post("http://10.0.0.1/send", json={})
        with pytest.raises(httpx.ConnectError):  # the name does not resolve: transient
            await http.post("http://nowhere.internal/send", json={})


async def test_smtp_connects_only_to_the_address_it_checked() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    stub = StubResolver({"mail.example": "10.0.0.1", "relay.example": "127.0.0.1"})
    async with server:
        strict = EndpointGuard(_policy(), stub)
        with pytest.raises(EndpointRefused):
            await strict.open_server("mail.example", port, 2)
        with pytest.raises(EndpointRefused):
            await strict.open_server("relay.example", port, 2)
        allowed = EndpointGuard(_policy("127.0.0.0/8"), stub)
        with await allowed.open_server("relay.example", port, 2) as sock:
            assert sock.getpeername() == ("127.0.0.1", port)
