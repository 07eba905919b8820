"""The first gate: a request must name a host this Homing is (``homing.hosts``).

An ASGI middleware, outermost but for the request id: a request whose ``Host`` header
is not loopback, ``HOMING_PUBLIC_URL``'s host or one of ``HOMING_ALLOWED_HOSTS`` is
refused 400 ``host_not_allowed`` before anything reads its body, a session or the
database. The refusal is the console's error page for the console and the JSON
envelope for the API. The probes (``/healthz``, ``/readyz``, ``/metrics``) are exempt:
orchestrators call them on a pod's address, and they build no link.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from homing.api.errors import error_response
from homing.api.paths import routed_path
from homing.errors import HomingError, HostRefused
from homing.hosts import AllowedHosts

__all__ = ["HostGuard", "guards_path"]

_PROBES = frozenset({"/healthz", "/readyz", "/metrics"})
_API_PREFIXES = ("/v1/", "/admin/", "/inbound/")

Page = Callable[[Scope, HomingError], ASGIApp]


def guards_path(path: str) -> bool:
    """Whether a refused Host on ``path`` is answered with the JSON envelope (400
    ``host_not_allowed``): the API's paths, not the probes nor the console's pages."""
    return path.startswith(_API_PREFIXES)


class HostGuard:
    """ASGI middleware: only requests for the allowed hosts pass; ``page`` answers a
    console request that does not."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts, page: Page) -> None:
        self.app = app
        self._hosts = hosts
        self._page = page

    def __repr__(self) -> str:
        return f"HostGuard({len(self._hosts.names)} names besides loopback)"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        refused = HostRefused()
        path = routed_path(scope)
        if guards_path(path):
            await error_response(refused)(scope, receive, send)
            return
        await self._page(scope, refused)(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        hosts = [bytes(v).decode("latin-1") for k, v in scope["headers"] if k == b"host"]
        if not hosts:
            return True
        if len(hosts) > 1:
            return False
        return self._hosts.allows(hosts[0]) or routed_path(scope) in _PROBES
