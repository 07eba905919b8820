"""The gate in front of ``/admin/…``: ``Authorization: Bearer <HOMING_ADMIN_TOKEN>``.

An ASGI middleware, so nothing else (body parsing included) happens for a caller
without the token. While ``HOMING_ADMIN_TOKEN`` is unset the admin API does not exist:
every ``/admin/…`` request is 404 ``not_found``. A missing or wrong token is 401
``unauthenticated``. The path checked is the routed one (``homing.api.paths``), so
mounting the app under a prefix does not open the gate. The comparison is
constant-time over SHA-256 digests, so neither the token's content nor its length
leaks through timing.
"""

from __future__ import annotations

import hashlib

from starlette.types import ASGIApp, Receive, Scope, Send

from homing.api.errors import envelope, error_response
from homing.api.paths import routed_path
from homing.crypto import constant_time_equals
from homing.errors import Unauthenticated

ADMIN_PREFIX = "/admin/"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class AdminGuard:
    """ASGI middleware in front of ``/admin/v1``: 404 while no admin token is set,
    401 unless the bearer token matches it (compared in constant time), judged on the
    routed path so a ``root_path`` prefix cannot slip past it."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self._digest = _digest(token) if token else None

    def __repr__(self) -> str:
        return f"AdminGuard(enabled={self._digest is not None})"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not routed_path(scope).startswith(ADMIN_PREFIX):
            await self.app(scope, receive, send)
            return
        if self._digest is None:
            await envelope(404, "not_found", "Not Found")(scope, receive, send)
            return
        problem = self._refusal(scope)
        if problem is not None:
            await error_response(Unauthenticated(problem))(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> str | None:
        header = next(
            (bytes(v).decode("latin-1") for k, v in scope["headers"] if k == b"authorization"),
            "",
        )
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return "send the admin token as 'Authorization: Bearer …'"
        assert self._digest is not None
        if not constant_time_equals(_digest(given.strip()), self._digest):
            return "this admin token is not valid"
        return None
