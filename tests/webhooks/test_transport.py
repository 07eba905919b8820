"""The connect-time guard: resolve once, refuse non-public addresses, connect to the
address that was checked. Nothing here connects anywhere but 127.0.0.1."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from typing import Any

import httpx
import pytest

from homing.providers.transport import AiohttpTransport
from homing.providers.webhook.clients import AddressRefused, guarded_client
from homing.providers.webhook.ssrf import AddressPolicy, IPAddress, parse_networks
from tests.webhooks.receiver import Receiver, Reply

PUBLIC = AddressPolicy()
LOOPBACK_OPEN = AddressPolicy(parse_networks(["127.0.0.0/8"]))


class StubResolver:
    """DNS as the test says; counts lookups."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.lookups: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("no such host")
        return [ipaddress.ip_address(a) for a in self.answers[host]]


class NoNetwork:
    """A socket factory that fails the test if a connection is attempted (and remembers
    that one was)."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    def __call__(self, addrinfo: tuple[Any, ...]) -> socket.socket:
        host, port = addrinfo[4][:2]
        self.attempts.append((host, port))
        pytest.fail(f"a connection to {host}:{port} was attempted")


class RecordingNetwork:
    """A socket factory that records where to; it opens a real socket only for a
    loopback address (the one test server), and refuses anything else."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    def __call__(self, addrinfo: tuple[Any, ...]) -> socket.socket:
        family, kind, proto, _, address = addrinfo
        self.log.append(("connect_tcp", tuple(address[:2])))
        if not ipaddress.ip_address(address[0]).is_loopback:
            raise OSError("stub: only loopback is ever connected to")
        return socket.socket(family, kind, proto)


async def _tls_server(names: list[str | None]) -> asyncio.Server:
    """A loopback TLS listener that records the name each client asks for (SNI) and
    then fails the handshake: it has no certificate to show."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)

    def record(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = record  # type: ignore[assignment]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    return await asyncio.start_server(handler, "127.0.0.1", 0, ssl=context)


PRIVATE_ANSWERS = {
    "loopback.example": ["127.0.0.1"],
    "rfc1918.example": ["10.0.0.7"],
    "cgnat.example": ["100.64.0.9"],
    "metadata.example": ["169.254.169.254"],
    "linklocal.example": ["fe80::1"],
    "ula.example": ["fd00::5"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "multicast.example": ["224.0.0.251"],
    "zero.example": ["0.0.0.0"],
    "mixed.example": ["93.184.216.34", "10.0.0.1"],
}


@pytest.mark.parametrize("host", sorted(PRIVATE_ANSWERS))
async def test_a_host_resolving_to_a_private_address_is_refused_without_connecting(
    host: str,
) -> None:
    resolver = StubResolver(PRIVATE_ANSWERS)
    network = NoNetwork()
    async with guarded_client(PUBLIC, resolver, timeout=1, socket_factory=network) as client:
        with pytest.raises(AddressRefused) as refused:
            await client.post(f"https://{host}/in", content=b"{}")
    assert refused.value.refusal is not None
    assert resolver.lookups == [host]
    assert "10.0.0" not in str(refused.value)  # the address itself is not disclosed
    assert network.attempts == []


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "[::1]", "169.254.169.254", "10.1.1.1", "[::ffff:127.0.0.1]", "127.1"]
)
async def test_literal_addresses_are_checked_without_dns(host: str) -> None:
    resolver = StubResolver({})
    network = NoNetwork()
    async with guarded_client(PUBLIC, resolver, timeout=1, socket_factory=network) as client:
        with pytest.raises(AddressRefused):
            await client.post(f"https://{host}/in", content=b"{}")
    assert resolver.lookups == []
    assert network.attempts == []


async def test_the_checked_address_is_the_one_connected_to_and_tls_verifies_the_name() -> None:
    names: list[str | None] = []
    server = await _tls_server(names)
    port = server.sockets[0].getsockname()[1]
    resolver = StubResolver({"hooks.example.com": ["127.0.0.1"]})
    network = RecordingNetwork()
    async with (
        server,
        guarded_client(LOOPBACK_OPEN, resolver, timeout=2, socket_factory=network) as client,
    ):
        with pytest.raises(httpx.ConnectError):
            await client.post(f"https://hooks.example.com:{port}/in", content=b"{}")
    assert resolver.lookups == ["hooks.example.com"]
    assert network.log == [("connect_tcp", ("127.0.0.1", port))]
    assert names == ["hooks.example.com"]


async def test_a_public_answer_is_connected_to_at_that_address() -> None:
    resolver = StubResolver({"hooks.example.com": ["93.184.216.34"]})
    network = RecordingNetwork()
    async with guarded_client(PUBLIC, resolver, timeout=1, socket_factory=network) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post("https://hooks.example.com/in", content=b"{}")
    assert network.log == [("connect_tcp", ("93.184.216.34", 443))]


async def test_an_unresolvable_host_is_a_connection_error() -> None:
    network = NoNetwork()
    async with guarded_client(PUBLIC, StubResolver({}), timeout=1, socket_factory=network) as c:
        with pytest.raises(httpx.ConnectError):
            await c.post("https://nowhere.example/in", content=b"{}")
    assert network.attempts == []


async def test_unix_sockets_are_refused() -> None:
    network = NoNetwork()
    async with guarded_client(PUBLIC, StubResolver({}), timeout=1, socket_factory=network) as c:
        with pytest.raises(AddressRefused):
            await c.post("unix:///var/run/docker.sock", content=b"{}")
    assert network.attempts == []


async def test_loopback_is_refused_for_real_until_its_network_is_allowed(
    receiver: Receiver,
) -> None:
    resolver = StubResolver({"receiver.test": ["127.0.0.1"]})
    async with guarded_client(PUBLIC, resolver, timeout=2) as client:
        with pytest.raises(AddressRefused):
            await client.post(f"{receiver.url}/hook", content=b"{}")
        with pytest.raises(AddressRefused):
            await client.post(f"http://receiver.test:{receiver.port}/hook", content=b"{}")
    assert receiver.requests == []
    async with guarded_client(LOOPBACK_OPEN, resolver, timeout=2) as client:
        response = await client.post(f"http://receiver.test:{receiver.port}/hook", content=b"{}")
    assert response.status_code == 200
    [request] = receiver.requests
    assert request.headers["host"] == f"receiver.test:{receiver.port}"


async def test_redirects_are_not_followed(receiver: Receiver) -> None:
    receiver.reply(Reply(302, {"Location": "http://169.254.169.254/latest/meta-data/"}))
    async with guarded_client(LOOPBACK_OPEN, StubResolver({}), timeout=2) as client:
        response = await client.post(f"{receiver.url}/hook", content=b"{}")
    assert response.status_code == 302
    assert len(receiver.requests) == 1


async def test_webhooks_go_through_the_one_outbound_stack_and_keep_no_cookie(
    receiver: Receiver,
) -> None:
    receiver.reply(Reply(200, {"Set-Cookie": "session=tenant-a; Path=/"}))
    async with guarded_client(LOOPBACK_OPEN, StubResolver({}), timeout=2) as client:
        assert isinstance(client._transport, AiohttpTransport)
        await client.post(f"{receiver.url}/hook", content=b"{}")
        await client.post(f"{receiver.url}/hook", content=b"{}")
    assert [r.headers.get("cookie") for r in receiver.requests] == [None, None]
