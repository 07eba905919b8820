"""Which host names Homing answers to: the ``Host`` header, read once, judged without I/O.

A request's ``Host`` header is the caller's text. Homing never builds a link that
leaves by mail or notice from it (those use ``HOMING_PUBLIC_URL``), and it answers only
requests that name a host it is: a loopback name or address (``localhost``,
``*.localhost``, ``127.0.0.0/8``, ``::1``) on any port, so the demo, the tests and the
sandbox's callbacks keep working; ``HOMING_PUBLIC_URL``'s host; and the names of
``HOMING_ALLOWED_HOSTS`` (a proxy that passes on another name, an address on a LAN).
Ports are not compared: a proxy may forward on any. A request with no ``Host`` at all
(HTTP/1.0) names none, and the URL Starlette builds for it is the server's own.

Everything here is pure and linear in the text, which is bounded first.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

__all__ = ["MAX_ALLOWED_HOSTS", "AllowedHosts", "host_name", "parse_allowed_hosts"]

MAX_ALLOWED_HOSTS: Final = 50
MAX_HOST_HEADER: Final = 270  # a 253-character name, ":" and a port, or "[" IPv6 "]:port"
_NAME_CHARACTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")
_DIGITS: Final = frozenset("0123456789")


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _name(text: str) -> str | None:
    """``text`` as a lower-case host name without the root's trailing dot, when it is
    one: labels of letters, digits, ``-`` and ``_`` (IDNA names arrive as ``xn--``)."""
    name = text.lower().removesuffix(".")
    labels = name.split(".")
    if not 0 < len(name) <= 253 or not _NAME_CHARACTERS.issuperset(name):
        return None
    if any(not 0 < len(label) <= 63 for label in labels):
        return None
    return name


def host_name(header: str) -> str | None:
    """The host a ``Host`` header names, without its port, in lower case (an IPv6
    address without brackets); None when the header is no ``host[:port]``."""
    if len(header) > MAX_HOST_HEADER:
        return None
    if header.startswith("["):
        inside, bracket, port = header[1:].partition("]")
        address = _address(inside) if bracket else None
        if address is None or address.version != 6 or not _port(port):
            return None
        return str(address)
    host, colon, port = header.partition(":")
    if colon and not _port(colon + port):
        return None
    address = _address(host)
    return str(address) if address is not None else _name(host)


def _port(text: str) -> bool:
    """Whether ``text`` is nothing or ``:`` and a port number."""
    digits = text[1:]
    return text == "" or (text[0] == ":" and 0 < len(digits) <= 5 and _DIGITS.issuperset(digits))


def _loopback(host: str) -> bool:
    address = _address(host)
    if address is not None:
        return address.is_loopback
    return host == "localhost" or host.endswith(".localhost")


def parse_allowed_hosts(text: str) -> frozenset[str]:
    """HOMING_ALLOWED_HOSTS: comma-separated host names or IP addresses, without ports;
    ValueError for a malformed one or more than ``MAX_ALLOWED_HOSTS``."""
    entries = [entry.strip() for entry in text.split(",") if entry.strip()]
    if len(entries) > MAX_ALLOWED_HOSTS:
        raise ValueError(f"HOMING_ALLOWED_HOSTS names at most {MAX_ALLOWED_HOSTS} hosts")
    hosts = set()
    for entry in entries:
        bracketed = f"[{entry}]" if ":" in entry else entry
        host = host_name(bracketed)
        if host is None:
            raise ValueError("HOMING_ALLOWED_HOSTS: each entry is a host name or an IP address")
        hosts.add(host)
    return frozenset(hosts)


@dataclass(frozen=True, slots=True)
class AllowedHosts:
    """The hosts a request may name: loopback always, and ``names``."""

    names: frozenset[str]

    @classmethod
    def of(cls, public_url: str | None, allowed: Iterable[str]) -> AllowedHosts:
        """The public URL's host (when set) and the ``allowed`` names."""
        names = set(allowed)
        public = urlsplit(public_url).netloc.rpartition("@")[2] if public_url else ""
        host = host_name(public) if public else None
        if host is not None:
            names.add(host)
        return cls(frozenset(names))

    def allows(self, header: str) -> bool:
        """Whether a request whose ``Host`` header is ``header`` is for this Homing."""
        host = host_name(header)
        return host is not None and (host in self.names or _loopback(host))
