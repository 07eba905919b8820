"""One template version in the console: its parts in a form (a draft's editable, one
field per channel part), a preview rendered with sample data and shown in a sandboxed
frame under its own strict CSP (as the message page shows an email's HTML,
``homing.console.message_view.frame_document``), publishing, and a test send of the
rendered email to an address (a job like any: the plan's quotas and the sending-domain
rule apply).

Each action of a draft saves what was typed first, so the preview and the test send
show exactly the form. A refusal shows the form again with what was typed kept and the
reason beside the field it is about (``email_html`` for ``email.html``'s syntax error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Path
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.addresses import MAX_MAILBOX, InvalidAddress, parse_mailbox
from homing.channels import Channel
from homing.console.access import MemberDep, ServicesDep, View, checked
from homing.console.flash import flash
from homing.console.forms import Form, read_form
from homing.console.message_view import frame_document
from homing.console.routing import ConsoleRoute, status_of
from homing.console.template_pages import sentence, tenant_of
from homing.console.templating import CSP, FRAMED_CSP, render
from homing.domain.accepting import NewJob
from homing.domain.templates import DRAFT, TemplateRow, VersionRow
from homing.domain.tenants import Principal
from homing.errors import Forbidden, HomingError, InvalidRequest
from homing.managers.suspension import refuse_suspended
from homing.models import QUEUE_FOR_CHANNEL, Priority
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

Ref = Annotated[str, Path(min_length=1, max_length=64)]
Number = Annotated[int, Path(ge=1, le=1_000_000)]
# The editor's form: three parts' sources (each bounded again by the template bound)
# and sample data, urlencoded (up to three bytes per character).
MAX_EDITOR_BYTES = 1024 * 1024
MAX_FIELD = 262_144
MAX_DATA = 65_536
# Form field → (channel, part field); the channels the console edits.
FIELDS = {
    "email_subject": ("email", "subject"),
    "email_html": ("email", "html"),
    "email_text": ("email", "text"),
    "email_layout": ("email", "layout"),
    "sms_body": ("sms", "body"),
    "chat_text": ("chat", "text"),
}


@dataclass(slots=True)
class Typed:
    """The editor's fields as typed (or as stored), and the problems found, by field."""

    values: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, version: VersionRow) -> Typed:
        values = {"locale": version.locale, "data": "{}"}
        for name, (channel, part) in FIELDS.items():
            value = version.parts.get(channel, {}).get(part)
            values[name] = value if isinstance(value, str) else ""
        return cls(values)

    def parts(self) -> dict[str, Any | None]:
        """The email, SMS and chat parts the form gives (None removes an emptied one)."""
        found: dict[str, dict[str, str]] = {}
        for name, (channel, part) in FIELDS.items():
            value = self.values.get(name, "")
            if value:
                found.setdefault(channel, {})[part] = value
        channels = {channel for channel, _ in FIELDS.values()}
        return {channel: found.get(channel) for channel in sorted(channels)}


def _where(view: View, template: TemplateRow, number: int) -> str:
    return f"/t/{tenant_of(view)}/templates/{template.key}/versions/{number}"


async def _page(
    request: Request,
    view: View,
    template: TemplateRow,
    version: VersionRow,
    typed: Typed,
    preview: dict[str, Any] | None = None,
    status: int = 200,
) -> Response:
    email = (preview or {}).get("email") or {}
    frame = frame_document(email["html"]) if email.get("html") else None
    return render(
        request,
        "template_version.html",
        status,
        csp=FRAMED_CSP if frame else CSP,
        tpl=template,
        version=version,
        typed=typed,
        preview=preview,
        frame=frame,
        editable=version.state == DRAFT and view.owner,
    )


@router.get("/t/{tenant_id}/templates/{ref}/versions/{number}")
async def version_page(
    request: Request, ref: Ref, number: Number, view: MemberDep, services: ServicesDep
) -> Response:
    template = await services.templates.get(tenant_of(view), ref)
    version = await services.templates.version(template, number)
    return await _page(request, view, template, version, Typed.of(version))


async def owner_form(request: Request, view: View) -> Form:
    """The editor's form (bigger than the console's usual 16 KiB), CSRF checked, from an
    owner of a tenant that is not suspended (the layout editor's too)."""
    form = checked(await read_form(request, MAX_EDITOR_BYTES), view)
    if not view.owner:
        raise Forbidden("Viewers can look but not change anything; ask an owner.")
    assert view.seat is not None
    refuse_suspended(view.seat.tenant)
    return form


def _typed(form: Form, version: VersionRow) -> Typed:
    """What was typed: every field of a draft's form; of another version's, only the
    sample data and the test's addresses (its parts cannot change)."""
    typed = Typed({name: form.get(name, MAX_FIELD) for name in FIELDS})
    typed.values["locale"] = form.get("locale", 35).strip()
    if version.state != DRAFT:
        typed = Typed.of(version)
    typed.values["data"] = form.get("data", MAX_DATA) or "{}"
    typed.values["to"] = form.get("to", MAX_MAILBOX).strip()
    typed.values["from"] = form.get("from", MAX_MAILBOX).strip()
    return typed


def _field_of(exc: HomingError) -> str:
    """The form field a refusal is about (``problem`` when none is)."""
    name = str(exc.details.get("part", "")).replace(".", "_")
    if name in FIELDS:
        return name
    if "missing" in exc.details or "invalid" in exc.details:
        return "data"
    known = str(exc.details.get("field", ""))
    return known if known in ("data", "locale", "to") else "problem"


@router.post("/t/{tenant_id}/templates/{ref}/versions/{number}")
async def act(
    request: Request, ref: Ref, number: Number, view: MemberDep, services: ServicesDep
) -> Response:
    """Save a draft, preview it with the sample data, publish it, or send it to an
    address as a test (``action``); a draft is saved first in every case."""
    form = await owner_form(request, view)
    action = form.get("action", 16)
    template = await services.templates.get(tenant_of(view), ref)
    version = await services.templates.version(template, number)
    typed = _typed(form, version)
    try:
        if version.state == DRAFT:
            version = await services.templates.edit_version(
                tenant_of(view),
                template.id,
                version.id,
                typed.values["locale"] or None,
                typed.parts(),
                None,
                view.actor,
            )
        return await _do(request, services, view, template, version, typed, action)
    except HomingError as exc:
        typed.problems[_field_of(exc)] = sentence(exc.message)
        return await _page(request, view, template, version, typed, None, status_of(exc))


async def _do(
    request: Request,
    services: Services,
    view: View,
    template: TemplateRow,
    version: VersionRow,
    typed: Typed,
    action: str,
) -> Response:
    """One action on a saved version: the preview page, or a flash and a redirect."""
    back = RedirectResponse(_where(view, template, version.number), status_code=303)
    if action == "publish":
        await services.templates.publish(tenant_of(view), template.id, version.id, view.actor)
        await flash(services, view, f"Version {version.number} published: sends use it now.")
        return back
    if action in ("preview", "send"):
        rendered = await _preview(services, view, template, version, typed)
        if action == "preview":
            return await _page(request, view, template, version, typed, rendered)
        await _test_send(services, view, template, version, typed, rendered)
        await flash(services, view, f"Test sent to {typed.values['to']}.")
        return back
    await flash(services, view, f"Draft {version.number} saved.")
    return back


async def _preview(
    services: Services, view: View, template: TemplateRow, version: VersionRow, typed: Typed
) -> dict[str, Any]:
    data = sample_data(typed.values["data"])
    _, parts = await services.templates.preview(
        tenant_of(view), template.id, data, None, version.number
    )
    return parts


def sample_data(text: str) -> dict[str, Any]:
    """The editor's sample data, a JSON object (the layout editor's too); InvalidRequest
    about the ``data`` field otherwise."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise InvalidRequest("the sample data is not JSON", {"field": "data"}) from None
    if not isinstance(data, dict):
        raise InvalidRequest("the sample data must be a JSON object", {"field": "data"})
    return data


async def _test_send(
    services: Services,
    view: View,
    template: TemplateRow,
    version: VersionRow,
    typed: Typed,
    rendered: dict[str, Any],
) -> None:
    """Queue the rendered email to the typed address, as the tenant (its quotas apply)."""
    email = rendered.get("email")
    if email is None:
        raise InvalidRequest("this version has no email part to send")
    try:
        to = parse_mailbox(typed.values["to"]).address
        sender = parse_mailbox(typed.values["from"]).address
    except InvalidAddress:
        raise InvalidRequest(
            "type a test address and a sender like a@example.com", {"field": "to"}
        ) from None
    assert view.seat is not None
    record = {"id": template.id, "key": template.key, "version": version.number}
    payload = {"to": to, "from": sender, **{k: email[k] for k in ("subject", "text", "html")}}
    job = NewJob(
        tenant_id=view.seat.tenant.id,
        channel=Channel.EMAIL,
        queue=QUEUE_FOR_CHANNEL[Channel.EMAIL],
        priority=Priority.NORMAL,
        payload={**payload, "template": {**record, "locale": version.locale, "test": True}},
    )
    principal = Principal(tenant=view.seat.tenant, api_key_id="console", test_key=False)
    rule = services.domains.sender_rule(view.seat.tenant.id, sender)
    await services.admission.accept(principal, job, rule)
    services.wakeup.notify()
