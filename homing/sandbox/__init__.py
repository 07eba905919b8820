"""The local provider emulator behind ``homing sandbox``.

One HTTP server speaks the send and credential-check contracts of SendGrid, Resend,
Postmark and Mailgun under ``/sendgrid``, ``/resend``, ``/postmark`` and ``/mailgun``,
records Slack incoming-webhook posts under ``/slack``, and is steered through
``/_sandbox``; an SMTP sink sits beside it. Both record what they accept and inject
the faults they are told to.
"""

from __future__ import annotations

from homing.sandbox.app import VENDOR_PREFIXES, build_app
from homing.sandbox.server import SandboxServer, serve_forever
from homing.sandbox.state import (
    PROVIDERS,
    FaultMode,
    FaultRule,
    FaultScope,
    RecordedMessage,
    SandboxState,
)

__all__ = [
    "PROVIDERS",
    "VENDOR_PREFIXES",
    "FaultMode",
    "FaultRule",
    "FaultScope",
    "RecordedMessage",
    "SandboxServer",
    "SandboxState",
    "build_app",
    "serve_forever",
]
