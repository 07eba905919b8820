"""The inbound layer's registry: each vendor's verifier and parser, under its name.

A vendor that sends delivery events names the kind of secret they are verified with in
its descriptor (``homing.vendors``, ``inbound_secret``) and has two modules in its own
folder: its verifier (``homing.vendors.<name>.verify``: ``accept``, ``check``,
``preview``) and its parser (``homing.vendors.<name>.parse``: ``split``,
``interpret``). Adding one adds one line to ``SOURCES``; ``tests/unit/test_vendors.py``
checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from homing import vendors
from homing.inbound.events import DeliveryEvent, RawEvent
from homing.inbound.verification import RETRY_MARGIN, Nonce, Signed
from homing.vendors import VENDORS
from homing.vendors.mailgun import parse as mailgun_events
from homing.vendors.mailgun import verify as mailgun_signature
from homing.vendors.postmark import parse as postmark_events
from homing.vendors.postmark import verify as postmark_signature
from homing.vendors.resend import parse as resend_events
from homing.vendors.resend import verify as resend_signature
from homing.vendors.sendgrid import parse as sendgrid_events
from homing.vendors.sendgrid import verify as sendgrid_signature
from homing.vendors.telegram import parse as telegram_events
from homing.vendors.telegram import verify as telegram_signature
from homing.vendors.twilio import parse as twilio_events
from homing.vendors.twilio import verify as twilio_signature
from homing.vendors.vonage import parse as vonage_events
from homing.vendors.vonage import verify as vonage_signature

__all__ = [
    "KINDS",
    "MAX_AGE",
    "MAX_BODY_BYTES",
    "RETRY_WINDOWS",
    "SOURCES",
    "Events",
    "Signature",
    "Source",
    "Splitter",
]

# (body, headers, max_events): a vendor that batches events finds an oversized body
# before it reads every element.
Splitter = Callable[[bytes, Mapping[str, str], int], list[RawEvent]]


class Signature(Protocol):
    """A vendor's verifier module."""

    def accept(self, value: Any, /) -> None: ...
    def check(self, value: Any, request: Signed, /) -> Nonce | None: ...
    def preview(self, value: Any, /) -> str: ...


class Events(Protocol):
    """A vendor's parser module: one body into raw events, one event into its meaning."""

    def split(self, body: bytes, headers: Mapping[str, str], /) -> list[RawEvent]: ...
    def interpret(self, payload: Any, /) -> DeliveryEvent: ...


@dataclass(frozen=True, slots=True)
class Source:
    """One vendor's inbound face. ``batch``: the splitter of a vendor that posts many
    events in a body (it takes the body's event limit); ``max_body_bytes``: a bound
    below HOMING_INBOUND_MAX_BODY_BYTES for a vendor whose events are always small."""

    signature: Signature
    events: Events
    batch: Splitter | None = None
    max_body_bytes: int | None = None

    def split(self, body: bytes, headers: Mapping[str, str], max_events: int) -> list[RawEvent]:
        if self.batch is not None:
            return self.batch(body, headers, max_events)
        return self.events.split(body, headers)


# One line per vendor that sends events.
SOURCES: Final[Mapping[str, Source]] = {
    vendors.sendgrid.VENDOR.name: Source(
        sendgrid_signature, sendgrid_events, batch=sendgrid_events.split
    ),
    vendors.resend.VENDOR.name: Source(resend_signature, resend_events),
    vendors.postmark.VENDOR.name: Source(postmark_signature, postmark_events),
    vendors.mailgun.VENDOR.name: Source(mailgun_signature, mailgun_events),
    vendors.twilio.VENDOR.name: Source(twilio_signature, twilio_events),
    vendors.vonage.VENDOR.name: Source(vonage_signature, vonage_events),
    vendors.telegram.VENDOR.name: Source(
        telegram_signature, telegram_events, max_body_bytes=telegram_events.MAX_BODY_BYTES
    ),
}

# The kind of secret each vendor's events are verified with (its descriptor's).
KINDS: Final[Mapping[str, str]] = {
    name: v.inbound_secret for name, v in VENDORS.items() if v.inbound_secret is not None
}
# Providers whose events are always small: their bodies are cut off sooner.
MAX_BODY_BYTES: Final[Mapping[str, int]] = {
    name: s.max_body_bytes for name, s in SOURCES.items() if s.max_body_bytes is not None
}
# How long each vendor that reuses its first signature keeps retrying an event (its
# verifier's ``RETRY_WINDOW``), and so how old a signed timestamp of it may be.
RETRY_WINDOWS: Final[Mapping[str, int]] = {
    name: window
    for name, s in SOURCES.items()
    if isinstance(window := getattr(s.signature, "RETRY_WINDOW", None), int)
}
MAX_AGE: Final[Mapping[str, int]] = {
    vendor: window + RETRY_MARGIN for vendor, window in RETRY_WINDOWS.items()
}
