"""The SSRF guard's pure parts: the address classifier and the URL check."""

from __future__ import annotations

import ipaddress

import pytest
from pydantic import ValidationError

from homing.errors import UrlRefused
from homing.providers.webhook.ssrf import (
    AddressPolicy,
    Refusal,
    UrlPolicy,
    check_url,
    classify,
    ends_in_number,
    literal_address,
    parse_networks,
    valid_hostname,
)
from homing.settings import Settings

REFUSED = [
    ("127.0.0.1", Refusal.LOOPBACK),
    ("127.255.255.254", Refusal.LOOPBACK),
    ("::1", Refusal.LOOPBACK),
    ("10.0.0.1", Refusal.PRIVATE),
    ("172.16.0.1", Refusal.PRIVATE),
    ("172.31.255.255", Refusal.PRIVATE),
    ("192.168.1.1", Refusal.PRIVATE),
    ("100.64.0.1", Refusal.CARRIER_GRADE_NAT),
    ("100.127.255.254", Refusal.CARRIER_GRADE_NAT),
    ("169.254.169.254", Refusal.METADATA),
    ("fd00:ec2::254", Refusal.METADATA),
    ("169.254.1.1", Refusal.LINK_LOCAL),
    ("fe80::1", Refusal.LINK_LOCAL),
    ("fe80::1%eth0", Refusal.LINK_LOCAL),
    ("fc00::1", Refusal.UNIQUE_LOCAL),
    ("fd12:3456::1", Refusal.UNIQUE_LOCAL),
    ("::ffff:127.0.0.1", Refusal.IPV4_MAPPED),
    ("::ffff:8.8.8.8", Refusal.IPV4_MAPPED),
    ("::127.0.0.1", Refusal.IPV4_MAPPED),
    ("224.0.0.1", Refusal.MULTICAST),
    ("239.255.255.250", Refusal.MULTICAST),
    ("ff02::1", Refusal.MULTICAST),
    ("0.0.0.0", Refusal.UNSPECIFIED),
    ("::", Refusal.UNSPECIFIED),
    ("0.1.2.3", Refusal.RESERVED),
    ("240.0.0.1", Refusal.RESERVED),
    ("255.255.255.255", Refusal.RESERVED),
    ("192.0.2.1", Refusal.RESERVED),
    ("198.18.0.1", Refusal.RESERVED),
    ("2001:db8::1", Refusal.RESERVED),
    ("64:ff9b::a9fe:a9fe", Refusal.METADATA),
    ("64:ff9b::7f00:1", Refusal.LOOPBACK),
    ("2002:0a00:0001::1", Refusal.PRIVATE),
]


@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_every_non_public_address_class_is_refused(address: str, reason: Refusal) -> None:
    assert classify(ipaddress.ip_address(address)) is reason
    assert AddressPolicy().refusal(ipaddress.ip_address(address)) is reason


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "64:ff9b::808:808"]
)
def test_public_addresses_pass(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is None


def test_allowed_networks_open_only_their_range() -> None:
    policy = AddressPolicy(parse_networks(["127.0.0.0/8", " 10.1.0.0/16 "]))
    assert policy.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert policy.refusal(ipaddress.ip_address("10.1.2.3")) is None
    assert policy.refusal(ipaddress.ip_address("10.2.0.1")) is Refusal.PRIVATE
    assert policy.refusal(ipaddress.ip_address("::ffff:127.0.0.1")) is Refusal.IPV4_MAPPED
    assert policy.refusal(ipaddress.ip_address("169.254.169.254")) is Refusal.METADATA


def test_without_public_access_only_allowed_networks_pass() -> None:
    policy = AddressPolicy(parse_networks(["127.0.0.0/8"]), allow_public=False)
    assert policy.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert policy.refusal(ipaddress.ip_address("8.8.8.8")) is Refusal.NOT_ALLOWED


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",
        "0x7f.0.0.1",
        "0x7f.1",
        "2130706433",
        "017700000001",
        "0177.0.0.1",
        # The root's trailing dot: still the literal, never a name to resolve.
        "127.0.0.1.",
        "127.1.",
        "0x7f.1.",
        "2130706433.",
    ],
)
def test_every_spelling_of_loopback_is_read_as_loopback(host: str) -> None:
    assert literal_address(host) == ipaddress.ip_address("127.0.0.1")


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST.", "api.localhost"])
def test_localhost_names_count_as_loopback(host: str) -> None:
    assert literal_address(host) == ipaddress.ip_address("127.0.0.1")


@pytest.mark.parametrize("host", ["example.com", "cafe", "deadbeef.example", "1.2.3.4.example"])
def test_host_names_are_not_literals(host: str) -> None:
    assert literal_address(host) is None


@pytest.mark.parametrize(
    ("host", "number"),
    [
        ("1.2.3.4.5", True),
        ("example.123", True),
        ("example.0x1f.", True),
        ("example.0x", True),
        ("example.com", False),
        ("1.2.3.example", False),
        ("deadbeef", False),
        ("example.1a", False),
        ("", False),
    ],
)
def test_a_host_ending_in_a_number_is_never_a_name(host: str, number: bool) -> None:
    assert ends_in_number(host) is number
    assert valid_hostname(host) is (not number and host != "")


STRICT = UrlPolicy()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://127.0.0.1/hook", "loopback"),
        ("https://127.1/hook", "loopback"),
        ("https://127.0.0.1./hook", "loopback"),
        ("https://10.1.2.3./hook", "private"),
        ("https://1.2.3.4.5/hook", "host"),
        ("https://999.1.1.1/hook", "malformed"),
        ("https://example.123/hook", "host"),
        ("https://example.0x1f./hook", "host"),
        ("https://0x7f.0.0.1/hook", "loopback"),
        ("https://2130706433/hook", "loopback"),
        ("https://[::1]/hook", "loopback"),
        ("https://localhost:8443/hook", "loopback"),
        ("https://10.0.0.5/hook", "private"),
        ("https://192.168.0.10/hook", "private"),
        ("https://100.64.1.1/hook", "carrier_grade_nat"),
        ("https://169.254.169.254/latest/meta-data/", "cloud_metadata"),
        ("https://[fe80::1]/hook", "link_local"),
        ("https://[fd00::1]/hook", "unique_local"),
        ("https://[::ffff:127.0.0.1]/hook", "ipv4_mapped"),
        ("https://[::ffff:7f00:1]/hook", "ipv4_mapped"),
        ("https://224.0.0.1/hook", "multicast"),
        ("https://0.0.0.0/hook", "unspecified"),
        ("https://[::]/hook", "unspecified"),
        ("ftp://example.com/hook", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("gopher://example.com/", "scheme"),
        ("https://user:pw@example.com/hook", "credentials"),
        ("https://token@example.com/hook", "credentials"),
        ("http://example.com/hook", "https_required"),
        ("https://exa%20mple.com/", "host"),
        ("https://" + "a" * 2100 + ".com/", "too_long"),
        ("not a url", "scheme"),
    ],
)
def test_urls_refused_at_acceptance(url: str, reason: str) -> None:
    with pytest.raises(UrlRefused) as refused:
        check_url(url, STRICT)
    assert refused.value.details == {"reason": reason}


def test_a_public_https_url_is_accepted_and_normalised() -> None:
    assert (
        check_url("https://Hooks.Example.COM/in?x=1", STRICT) == "https://hooks.example.com/in?x=1"
    )


def test_plain_http_is_allowed_inside_an_allowed_network_only() -> None:
    policy = UrlPolicy(allowed_networks=parse_networks(["127.0.0.0/8"]))
    assert check_url("http://127.0.0.1:8080/hook", policy) == "http://127.0.0.1:8080/hook"
    with pytest.raises(UrlRefused) as refused:
        check_url("http://8.8.8.8/hook", policy)
    assert refused.value.details == {"reason": "https_required"}
    # A host name may resolve into the allowed network: decided at connect time.
    assert check_url("http://receiver.internal/hook", policy) == "http://receiver.internal/hook"


def test_https_may_be_made_optional() -> None:
    policy = UrlPolicy(require_https=False)
    assert check_url("http://example.com/hook", policy) == "http://example.com/hook"
    with pytest.raises(UrlRefused):
        check_url("http://10.0.0.1/hook", policy)


def test_the_allowed_networks_setting_is_checked_at_startup() -> None:
    ok = Settings(_env_file=None, webhook_allowed_networks="127.0.0.0/8, 10.20.0.0/16")  # type: ignore[call-arg]
    assert ok.webhooks.allowed_network_list == ["127.0.0.0/8", "10.20.0.0/16"]
    with pytest.raises(ValidationError):
        Settings(_env_file=None, webhook_allowed_networks="10.0.0.0/33")  # type: ignore[call-arg]
