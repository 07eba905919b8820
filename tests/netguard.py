"""A safety net for tests that let generated input choose where Homing connects.

Fuzzed provider configs and webhook URLs name arbitrary hosts. ``loopback_only``
refuses, inside the test process, every name resolution and connection that is not
to the loopback range (or a Unix socket), so no generated request can leave the machine.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class NonLoopbackRefused(OSError):
    """A test tried to reach an address outside the loopback range."""


def _is_loopback(host: object) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").split("%", 1)[0].lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse non-loopback resolution and connections for the rest of the test."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_loopback(host):
            raise socket.gaierror(socket.EAI_NONAME, f"test guard: {host!r} is not loopback")
        return real_getaddrinfo(host, *args, **kwargs)

    def allowed(sock: socket.socket, address: Any) -> bool:
        return sock.family == socket.AF_UNIX or _is_loopback(address[0])

    def connect(sock: socket.socket, address: Any) -> None:
        if not allowed(sock, address):
            raise NonLoopbackRefused(f"test guard: {address!r} is not loopback")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if not allowed(sock, address):
            raise NonLoopbackRefused(f"test guard: {address!r} is not loopback")
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
