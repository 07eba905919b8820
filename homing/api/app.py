"""The FastAPI application, built around already-constructed services."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from homing import __version__
from homing.api import errors
from homing.api.admin_guard import AdminGuard
from homing.api.admission import SendingAdmission
from homing.api.direct import DirectEmail
from homing.api.errors import envelope
from homing.api.routes import (
    admin,
    batch,
    domains,
    health,
    inbound,
    inbound_secrets,
    jobs,
    keys,
    notifications,
    providers,
    reports,
    suppressions,
    tenant_settings,
    usage,
    webhooks,
)
from homing.services import Services


class BodyLimit:
    """Refuse request bodies over ``limit`` bytes with 413, before they are parsed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                # Raised inside the route's body parsing, so FastAPI passes it through
                # to the error handlers as a 413 rather than a parse error.
                raise HTTPException(413, f"the request body is over {self.limit} bytes")
            return message

        await self.app(scope, limited, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = envelope(
            413, "payload_too_large", f"the request body is over {self.limit} bytes"
        )
        await response(scope, receive, send)


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Homing",
        version=__version__,
        description="Multi-tenant notification delivery with fallback, retries and fairness.",
    )
    app.state.services = services
    errors.install(app)
    for module in (health, notifications, jobs, providers, webhooks):
        app.include_router(module.router)
    for module in (batch, keys, usage, admin):
        app.include_router(module.router)
    for module in (inbound, inbound_secrets, suppressions, domains, reports):
        app.include_router(module.router)
    app.include_router(tenant_settings.router)
    app.add_middleware(BodyLimit, limit=services.settings.max_body_bytes)
    # Inside admission: a valid single email is accepted here, without FastAPI.
    app.add_middleware(
        DirectEmail, services=services, max_body_bytes=services.settings.max_body_bytes
    )
    # Added last, so they run first: nothing reads the body before these have passed.
    app.add_middleware(SendingAdmission, admission=services.admission)
    token = services.settings.admin_token
    app.add_middleware(AdminGuard, token=token.get_secret_value() if token else None)
    return app
