"""What "Send a test" queues: one job on one channel, from the console's form, raw or
from a published template, built and checked as the API's send routes build and check
theirs (``homing/api/routes/{notifications,sms,chat,webhooks}.py``; the console may not
import them, docs/architecture.md "Layers"). The bounds below are the API's own, and
``tests/console/test_send_test.py`` pins them equal.

Every check is linear in what was typed, and a refusal names the form field it is
about (``InvalidRequest`` with ``{"field": ...}``), so the page can show it there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from homing.addresses import (
    MAX_MAILBOX,
    MAX_PHONE,
    InvalidAddress,
    InvalidPhoneNumber,
    parse_mailbox,
    phone_key,
    sms_sender,
)
from homing.channels import Channel
from homing.domain.accepting import NewJob
from homing.errors import HomingError, InvalidRequest, PayloadTooLarge
from homing.managers.templates import Rendered
from homing.models import QUEUE_FOR_CHANNEL, Priority, SmsSegments
from homing.services import Services
from homing.vendors import VENDORS
from homing.webhooks.message import write_message

CHANNELS: Final = (Channel.EMAIL, Channel.SMS, Channel.CHAT, Channel.WEBHOOK)
# The API's bounds (EmailCreate, SmsCreate, ChatCreate, WebhookCreate, Templated).
MAX_SUBJECT: Final = 998
MAX_BODY: Final = 200_000  # the API takes 5,000,000; the console's form is 512 KiB
MAX_SMS_CHARACTERS: Final = 1600
MAX_SMS_SEGMENTS: Final = 10
MAX_CHAT_TO: Final = 100
MAX_TEXT: Final = 4096
MAX_URL: Final = 2048
MAX_EVENT_TYPE: Final = 200
MAX_TEMPLATE: Final = 64
MAX_DATA: Final = 65_536
EVENT_TYPE: Final = re.compile(r"[A-Za-z0-9._:/-]+")
# Each field of the form: its bound.
FIELDS: Final = {
    "to": MAX_MAILBOX,
    "from": MAX_MAILBOX,
    "subject": MAX_SUBJECT,
    "text": MAX_BODY,
    "html": MAX_BODY,
    "sms_to": MAX_PHONE,
    "sms_from": MAX_PHONE,
    "body": MAX_SMS_CHARACTERS,
    "chat_to": MAX_CHAT_TO,
    "chat_text": MAX_TEXT,
    "url": MAX_URL,
    "event_type": MAX_EVENT_TYPE,
    "payload": MAX_BODY,
    "template": MAX_TEMPLATE,
    "data": MAX_DATA,
}


@dataclass(slots=True)
class Typed:
    """The form as typed, and the problems found, by field."""

    channel: Channel = Channel.EMAIL
    values: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> str:
        return self.values.get(name, "").strip()

    @property
    def template(self) -> str:
        return self.get("template")


def refuse(message: str, name: str) -> InvalidRequest:
    """A refusal about the form field ``name``."""
    return InvalidRequest(message, {"field": name})


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def json_of(typed: Typed, name: str, what: str) -> Any:
    """The field ``name`` read as JSON (``{}`` when empty): no NaN or Infinity, and no
    nesting deeper than the parser's recursion allows (refused, not crashed on)."""
    try:
        return json.loads(typed.values.get(name) or "{}", parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise refuse(f"the {what} is not JSON", name) from None


def data_of(typed: Typed) -> dict[str, Any]:
    """The template's data: a JSON object (``{}`` when left empty)."""
    data = json_of(typed, "data", "data")
    if not isinstance(data, dict):
        raise refuse("the data must be a JSON object", "data")
    return data


async def rendered(services: Services, tenant_id: str, typed: Typed) -> Rendered | None:
    """The typed template rendered for the channel (None for raw content); TemplateError
    or a refusal beside ``template`` when it names none of the tenant's."""
    key = typed.template
    if not key:
        return None
    data = data_of(typed)
    found = await services.templates.lookup(tenant_id, {key})
    if key not in found:
        raise refuse(f"no published template of this tenant has the key {key!r}", "template")
    return await services.templates.render(found[key], key, typed.channel.value, data, None)


def _job(tenant_id: str, channel: Channel, payload: dict[str, Any], **extra: Any) -> NewJob:
    return NewJob(
        tenant_id=tenant_id,
        channel=channel,
        queue=QUEUE_FOR_CHANNEL[channel],
        priority=Priority.NORMAL,
        payload=payload,
        **extra,
    )


def _marked(payload: Mapping[str, Any], made: Rendered | None) -> dict[str, Any]:
    """The payload marked as a console test: in its template record, as the template
    editor's test sends are, or (raw content) on the payload itself."""
    if made is None:
        return {**payload, "test": True}
    return {**payload, "template": {**made.template, "test": True}}


def email_job(tenant_id: str, typed: Typed, made: Rendered | None) -> NewJob:
    """An email to one mailbox from one mailbox, its content typed or rendered."""
    try:
        to = parse_mailbox(_line(typed.get("to"), "to"))
    except InvalidAddress:
        raise refuse("type one address, like ada@example.com", "to") from None
    try:
        sender = parse_mailbox(_line(typed.get("from"), "from"))
    except InvalidAddress:
        raise refuse("type the sender, like Acme <hello@acme.example>", "from") from None
    if made is not None:
        part = made.part
        content = {k: part[k] for k in ("subject", "text", "html")}
        if not content["subject"] or len(content["subject"]) > MAX_SUBJECT:
            raise refuse("the rendered subject is empty or too long", "template")
    else:
        content = _email_content(typed)
    payload = {"to": str(to), "from": str(sender), **content}
    return _job(tenant_id, Channel.EMAIL, _marked(payload, made), address_key=to.key)


def _line(value: str, name: str) -> str:
    if "\r" in value or "\n" in value or "\x00" in value:
        raise refuse("one line, please: no line breaks", name)
    return value


def _email_content(typed: Typed) -> dict[str, str | None]:
    subject = _line(typed.get("subject"), "subject")
    if not subject:
        raise refuse("type a subject (or choose a template)", "subject")
    text, html = typed.values.get("text") or None, typed.values.get("html") or None
    if text is None and html is None:
        raise refuse("type a text or an HTML body, or both", "text")
    if "\x00" in (text or "") + (html or ""):
        raise refuse("a body must not contain NUL characters", "text")
    return {"subject": subject, "text": text, "html": html}


def sms_job(tenant_id: str, typed: Typed, made: Rendered | None) -> NewJob:
    """An SMS to one number in international form, its body typed or rendered."""
    try:
        to = phone_key(typed.get("sms_to"))
    except InvalidPhoneNumber:
        raise refuse("type a number in international form, like +14155552671", "sms_to") from None
    try:
        sender = sms_sender(typed.get("sms_from")) if typed.get("sms_from") else None
    except InvalidPhoneNumber:
        raise refuse(
            "a number, or a sender ID of up to 11 letters and digits", "sms_from"
        ) from None
    text = made.part["body"] if made is not None else typed.values.get("body", "")
    where = "template" if made is not None else "body"
    if not text or "\x00" in text or len(text) > MAX_SMS_CHARACTERS:
        raise refuse(f"1-{MAX_SMS_CHARACTERS} characters, no NUL", where)
    cost = SmsSegments.of(text)
    if cost.segments > MAX_SMS_SEGMENTS:
        raise refuse(f"{cost.segments} segments; at most {MAX_SMS_SEGMENTS} are sent", where)
    payload: dict[str, Any] = {
        "to": to,
        "from": sender,
        "body": text,
        "encoding": cost.encoding.value,
        "characters": cost.units,
        "segments": cost.segments,
        "fallback_on_undelivered": False,
    }
    return _job(tenant_id, Channel.SMS, _marked(payload, made))


def chat_job(tenant_id: str, kind: str, typed: Typed, made: Rendered | None) -> NewJob:
    """A chat message to one chat of the vendor ``kind`` (the tenant's first enabled
    chat provider's, as the API picks it), its text typed or rendered."""
    to = typed.get("chat_to")
    address = VENDORS[kind].chat if kind in VENDORS else None
    # The length first: no pattern ever runs over more than the bound.
    if not to or (address is not None and not re.fullmatch(address.pattern, to)):
        help_text = address.help if address is not None else "a chat id"
        raise refuse(f"type {help_text} for {kind}", "chat_to")
    if address is not None and to.startswith("@") and address.fold_at_names:
        to = to.lower()
    if made is not None:
        content = {**made.part}
        where = "template"
    else:
        content = {"text": typed.values.get("chat_text", ""), "format": "plain"}
        where = "chat_text"
    text = content.get("text") or ""
    if not text or "\x00" in text or len(text) > MAX_TEXT:
        raise refuse(f"1-{MAX_TEXT} characters, no NUL", where)
    if address is not None and content.get("format", "plain") not in address.formats:
        raise refuse(f"{kind} cannot render {content.get('format')} text", where)
    payload = {"to": to, "format": "plain", **content, "kind": kind}
    return _job(tenant_id, Channel.CHAT, _marked(payload, made))


def webhook_job(services: Services, tenant_id: str, typed: Typed, made: Rendered | None) -> NewJob:
    """An event to one URL (the endpoint guard's, as the API checks it), its payload
    typed (JSON) or rendered, signed with the tenant's secret at delivery."""
    try:
        url = services.webhooks.check_url(typed.get("url"))
    except HomingError as exc:
        raise refuse(exc.message, "url") from None
    event_type = typed.get("event_type") or None
    if event_type is not None and not EVENT_TYPE.fullmatch(event_type):
        raise refuse("letters, digits and . _ : / - only", "event_type")
    content = made.part["payload"] if made is not None else json_of(typed, "payload", "payload")
    limit = services.webhooks.max_payload_bytes
    try:
        text = json.dumps(content, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        raw = text.encode()
    except (ValueError, RecursionError):  # a lone surrogate UTF-8 cannot carry
        raise refuse("JSON without lone surrogates, please", "payload") from None
    if len(raw) > limit:
        message = f"the payload is {len(raw)} bytes; the limit is {limit}"
        raise PayloadTooLarge(message, {"field": "payload"})
    payload = write_message(services.sealer, tenant_id, url, raw, {}, event_type)
    return _job(tenant_id, Channel.WEBHOOK, _marked(payload, made))
