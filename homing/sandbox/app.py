"""The sandbox's ASGI app: one mount per vendor contract, the webhook receiver
(``/hooks``) and the control routes."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount

from homing.sandbox import (
    domain_routes,
    events,
    mailgun,
    postmark,
    resend,
    sendgrid,
    telegram,
    twilio,
    vonage,
)
from homing.sandbox.control import control_router, slack_router
from homing.sandbox.hook_sink import hooks_listing, hooks_router
from homing.sandbox.state import SandboxState

VENDOR_PREFIXES = {
    "sendgrid": "/sendgrid",
    "resend": "/resend",
    "postmark": "/postmark",
    "mailgun": "/mailgun",
    "slack": "/slack",
    "twilio": "/twilio",
    "vonage": "/vonage",
    "telegram": "/telegram",
}


def build_app(state: SandboxState) -> Starlette:
    """Build the sandbox app over ``state``: vendors under their prefixes, then control.

    A tenant's provider ``base_url`` is the server's base URL plus the vendor prefix,
    e.g. ``http://127.0.0.1:PORT/sendgrid``.
    """
    return Starlette(
        routes=[
            # Each vendor's send/check routes plus its domain API.
            Mount(
                "/sendgrid",
                routes=[*sendgrid.router(state).routes, *domain_routes.sendgrid_routes(state)],
            ),
            Mount(
                "/resend",
                routes=[*resend.router(state).routes, *domain_routes.resend_routes(state)],
            ),
            Mount(
                "/postmark",
                routes=[*postmark.router(state).routes, *domain_routes.postmark_routes(state)],
            ),
            Mount(
                "/mailgun",
                routes=[*mailgun.router(state).routes, *domain_routes.mailgun_routes(state)],
            ),
            Mount("/slack", app=slack_router(state)),
            Mount("/hooks", app=hooks_router(state)),
            Mount("/twilio", app=twilio.router(state)),
            Mount("/vonage", app=vonage.router(state)),
            Mount("/telegram", app=telegram.router(state)),
            # Control, plus signed events back to Homing (homing.sandbox.events).
            Mount(
                "/_sandbox",
                routes=[
                    *control_router(state).routes,
                    *events.routes(state),
                    *hooks_listing(state),
                ],
            ),
        ]
    )
