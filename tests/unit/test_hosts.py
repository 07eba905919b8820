"""The Host header, read once (``homing.hosts``): a port is no part of the name, case and
the root's dot are folded, anything that is not ``host[:port]`` names no host, and only
loopback, the public URL's host and HOMING_ALLOWED_HOSTS are allowed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from homing.hosts import MAX_ALLOWED_HOSTS, AllowedHosts, host_name, parse_allowed_hosts
from homing.settings import Settings


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("homing.example", "homing.example"),
        ("Homing.Example.:443", "homing.example"),
        ("127.0.0.1:8000", "127.0.0.1"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
    ],
)
def test_the_host_of_a_header_is_its_name_without_the_port(header: str, host: str) -> None:
    assert host_name(header) == host


@pytest.mark.parametrize(
    "header",
    [
        "",
        "::1",
        "[::1",
        "[127.0.0.1]",
        "[::1]x",
        "evil.example:",
        "evil.example:80:80",
        "evil.example:port",
        "evil.example:123456",
        "evil example",
        "evil.example/path",
        "user@evil.example",
        "a..b",
        "évil.example",
        "a" * 64 + ".example",
        "a." * 200,
    ],
)
def test_what_is_not_host_and_port_names_no_host(header: str) -> None:
    assert host_name(header) is None


def test_loopback_the_public_host_and_the_list_are_allowed_and_nothing_else() -> None:
    hosts = AllowedHosts.of("https://homing.example/base", {"homing.lan", "10.1.2.3"})
    for header in ("localhost:1", "api.localhost", "127.9.9.9", "[::1]:80", "homing.example"):
        assert hosts.allows(header), header
    for header in ("homing.lan:8080", "HOMING.LAN", "10.1.2.3:80"):
        assert hosts.allows(header), header
    for header in ("evil.example", "homing.example.evil", "10.1.2.4", "localhost.evil", "127.1"):
        assert not hosts.allows(header), header


def test_a_huge_header_is_refused_on_its_length() -> None:
    assert host_name("a" * 10_000_000) is None


def test_the_setting_is_checked_at_startup_and_bounded() -> None:
    assert parse_allowed_hosts(" homing.lan, 10.1.2.3 ,::1,") == {"homing.lan", "10.1.2.3", "::1"}
    for bad in ("homing.lan:8080", "http://homing.lan", "a b", "*"):
        with pytest.raises(ValidationError):
            Settings(_env_file=None, allowed_hosts=bad)  # type: ignore[call-arg]
    many = ",".join(f"h{n}.example" for n in range(MAX_ALLOWED_HOSTS + 1))
    with pytest.raises(ValidationError, match="at most"):
        Settings(_env_file=None, allowed_hosts=many)  # type: ignore[call-arg]
