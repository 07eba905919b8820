"""The sandbox's ASGI app: one mount per vendor contract plus the control routes."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount

from homing.sandbox import mailgun, postmark, resend, sendgrid
from homing.sandbox.control import control_router, slack_router
from homing.sandbox.state import SandboxState

VENDOR_PREFIXES = {
    "sendgrid": "/sendgrid",
    "resend": "/resend",
    "postmark": "/postmark",
    "mailgun": "/mailgun",
    "slack": "/slack",
}


def build_app(state: SandboxState) -> Starlette:
    """Build the sandbox app over ``state``: vendors under their prefixes, then control.

    A tenant's provider ``base_url`` is the server's base URL plus the vendor prefix,
    e.g. ``http://127.0.0.1:PORT/sendgrid``.
    """
    return Starlette(
        routes=[
            Mount("/sendgrid", app=sendgrid.router(state)),
            Mount("/resend", app=resend.router(state)),
            Mount("/postmark", app=postmark.router(state)),
            Mount("/mailgun", app=mailgun.router(state)),
            Mount("/slack", app=slack_router(state)),
            Mount("/_sandbox", app=control_router(state)),
        ]
    )
