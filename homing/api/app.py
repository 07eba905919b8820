"""The FastAPI application, built around already-constructed services."""

from __future__ import annotations

from fastapi import FastAPI

from homing import __version__, console
from homing.api import api_docs, errors
from homing.api.error_responses import ERROR_RESPONSES
from homing.api.middleware.admin_guard import AdminGuard
from homing.api.middleware.body_limit import BodyLimit
from homing.api.middleware.direct_email import DirectEmail
from homing.api.middleware.host_guard import HostGuard
from homing.api.middleware.request_id import RequestId
from homing.api.middleware.sending_gate import SendingAdmission
from homing.api.readiness import Readiness
from homing.api.routes import (
    admin,
    admin_jobs,
    audit,
    batch,
    categories,
    chat,
    dead_letters,
    domains,
    health,
    inbound,
    inbound_secrets,
    jobs,
    keys,
    notifications,
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


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Homing",
        version=__version__,
        description="Multi-tenant notification delivery with fallback, retries and fairness.",
        responses=ERROR_RESPONSES,
        # /docs and /redoc come from homing.api.api_docs, with their assets served here.
        docs_url=None,
        redoc_url=None,
    )
    app.state.services = services
    app.state.readiness = Readiness(services)
    app.state.scrape = Scrape(services.jobs)
    metrics_token = services.settings.metrics_token
    app.state.metrics_token = metrics_token.get_secret_value() if metrics_token else None
    errors.install(app)
    api_docs.install(app)
    for module in (health, notifications, jobs, providers, webhooks):
        app.include_router(module.router)
    for module in (batch, keys, usage, admin):
        app.include_router(module.router)
    for module in (inbound, inbound_secrets, suppressions, domains, reports):
        app.include_router(module.router)
    app.include_router(tenant_settings.router)
    app.include_router(admin_jobs.router)
    app.include_router(dead_letters.router)
    app.include_router(prometheus.router)
    app.include_router(chat.router)
    app.include_router(audit.router)
    app.include_router(sms.router)
    app.include_router(recipients.router)
    app.include_router(categories.router)
    app.include_router(templates.router)
    # The web console at / (homing.console): its pages, after every API route.
    console.install(app)
    app.add_middleware(BodyLimit, limit=services.settings.max_body_bytes)
    # Inside admission: a valid single email is accepted here, without FastAPI.
    app.add_middleware(
        DirectEmail, services=services, max_body_bytes=services.settings.max_body_bytes
    )
    # Added last, so they run first: nothing reads the body before these have passed.
    app.add_middleware(SendingAdmission, admission=services.admission)
    token = services.settings.admin_token
    app.add_middleware(AdminGuard, token=token.get_secret_value() if token else None)
    # Before every other gate: a forged Host reads nothing, not even the database.
    hosts = services.settings.allowed_host_set
    app.add_middleware(HostGuard, hosts=hosts, page=refusal_page)
    # Outermost: every response, refusals by the guards above included, carries the id.
    app.add_middleware(RequestId)
    return app
