"""The connect-time guard: resolve once, refuse non-public addresses, connect to the
address that was checked. Nothing here connects anywhere but 127.0.0.1."""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx
import pytest

from homing.providers.webhook.ssrf import AddressPolicy, IPAddress, parse_networks
from homing.providers.webhook.transport import (
    AddressRefused,
    GuardedBackend,
    guarded_client,
)
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


class NoNetwork(httpcore.AsyncNetworkBackend):
    """Fails the test if a connection is attempted (and remembers that one was)."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        pytest.fail(f"a connection to {host}:{port} was attempted")

    async def sleep(self, seconds: float) -> None:  # pragma: no cover
        pass


class _RecordingStream(httpcore.AsyncNetworkStream):
    def __init__(self, log: list[tuple[str, Any]]) -> None:
        self.log = log

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.log.append(("start_tls", server_hostname))
        raise httpcore.ConnectError("stub: no TLS here")

    async def aclose(self) -> None:
        pass


class RecordingNetwork(httpcore.AsyncNetworkBackend):
    """Pretends to connect: records where to, and stops at the TLS handshake."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.log.append(("connect_tcp", (host, port)))
        return _RecordingStream(self.log)

    async def sleep(self, seconds: float) -> None:  # pragma: no cover
        pass


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
    backend = GuardedBackend(PUBLIC, resolver, NoNetwork())
    with pytest.raises(AddressRefused) as refused:
        await backend.connect_tcp(host, 443)
    assert refused.value.refusal is not None
    assert resolver.lookups == [host]
    assert "10.0.0" not in str(refused.value)  # the address itself is not disclosed


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "::1", "169.254.169.254", "10.1.1.1", "::ffff:127.0.0.1"]
)
async def test_literal_addresses_are_checked_without_dns(host: str) -> None:
    resolver = StubResolver({})
    backend = GuardedBackend(PUBLIC, resolver, NoNetwork())
    with pytest.raises(AddressRefused):
        await backend.connect_tcp(host, 443)
    assert resolver.lookups == []


async def test_the_checked_address_is_the_one_connected_to_and_tls_verifies_the_name() -> None:
    resolver = StubResolver({"hooks.example.com": ["93.184.216.34"]})
    network = RecordingNetwork()
    async with guarded_client(PUBLIC, resolver, timeout=1, inner=network) as client:
        with pytest.raises(httpx.ConnectError):
            await client.post("https://hooks.example.com/in", content=b"{}")
    assert resolver.lookups == ["hooks.example.com"]
    assert network.log == [
        ("connect_tcp", ("93.184.216.34", 443)),
        ("start_tls", "hooks.example.com"),
    ]


async def test_an_unresolvable_host_is_a_connection_error() -> None:
    backend = GuardedBackend(PUBLIC, StubResolver({}), NoNetwork())
    with pytest.raises(httpcore.ConnectError):
        await backend.connect_tcp("nowhere.example", 443)


async def test_unix_sockets_are_refused() -> None:
    backend = GuardedBackend(PUBLIC, StubResolver({}), NoNetwork())
    with pytest.raises(AddressRefused):
        await backend.connect_unix_socket("/var/run/docker.sock")


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
