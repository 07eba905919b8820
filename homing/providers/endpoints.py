"""Where a provider account may send : a pure policy
(docs/architecture.md, "Provider endpoints").

A provider's ``config.base_url`` must be its vendor's official API host (or one of the
vendor's documented regional hosts), over https on the standard port. Anything else is
refused with ``EndpointRefused`` unless the operator allows it: an exact
``HOMING_SANDBOX_URLS`` entry (same scheme, host and port) or a target inside
``HOMING_PROVIDER_ALLOWED_NETWORKS`` (plain http allowed there). A mail server (an
account that names a ``host`` and ``port``) is any host that resolves to public
addresses, an address inside the allowed networks, or an ``smtp://`` sandbox entry.

The URL is checked here without DNS, at registration and before every request; the
addresses a host resolves to are checked when the connection is opened
(``homing.providers.guard``), with the webhook guard's classifier, and the connection
goes to the address that was checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final, Protocol

import httpx
import yarl

from homing.errors import EndpointRefused, UrlRefused
from homing.providers.webhook.ssrf import (
    MAX_URL_LENGTH,
    AddressPolicy,
    IPAddress,
    IPNetwork,
    UrlPolicy,
    check_url,
    literal_address,
)
from homing.vendors import VENDORS

__all__ = ["ANY_ADDRESS", "OFFICIAL_HOSTS", "EndpointPolicy", "SandboxServers", "Target"]

# Each vendor's API host and the regional hosts its API reference documents (Slack's is
# its incoming webhooks' host: the webhook URL is the endpoint there, not a base_url).
OFFICIAL_HOSTS: Final[Mapping[str, frozenset[str]]] = {
    name: v.hosts for name, v in VENDORS.items() if v.hosts
}
_ALL_OFFICIAL: Final = frozenset().union(*OFFICIAL_HOSTS.values())
_HTTPS_PORT: Final = 443
_MAX_HOST_LENGTH: Final = 253
# The vendors whose account names a mail server (``host``, ``port``), as refusals say.
_SERVERS: Final = " or ".join(v.title for v in VENDORS.values() if v.endpoint == "mail_server")
_MAX_PASSED: Final = 4096
_EVERYWHERE = (ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0"))
# What an operator-named sandbox server may resolve to: anything, it was named exactly.
ANY_ADDRESS: Final = AddressPolicy(_EVERYWHERE)
# Used only for the URL's shape (scheme, credentials, host syntax): addresses are ours.
_SHAPE_ONLY: Final = UrlPolicy(require_https=False, allowed_networks=_EVERYWHERE)
# Characters no host name or IP literal holds; they would change how a URL parses.
_NOT_IN_HOST: Final = frozenset("/\\@?#%[] \t\r\n")


_SHAPES: Final = {
    "scheme": "the endpoint must be an http or https URL",
    "credentials": "the endpoint URL may not carry a user name or password",
    "host": "the endpoint's host is not a valid host name or IP address",
}


class SandboxServers(Protocol):
    """Which servers the sandbox URLs name (``homing.dispatch.sandbox_guard.SandboxGuard``:
    its matcher serves test keys and this policy alike)."""

    def serves(self, scheme: str | None, host: str, port: int | None) -> bool: ...


def refuse(reason: str, message: str) -> EndpointRefused:
    """The domain error, with ``details.reason`` (never an address)."""
    return EndpointRefused(message, {"reason": reason})


def _host_key(host: str) -> str:
    return host.rstrip(".").lower()


class Target:
    """The server one request goes to, as the client that sends it will see it."""

    __slots__ = ("address", "host", "port", "scheme")

    def __init__(self, scheme: str, host: str, port: int, address: IPAddress | None) -> None:
        self.scheme = scheme
        self.host = host
        self.port = port
        self.address = address

    @property
    def official(self) -> bool:
        return _host_key(self.host) in _ALL_OFFICIAL


def _same_host(ours: str, theirs: str) -> bool:
    try:
        return ipaddress.ip_address(ours) == ipaddress.ip_address(theirs)
    except ValueError:
        return ours.lower() == theirs.lower()


def parse_target(url: str) -> Target:
    """Parse ``url`` as aiohttp will (yarl), and refuse it unless the webhook URL parser
    (httpx) reads the same server from it: two parsers that disagree about a host are
    how a URL smuggles a second destination past a check."""
    if not isinstance(url, str) or len(url) > MAX_URL_LENGTH:
        raise refuse("malformed", f"the endpoint must be a URL of at most {MAX_URL_LENGTH} bytes")
    try:
        check_url(url, _SHAPE_ONLY)
        parsed, other = yarl.URL(url), httpx.URL(url)
    except UrlRefused as exc:
        reason = str(exc.details.get("reason", "malformed"))
        raise refuse(reason, _SHAPES.get(reason, "the endpoint URL cannot be used")) from None
    except (ValueError, TypeError, httpx.InvalidURL):
        raise refuse("malformed", "the endpoint URL cannot be parsed") from None
    if parsed.user is not None or parsed.password is not None:
        raise refuse("credentials", _SHAPES["credentials"])
    host, port = parsed.raw_host or "", parsed.port
    if parsed.scheme not in ("http", "https") or port is None:
        raise refuse("malformed", "the endpoint URL cannot be parsed")
    other_port = other.port or (443 if other.scheme == "https" else 80)
    if not _same_host(host, other.raw_host.decode("ascii")) or other_port != port:
        raise refuse("malformed", "the endpoint URL names its host ambiguously")
    return Target(parsed.scheme, host, port, _literal(host))


def _literal(host: str) -> IPAddress | None:
    address = literal_address(host)
    if address is not None and any(c.isdigit() for c in host):
        try:
            ipaddress.ip_address(host)
        except ValueError:
            # A legacy numeric form (127.1, 0x7f.0.0.1, 2130706433): aiohttp refuses
            # them, and no operator needs one, so refuse them plainly.
            raise refuse("host", "an IP address must be written in its usual form") from None
    return address


class EndpointPolicy:
    """The operator's allowances: ``allowed_networks`` and the sandbox URLs (read live,
    since ``homing run --demo`` adds its sandbox after start)."""

    def __init__(self, allowed_networks: tuple[IPNetwork, ...], sandbox: SandboxServers) -> None:
        self.allowed_networks = allowed_networks
        self._sandbox = sandbox
        # URLs that passed: every send checks its URL, and an account's URLs repeat.
        # Only passes are kept, and allowances only grow, so a hit is never stale.
        self._passed: dict[tuple[str, str | None], Target] = {}

    def __repr__(self) -> str:
        return f"EndpointPolicy({len(self.allowed_networks)} allowed networks)"

    def check_url(self, url: str, provider: str | None = None) -> Target:
        """Refuse ``url`` unless it is an official host (of ``provider`` when given), a
        sandbox server, or may resolve inside the allowed networks; return its target."""
        key = (url, provider)
        passed = self._passed.get(key)
        if passed is not None:
            return passed
        target = parse_target(url)
        if target.official:
            self._check_official(target, provider)
        elif not self._sandbox.serves(target.scheme, target.host, target.port):
            self._check_allowed(target, provider)
        if len(self._passed) >= _MAX_PASSED:
            self._passed.clear()
        self._passed[key] = target
        return target

    def _check_official(self, target: Target, provider: str | None) -> None:
        if provider is not None and _host_key(target.host) not in OFFICIAL_HOSTS.get(provider, ()):
            raise refuse("other_vendor", f"base_url is another vendor's API, not {provider}'s")
        if target.scheme != "https":
            raise refuse("https_required", "the vendor's API is reached over https only")
        if target.port != _HTTPS_PORT:
            raise refuse("port", "the vendor's API is reached on the standard https port")

    def _check_allowed(self, target: Target, provider: str | None) -> None:
        if not self.allowed_networks:
            hosts = ", ".join(sorted(OFFICIAL_HOSTS.get(provider or "", _ALL_OFFICIAL)))
            raise refuse(
                "not_official",
                f"base_url must be the vendor's API ({hosts}), a HOMING_SANDBOX_URLS entry "
                "or inside HOMING_PROVIDER_ALLOWED_NETWORKS",
            )
        if target.address is not None:
            only_allowed = AddressPolicy(self.allowed_networks, allow_public=False)
            _refuse_address(only_allowed, target.address)

    def http_addresses(self, host: str, port: int) -> AddressPolicy:
        """What a connection to ``host:port`` may reach once the URL passed ``check_url``:
        an official host public addresses, a sandbox server any, the rest only the
        allowed networks."""
        if self._sandbox.serves(None, host, port):
            return ANY_ADDRESS
        public = _host_key(host) in _ALL_OFFICIAL and port == _HTTPS_PORT
        return AddressPolicy(self.allowed_networks, allow_public=public)

    def server_addresses(self, host: str, port: int) -> AddressPolicy:
        """What a mail server's connection may reach: public addresses and the allowed
        networks, anything for an ``smtp://`` sandbox entry."""
        if self._sandbox.serves("smtp", host, port):
            return ANY_ADDRESS
        return AddressPolicy(self.allowed_networks, allow_public=True)

    def check_server(self, host: str, port: int) -> None:
        """Refuse a mail server's host that is malformed or an address it may not reach."""
        if len(host) > _MAX_HOST_LENGTH or any(c in _NOT_IN_HOST for c in host):
            raise refuse("host", f"the {_SERVERS} host is not a valid host name or IP address")
        bracketed = f"[{host}]" if ":" in host else host
        target = parse_target(f"http://{bracketed}:{port}/")
        if target.address is not None:
            _refuse_address(self.server_addresses(host, port), target.address)

    def check_account(self, provider: str, credentials: Mapping[str, Any], config: Any) -> None:
        """Refuse an account whose endpoint this policy does not allow (registration,
        and before every send)."""
        vendor = VENDORS.get(provider)
        endpoint = "base_url" if vendor is None else vendor.endpoint
        if endpoint == "mail_server":
            host = str(credentials.get("host") or "")
            try:
                port = int(credentials.get("port") or 587)
            except (TypeError, ValueError):
                return  # the adapter refuses it with its own message
            self.check_server(host, port)
            return
        if endpoint == "webhook_url":
            self._check_webhook_url(credentials.get("webhook_url"), provider)
            return
        base_url = config.get("base_url") if isinstance(config, Mapping) else None
        if not base_url:
            return  # the adapter's default: the vendor's own API
        self.check_url(base_url, provider)
        if "?" in base_url or "#" in base_url:
            # The adapters append paths: a query would end up in front of them.
            raise refuse("malformed", "base_url must not carry a query or a fragment")

    def _check_webhook_url(self, url: Any, provider: str) -> None:
        """A webhook URL (a chat vendor's) is checked as a base_url is, and must name a
        path."""
        label = provider.capitalize()
        if not isinstance(url, str) or not url:
            raise refuse("malformed", f"the {label} webhook_url must be a URL")
        self.check_url(url, provider)
        if "#" in url or yarl.URL(url).path in ("", "/"):
            raise refuse("malformed", f"the {label} webhook_url must name a webhook path")


def _refuse_address(policy: AddressPolicy, address: IPAddress) -> None:
    reason = policy.refusal(address)
    if reason is not None:
        raise refuse(reason.value, f"provider endpoints may not point at {reason.value} addresses")
