"""The web console: server-rendered pages for tenants' members and the operator.

An entry-layer package beside ``homing.api`` (docs/architecture.md, "The console"),
served by the same FastAPI app at ``/``: ``install(app)`` adds its routes. Pages are
HTML rendered with Jinja2 (autoescaping everything), styled by one CSS file and
enhanced by one small script of our own; every core flow works without the script.
Every response carries a strict Content-Security-Policy (no inline script or style).
"""

from __future__ import annotations

from fastapi import FastAPI

from homing.console import (
    audit_pages,
    dead_letter_pages,
    health_pages,
    invitation_pages,
    key_pages,
    operator_letters,
    operator_pages,
    pacing_pages,
    provider_pages,
    provider_setup,
    signin,
    static,
    suppression_pages,
    tenant_pages,
    user_pages,
    webhook_pages,
)

__all__ = ["install"]


def install(app: FastAPI) -> None:
    """Add the console's routes to the app (after the API's own)."""
    tenant = (
        tenant_pages,
        dead_letter_pages,
        provider_setup,
        provider_pages,
        pacing_pages,
        suppression_pages,
        webhook_pages,
        key_pages,
        audit_pages,
    )
    operator = (operator_pages, operator_letters, health_pages)
    for module in (static, signin, invitation_pages, *tenant, user_pages, *operator):
        app.include_router(module.router)
