"""The FastAPI application, built around already-constructed services."""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute

from homing import __version__, console
from homing.api import api_docs, errors
from homing.api.middleware.admin_guard import AdminGuard
from homing.api.middleware.body_limit import BodyLimit
from homing.api.middleware.direct_email import DirectEmail
from homing.api.middleware.host_guard import HostGuard
from homing.api.middleware.request_id import RequestId
from homing.api.middleware.request_trace import RequestTrace
from homing.api.middleware.sending_gate import SendingAdmission
from homing.api.readiness import Readiness
from homing.api.route_errors import document_errors, with_unrouted_errors
from homing.api.routes import (
    admin,
    admin_jobs,
    audit,
    batch,
    categories,
    chat,
    dead_letters,
    domains,
    email,
    feed,
    feed_public,
    health,
    inbound,
    inbound_secrets,
    jobs,
    keys,
    layouts,
    multichannel,
    prometheus,
    providers,
    recipients,
    reports,
    sms,
    suppressions,
    templates,
    tenant_settings,
    usage,
    webhooks,
)
from homing.api.scrape import Scrape
from homing.console.routing import refusal_page
from homing.services import Services


@cache
def routes() -> tuple[BaseRoute, ...]:
    """Every route of the app, included once per process and shared by each app made.

    FastAPI builds an included router's handlers (its parameter and response models) on
    the first request that reaches it, per inclusion: about 80 ms for a router of ten
    routes. A handler reads its services from ``request.app.state``, never from the app
    it was included in, so the inclusions are made once here and every app of this
    process (one in ``homing run``, thousands in the test suite) matches through them.
    Each API route's error responses are made whole as it is included
    (``homing.api.route_errors``).
    """
    router = APIRouter()
    router.include_router(api_docs.router)
    for module in (health, email, jobs, providers, webhooks):
        router.include_router(document_errors(module.router))
    for module in (batch, keys, usage, admin):
        router.include_router(document_errors(module.router))
    for module in (inbound, inbound_secrets, suppressions, domains, reports):
        router.include_router(document_errors(module.router))
    for module in (tenant_settings, admin_jobs, dead_letters, prometheus, chat, audit, sms):
        router.include_router(document_errors(module.router))
    for module in (recipients, categories, templates, layouts, feed, feed_public, multichannel):
        router.include_router(document_errors(module.router))
    # The web console at / (homing.console): its pages, after every API route.
    for console_router in console.routers():
        router.include_router(console_router)
    return tuple(router.routes)


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Homing",
        version=__version__,
        description="Multi-tenant notification delivery with fallback, retries and fairness.",
        # /docs and /redoc come from homing.api.api_docs, with their assets served here.
        docs_url=None,
        redoc_url=None,
        routes=list(routes()),
    )
    plain_openapi = app.openapi
    app.openapi = lambda: with_unrouted_errors(plain_openapi())  # type: ignore[method-assign]
    app.state.services = services
    app.state.readiness = Readiness(services)
    app.state.scrape = Scrape(services.jobs)
    metrics_token = services.settings.metrics.token
    app.state.metrics_token = metrics_token.get_secret_value() if metrics_token else None
    errors.install(app)
    app.add_middleware(BodyLimit, limit=services.settings.server.max_body_bytes)
    # Inside admission: a valid single email is accepted here, without FastAPI.
    app.add_middleware(
        DirectEmail, services=services, max_body_bytes=services.settings.server.max_body_bytes
    )
    # Added last, so they run first: nothing reads the body before these have passed.
    app.add_middleware(SendingAdmission, admission=services.admission)
    token = services.settings.admin_token
    app.add_middleware(AdminGuard, token=token.get_secret_value() if token else None)
    # Outside admission: a refused request is traced too (tracing on, docs/tracing.md).
    app.add_middleware(RequestTrace)
    # Before every other gate: a forged Host reads nothing, not even the database.
    hosts = services.settings.allowed_host_set
    app.add_middleware(HostGuard, hosts=hosts, page=refusal_page)
    # Outermost: every response, refusals by the guards above included, carries the id.
    app.add_middleware(RequestId)
    return app
