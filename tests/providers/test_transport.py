"""The aiohttp transport keeps "failed before sending" and "may have been sent" apart."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from homing.providers.transport import AiohttpTransport, build_client

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _serve(handler: Handler) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head + await reader.readexactly(length)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with build_client(0.5, max_connections=10) as http:
        yield http


async def test_a_normal_exchange_round_trips(client: httpx.AsyncClient) -> None:
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        body = b'{"id": "m-1"}'
        writer.write(
            b"HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nX-Message-Id: abc\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        await writer.drain()
        writer.close()

    server, url = await _serve(handler)
    async with server:
        response = await client.post(url + "/v3/mail/send", json={"a": 1}, headers={"X-K": "v"})
    assert response.status_code == 202
    assert response.headers["x-message-id"] == "abc"
    assert response.json() == {"id": "m-1"}
    assert b"POST /v3/mail/send" in seen[0] and b'{"a":1}' in seen[0].replace(b" ", b"")
    assert b"x-k: v" in seen[0].lower()


async def test_redirects_are_not_followed(client: httpx.AsyncClient) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(
            b"HTTP/1.1 302 Found\r\nLocation: http://10.0.0.1/\r\nContent-Length: 0\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    server, url = await _serve(handler)
    async with server:
        response = await client.get(url)
    assert response.status_code == 302


# How a request is sent: a JSON body goes the direct way (ProviderClient), raw content
# through httpx and the transport. Both must fail alike.
WAYS = pytest.mark.parametrize(
    "body", [{"json": {"a": 1}}, {"content": b"x"}], ids=["direct", "httpx"]
)


@WAYS
async def test_a_refused_connection_is_a_connect_error(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(httpx.ConnectError):
        await client.post(f"http://127.0.0.1:{port}/", **body)


@WAYS
async def test_a_silent_server_is_a_read_timeout(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    release = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await release.wait()
        writer.close()

    server, url = await _serve(handler)
    async with server:
        with pytest.raises(httpx.ReadTimeout):
            await client.post(url, **body)
        release.set()


@WAYS
async def test_a_disconnect_after_the_request_is_not_a_connect_error(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.close()

    server, url = await _serve(handler)
    async with server:
        with pytest.raises(httpx.TransportError) as caught:
            await client.post(url, **body)
    assert isinstance(caught.value, httpx.RemoteProtocolError | httpx.ReadError)


async def test_a_cookie_a_provider_sets_never_travels_with_a_later_request(
    client: httpx.AsyncClient,
) -> None:
    """One client carries every tenant's calls: no cookie may pass from one to the next."""
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        writer.write(
            b"HTTP/1.1 200 OK\r\nSet-Cookie: session=tenant-a-secret; Path=/\r\n"
            b"Connection: close\r\n"
            b"Content-Length: 0\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    server, url = await _serve(handler)
    url = url.replace("127.0.0.1", "localhost")  # a jar may refuse cookies of an address
    async with server:
        for _ in range(3):
            assert (await client.post(url + "/send", json={})).status_code == 200
    assert len(seen) == 3
    assert not any(b"cookie:" in request.lower() for request in seen)
    assert len(client.cookies.jar) == 0


async def test_the_direct_way_sends_what_httpx_would(client: httpx.AsyncClient) -> None:
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        await writer.drain()
        writer.close()

    payload = {"to": "Ada <ada@example.com>", "subject": "Grüße", "n": [1, 2.5, None]}
    headers = {"Authorization": "Bearer k", "User-Agent": "homing/test"}
    server, url = await _serve(handler)
    through_httpx = httpx.AsyncClient(transport=AiohttpTransport(), headers=client.headers)
    async with server, through_httpx:
        direct = await client.post(url + "/emails", json=payload, headers=headers)
        indirect = await through_httpx.post(url + "/emails", json=payload, headers=headers)
    assert direct.status_code == indirect.status_code == 200
    assert direct.json() == indirect.json() == {}

    def parts(raw: bytes) -> tuple[bytes, set[bytes], bytes]:
        head, _, body = raw.partition(b"\r\n\r\n")
        first, *lines = head.split(b"\r\n")
        return first, {line.lower() for line in lines}, body

    assert parts(seen[0]) == parts(seen[1])
