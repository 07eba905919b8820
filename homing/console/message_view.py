"""What one message page shows: the message as it was sent, and one timeline.

The content comes from the job's payload, per channel: an email's addresses, subject
and bodies; an SMS's number, sender and cost (``SmsSegments``); a chat message's
target and text; an in-app send's recipient, category and feed item; a webhook's URL,
event type and body (pretty JSON), with the last response the receiver gave. Every
shown text is bounded (``MAX_SHOWN``): a longer one is cut, and the page says so. The
HTML body is shown in a sandboxed frame whose document starts with its own
Content-Security-Policy (``FRAME_CSP``): no script, no request of any kind, styles and
``data:`` images only. After payload retention, the content fields hold a marker
(``homing.managers.retention.SCRUBBED``), and the page says when they were scrubbed
instead. The timeline merges the attempts, the provider events and the steps of the
notification the job is a step of, in time order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from homing.channels import Channel
from homing.domain.inbound import Entry
from homing.domain.notification_rows import Step
from homing.email_headers import InvalidHeaders, email_headers
from homing.managers.retention import SCRUBBED
from homing.models import Attempt, Job, SmsSegments

__all__ = [
    "FRAME_CSP",
    "MAX_SHOWN",
    "Content",
    "Moment",
    "content_of",
    "frame_document",
    "timeline",
]

# The most of one text (a body, a payload) a page shows, in characters.
MAX_SHOWN = 256 * 1024
# What the HTML body's frame may do: nothing but inline styles and inline images.
FRAME_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
_FRAME_HEAD = (
    '<!doctype html><html><head><meta charset="utf-8">'
    f'<meta http-equiv="Content-Security-Policy" content="{FRAME_CSP}">'
    '<base target="_blank"></head><body>'
)


@dataclass(frozen=True, slots=True)
class Shown:
    """A text as the page shows it: at most ``MAX_SHOWN`` characters, and whether it
    was cut (``length`` is the whole text's)."""

    text: str
    length: int

    @property
    def cut(self) -> bool:
        return self.length > len(self.text)

    @classmethod
    def of(cls, text: str) -> Shown:
        return cls(text[:MAX_SHOWN], len(text))


@dataclass(kw_only=True, frozen=True, slots=True)
class Content:
    """The message of one job: ``facts`` (label, value) in order, the bodies there
    are, and the frame's document for an HTML body."""

    facts: list[tuple[str, str]] = field(default_factory=list)
    subject: str | None = None
    text: Shown | None = None
    html: Shown | None = None
    frame: str | None = None
    payload: Shown | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)
    response: tuple[int | None, str] | None = None


@dataclass(frozen=True, slots=True)
class Moment:
    """One line of the timeline: when, what kind (attempt, event or step), the
    attempt, the event or the notification's step itself."""

    at: datetime
    kind: str
    attempt: Attempt | None = None
    event: Entry | None = None
    step: Step | None = None


def frame_document(html: str) -> str:
    """The document of the HTML body's frame: ``FRAME_CSP`` first, then the body
    (given to the template, which escapes it into the ``srcdoc`` attribute)."""
    return _FRAME_HEAD + html


def _text(payload: dict[str, Any], name: str) -> str | None:
    """The text field ``name``; None when absent or scrubbed by retention."""
    value = payload.get(name)
    return value if isinstance(value, str) and value != SCRUBBED else None


def _facts(payload: dict[str, Any], rows: Sequence[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """(label, value) for each (label, field, default) of ``rows``; a field retention
    scrubbed is left out (the page says it was scrubbed)."""
    return [
        (label, _text(payload, name) or default)
        for label, name, default in rows
        if payload.get(name) != SCRUBBED
    ]


def _email(payload: dict[str, Any]) -> Content:
    facts = _facts(
        payload,
        [
            ("To", "to", "—"),
            ("From", "from", "—"),
            ("Reply-To", "reply_to", "— (replies go to From)"),
            ("Subject", "subject", "—"),
        ],
    )
    try:
        headers = [(name, value) for name, value in email_headers(payload.get("headers"))]
    except InvalidHeaders:
        headers = []
    text, html = _text(payload, "text"), _text(payload, "html")
    shown_html = Shown.of(html) if html is not None else None
    return Content(
        facts=facts,
        subject=_text(payload, "subject"),
        text=Shown.of(text) if text is not None else None,
        html=shown_html,
        frame=frame_document(shown_html.text) if shown_html is not None else None,
        headers=headers,
    )


def _sms(payload: dict[str, Any]) -> Content:
    body = _text(payload, "body") or ""
    cost = SmsSegments.of(body[:MAX_SHOWN])
    encoding = _text(payload, "encoding") or cost.encoding.value
    segments = payload.get("segments") or cost.segments
    characters = payload.get("characters") or cost.units
    facts = _facts(
        payload, [("To", "to", "—"), ("From", "from", "the provider account's own number")]
    )
    facts += [("Encoding", str(encoding)), ("Segments", f"{segments} ({characters} characters)")]
    return Content(facts=facts, text=Shown.of(body) if _text(payload, "body") else None)


def _chat(payload: dict[str, Any]) -> Content:
    facts = _facts(
        payload,
        [
            ("To", "to", "the provider's own channel"),
            ("Chat", "kind", "—"),
            ("Format", "format", "plain"),
        ],
    )
    text = _text(payload, "text")
    return Content(facts=facts, text=Shown.of(text) if text is not None else None)


def _in_app(payload: dict[str, Any]) -> Content:
    """An in-app send: its content is the feed item (docs/feed.md), not the job's."""
    facts = _facts(
        payload,
        [
            ("Recipient", "recipient", "—"),
            ("Category", "category", "—"),
            ("Feed item", "item_id", "— (none stored)"),
        ],
    )
    return Content(facts=facts)


def pretty_json(body: str) -> str:
    """``body`` indented when it is JSON of at most ``MAX_SHOWN`` characters, else as it is."""
    if len(body) > MAX_SHOWN:
        return body
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return body


def _webhook(payload: dict[str, Any], attempts: Sequence[Attempt]) -> Content:
    facts = _facts(payload, [("URL", "url", "—"), ("Event type", "event_type", "— (none given)")])
    body = _text(payload, "body")
    answered = [a for a in attempts if a.status_code is not None or a.response_excerpt]
    last = answered[-1] if answered else None
    return Content(
        facts=facts,
        payload=Shown.of(pretty_json(body)) if body is not None else None,
        response=(last.status_code, last.response_excerpt or "") if last else None,
    )


def content_of(job: Job, attempts: Sequence[Attempt]) -> Content:
    """The message ``job`` carries, as its page shows it."""
    payload = job.payload
    if job.channel is Channel.EMAIL:
        content = _email(payload)
    elif job.channel is Channel.SMS:
        content = _sms(payload)
    elif job.channel is Channel.CHAT:
        content = _chat(payload)
    elif job.channel is Channel.IN_APP:
        content = _in_app(payload)
    else:
        content = _webhook(payload, attempts)
    template = payload.get("template")
    content.facts.extend(_template_facts(template))
    marked = isinstance(template, dict) and template.get("test") is True
    if marked or payload.get("test") is True:
        content.facts.append(("Sent as", "a test, from the console"))
    return content


def _template_facts(template: object) -> list[tuple[str, str]]:
    """The template a send was rendered from: its key, version and locale."""
    if not isinstance(template, dict):
        return []
    version, locale = template.get("version"), template.get("locale")
    return [
        ("Template", str(template.get("key") or "—")),
        ("Template version", "—" if version is None else str(version)),
        ("Template locale", str(locale or "—")),
    ]


# Of moments at the same instant, which comes first: the call, then what the provider
# said of it, then what the notification decided from them.
_ORDER = {"attempt": 0, "event": 1, "step": 2}


def timeline(
    attempts: Sequence[Attempt], events: Sequence[Entry], steps: Sequence[Step] = ()
) -> list[Moment]:
    """Attempts, provider events and the steps of the notification the job is a step
    of (each at its last move) in one list, oldest first; at one instant an attempt
    comes before an event, an event before a step, and steps in their order."""
    moments = [Moment(a.started_at, "attempt", attempt=a) for a in attempts]
    moments += [Moment(e.occurred_at or e.received_at, "event", event=e) for e in events]
    moments += [Moment(s.updated_at, "step", step=s) for s in steps]
    return sorted(moments, key=lambda m: (m.at, _ORDER[m.kind], m.step.position if m.step else 0))
