"""Which addresses a webhook may reach : a pure classifier and URL check
(docs/architecture.md, "Webhooks out").

Every address that is not globally routable is refused — loopback in any spelling,
RFC 1918, carrier-grade NAT, link-local (cloud metadata lives there), unique-local,
IPv4-mapped and -compatible IPv6, multicast, unspecified and reserved ranges — unless
an operator opened its range with ``HOMING_WEBHOOK_ALLOWED_NETWORKS``. IPv6 forms that
carry an IPv4 address on to a gateway (NAT64, 6to4) are judged by that IPv4 address.
The rule is "``ipaddress``'s ``is_global`` and not in the deny list": the deny list
names what ``is_global`` gets wrong on some Python versions (IANA's special-purpose
registries: the whole of ``192.0.0.0/24``, local-use NAT64 ``64:ff9b:1::/48``,
multicast, ``2001::/23``, SRv6 and documentation prefixes) and gives the common
refusals their names.

Host names are checked label by label, in linear time: a tenant's URL is attacker
text, and a backtracking pattern over it froze the event loop. A host whose last label
is a number (``127.0.0.1.``, ``0x7f.1``, ``1.2.3.4.5``) is never a name: it is the IP
literal it spells (a trailing dot is only DNS's root) or it is refused, as the URL
standard's host parser does (WHATWG, "ends in a number"); no such host is resolved.

``check_url`` runs when a webhook is accepted, on the URL alone (no DNS). The
authoritative check runs at connect time on the resolved addresses, in the one outbound
HTTP stack's resolver (``homing.providers.guard``), with ``AddressPolicy.refusal``.
"""

from __future__ import annotations

import enum
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from homing.errors import UrlRefused

__all__ = [
    "AddressPolicy",
    "IPAddress",
    "IPNetwork",
    "Refusal",
    "UrlPolicy",
    "check_url",
    "classify",
    "ends_in_number",
    "literal_address",
    "normalise_url",
    "parse_networks",
    "valid_hostname",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_URL_LENGTH = 2048
MAX_HOSTNAME_LENGTH = 253
MAX_LABEL_LENGTH = 63


class Refusal(enum.StrEnum):
    """Why an address is refused; the value is what errors and attempts show."""

    LOOPBACK = "loopback"
    PRIVATE = "private"
    CARRIER_GRADE_NAT = "carrier_grade_nat"
    METADATA = "cloud_metadata"
    LINK_LOCAL = "link_local"
    UNIQUE_LOCAL = "unique_local"
    IPV4_MAPPED = "ipv4_mapped"
    MULTICAST = "multicast"
    UNSPECIFIED = "unspecified"
    RESERVED = "reserved"
    NOT_ALLOWED = "not_in_allowed_networks"


_N = ipaddress.ip_network
# First match wins, so the specific ranges come before the ones that contain them.
_RANGES: tuple[tuple[IPNetwork, Refusal], ...] = (
    (_N("169.254.169.254/32"), Refusal.METADATA),
    (_N("fd00:ec2::254/128"), Refusal.METADATA),
    (_N("0.0.0.0/32"), Refusal.UNSPECIFIED),
    (_N("::/128"), Refusal.UNSPECIFIED),
    (_N("0.0.0.0/8"), Refusal.RESERVED),
    (_N("127.0.0.0/8"), Refusal.LOOPBACK),
    (_N("::1/128"), Refusal.LOOPBACK),
    (_N("10.0.0.0/8"), Refusal.PRIVATE),
    (_N("172.16.0.0/12"), Refusal.PRIVATE),
    (_N("192.168.0.0/16"), Refusal.PRIVATE),
    (_N("100.64.0.0/10"), Refusal.CARRIER_GRADE_NAT),
    (_N("169.254.0.0/16"), Refusal.LINK_LOCAL),
    (_N("fe80::/10"), Refusal.LINK_LOCAL),
    (_N("fc00::/7"), Refusal.UNIQUE_LOCAL),
    (_N("fec0::/10"), Refusal.UNIQUE_LOCAL),
    (_N("::ffff:0:0/96"), Refusal.IPV4_MAPPED),
    (_N("::ffff:0:0:0/96"), Refusal.IPV4_MAPPED),
    (_N("::/96"), Refusal.IPV4_MAPPED),
    (_N("224.0.0.0/4"), Refusal.MULTICAST),
    (_N("ff00::/8"), Refusal.MULTICAST),
    (_N("240.0.0.0/4"), Refusal.RESERVED),
    (_N("192.88.99.0/24"), Refusal.RESERVED),
    # IETF protocol assignments (DS-Lite, the IPv4 dummy 192.0.0.8, NAT64 discovery…):
    # none is a webhook receiver, though is_global passes some of them.
    (_N("192.0.0.0/24"), Refusal.RESERVED),
    (_N("198.18.0.0/15"), Refusal.RESERVED),
    (_N("64:ff9b:1::/48"), Refusal.RESERVED),  # local-use NAT64: translates to anything
    (_N("2001::/23"), Refusal.RESERVED),  # IETF protocol assignments, Teredo included
    (_N("2001:db8::/32"), Refusal.RESERVED),
    (_N("3fff::/20"), Refusal.RESERVED),
    (_N("5f00::/16"), Refusal.RESERVED),  # SRv6 SIDs
    (_N("100::/64"), Refusal.RESERVED),  # discard-only
)
_NAT64 = _N("64:ff9b::/96")
_SIX_TO_FOUR = _N("2002::/16")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def classify(address: IPAddress) -> Refusal | None:
    """Why ``address`` is not a public destination, or None when it is one.

    The allow-list is not consulted here; see ``AddressPolicy``.
    """
    for network, refusal in _RANGES:
        if address.version == network.version and address in network:
            return refusal
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return classify(embedded)
    if address.is_multicast:
        return Refusal.MULTICAST
    if address.is_reserved or not address.is_global:
        return Refusal.RESERVED
    return None


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """What one client may connect to: public addresses (if ``allow_public``) and
    any address inside ``allowed_networks``."""

    allowed_networks: tuple[IPNetwork, ...] = ()
    allow_public: bool = True

    def refusal(self, address: IPAddress) -> Refusal | None:
        if any(address in n for n in self.allowed_networks if n.version == address.version):
            return None
        reason = classify(address)
        if reason is None and not self.allow_public:
            return Refusal.NOT_ALLOWED
        return reason


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDR strings (``127.0.0.0/8``, ``10.1.2.3``) as networks; ValueError if malformed."""
    return tuple(ipaddress.ip_network(v.strip(), strict=False) for v in values if v.strip())


_LEGACY_IPV4 = re.compile(r"[0-9a-fA-FxX.]+")
_LABEL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def valid_hostname(host: str) -> bool:
    """Whether ``host`` is a DNS name: at most 253 characters (a trailing dot aside),
    labels of 1-63 letters, digits, ``-`` or ``_``, none starting or ending with ``-``.

    One pass over the text (no regex), so its cost is linear in the length, which is
    checked first. IDNA names arrive here already encoded (``xn--…``).
    """
    name = host[:-1] if host.endswith(".") else host
    if not 0 < len(name) <= MAX_HOSTNAME_LENGTH or ends_in_number(name):
        return False
    return all(_valid_label(label) for label in name.split("."))


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def ends_in_number(host: str) -> bool:
    """Whether ``host``'s last label (a trailing dot aside) is a number, decimal or
    ``0x`` hexadecimal: such a host spells an IPv4 address, or none, never a DNS name
    (no top-level domain is numeric)."""
    last = host.removesuffix(".").rpartition(".")[2]
    if last[:2] in ("0x", "0X"):
        return _HEX_DIGITS.issuperset(last[2:])
    return last != "" and last.isascii() and last.isdigit()


def _valid_label(label: str) -> bool:
    return (
        0 < len(label) <= MAX_LABEL_LENGTH
        and label[0] != "-"
        and label[-1] != "-"
        and _LABEL_CHARACTERS.issuperset(label)
    )


def literal_address(host: str) -> IPAddress | None:
    """The address a host names without DNS: an IP literal in any spelling the system
    resolver accepts (``127.1``, ``0x7f.0.0.1``, ``2130706433``), with or without the
    root's trailing dot (``127.0.0.1.``), or ``localhost``."""
    if len(host) > MAX_HOSTNAME_LENGTH + 2:  # "[" IPv6 "]" is shorter still
        return None
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    numeric = host.removesuffix(".")
    if _LEGACY_IPV4.fullmatch(numeric) and any(c.isdigit() for c in numeric):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(numeric))
        except OSError:
            return None
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return ipaddress.IPv4Address("127.0.0.1")
    return None


@dataclass(frozen=True, slots=True)
class UrlPolicy:
    """Which webhook URLs may be called: HTTPS only or not, and which private networks
    the operator allows."""

    require_https: bool = True
    allowed_networks: tuple[IPNetwork, ...] = ()

    def for_scheme(self, scheme: str) -> AddressPolicy:
        """Plain http, when https is required, may reach only the allowed networks."""
        public = scheme == "https" or not self.require_https
        return AddressPolicy(self.allowed_networks, allow_public=public)


def _refuse(reason: str, message: str) -> UrlRefused:
    return UrlRefused(message, {"reason": reason})


def _parse(url: str) -> httpx.URL:
    if len(url) > MAX_URL_LENGTH:
        raise _refuse("too_long", f"the URL is longer than {MAX_URL_LENGTH} characters")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise _refuse("malformed", "the URL cannot be parsed") from None
    if parsed.scheme not in ("http", "https"):
        raise _refuse("scheme", "only http and https URLs can receive webhooks")
    if parsed.userinfo:
        raise _refuse("credentials", "URLs with a user name or password are refused")
    return parsed


def normalise_url(url: str) -> str:
    """The URL as Homing stores and compares it (what ``check_url`` returns)."""
    try:
        return str(httpx.URL(url))
    except httpx.InvalidURL:
        raise _refuse("malformed", "the URL cannot be parsed") from None


def check_url(url: str, policy: UrlPolicy) -> str:
    """Refuse what can be refused from the URL alone; return the normalised URL.

    Raises ``UrlRefused`` (with ``details.reason``) for a scheme other than http(s),
    credentials in the URL, a malformed host, an IP literal (or ``localhost``) that
    the policy refuses, and plain http that can never be allowed.
    """
    parsed = _parse(url)
    host = parsed.raw_host.decode("ascii")
    address = literal_address(host)
    if address is None and not valid_hostname(host):
        raise _refuse("host", "the URL's host is not a valid host name or IP address")
    rules = policy.for_scheme(parsed.scheme)
    if address is not None:
        reason = rules.refusal(address)
        if reason is Refusal.NOT_ALLOWED:
            raise _refuse("https_required", "plain http is only allowed to allowed networks")
        if reason is not None:
            raise _refuse(reason.value, f"webhook URLs may not point at {reason.value} addresses")
    elif not rules.allow_public and not rules.allowed_networks:
        raise _refuse("https_required", "webhook URLs must use https")
    return str(parsed)
