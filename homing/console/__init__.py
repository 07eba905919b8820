"""The web console: server-rendered pages for tenants' members and the operator.

An entry-layer package beside ``homing.api`` (docs/architecture.md, "The console"),
served by the same FastAPI app at ``/``: ``routers()`` are its routes, in order. Pages are
HTML rendered with Jinja2 (autoescaping everything), styled by one CSS file and
enhanced by one small script of our own; every core flow works without the script.
Every response carries a strict Content-Security-Policy (no inline script or style).
"""

from __future__ import annotations

from fastapi import APIRouter

from homing.console import (
    audit_pages,
    dead_letter_pages,
    domain_pages,
    health_pages,
    inbound_secret_pages,
    invitation_pages,
    key_pages,
    layout_editor,
    layout_pages,
    notification_pages,
    operator_dead_letter_pages,
    operator_pages,
    optout_pages,
    pacing_pages,
    provider_pages,
    provider_setup,
    send_test_pages,
    signin,
    static,
    suppression_pages,
    template_editor,
    template_pages,
    tenant_pages,
    user_pages,
    webhook_pages,
)

__all__ = ["routers"]


def routers() -> tuple[APIRouter, ...]:
    """The console's routers, in the order the app includes them (after the API's own)."""
    tenant = (
        tenant_pages,
        notification_pages,
        dead_letter_pages,
        provider_setup,
        provider_pages,
        inbound_secret_pages,
        domain_pages,
        template_pages,
        template_editor,
        layout_pages,
        layout_editor,
        send_test_pages,
        pacing_pages,
        suppression_pages,
        webhook_pages,
        key_pages,
        audit_pages,
    )
    operator = (operator_pages, operator_dead_letter_pages, health_pages)
    public = (invitation_pages, optout_pages)
    return tuple(
        module.router for module in (static, signin, *public, *tenant, user_pages, *operator)
    )
