"""Send a test (``/t/{tenant}/send-test``): one real message on a channel, raw or from a
published template, queued as the API queues one (``homing.console.send_test`` builds
it): the tenant's sending rate, its plan's quotas, suppressions and the sending-domain
rule all apply, and the job is marked as a console test. On success the browser goes
to the message's page with a flash; every refusal shows the form again with what was
typed and the reason beside its field.

For owners only: a test is a real send that counts toward the tenant's quotas. A
channel with no enabled provider is shown disabled with a link to the providers page;
webhooks need no provider, only a URL the endpoint guard allows.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.channels import Channel
from homing.console.access import OwnerDep, ServicesDep, View, checked
from homing.console.flash import flash
from homing.console.forms import Form, read_form
from homing.console.routing import ConsoleRoute, status_of
from homing.console.send_test import (
    CHANNELS,
    FIELDS,
    Typed,
    chat_job,
    email_job,
    refuse,
    rendered,
    sms_job,
    webhook_job,
)
from homing.console.template_pages import sentence
from homing.console.templating import render
from homing.domain.accepting import NewJob
from homing.domain.tenants import Principal
from homing.errors import HomingError, InvalidRequest
from homing.managers.suspension import refuse_suspended
from homing.managers.templates import Rendered
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

# The form: its fields' bounds (``send_test.FIELDS``) add up to less than this,
# urlencoded (up to three bytes a character for most of it).
MAX_SEND_FORM_BYTES = 512 * 1024
ChannelName = Annotated[str, Query(max_length=16)]


async def _providers(services: Services, tenant_id: str) -> dict[Channel, str | None]:
    """Each provided channel's first enabled provider (None: none is enabled)."""
    found: dict[Channel, str | None] = {}
    for channel in (Channel.EMAIL, Channel.SMS, Channel.CHAT):
        accounts = await services.providers.all(tenant_id, channel, enabled_only=True)
        found[channel] = accounts[0].vendor if accounts else None
    found[Channel.WEBHOOK] = "webhook"
    return found


def _channel(name: str) -> Channel:
    try:
        channel = Channel(name or Channel.EMAIL.value)
    except ValueError:
        channel = None
    if channel not in CHANNELS:
        raise refuse("choose email, sms, chat or webhook", "channel")
    assert channel is not None
    return channel


async def _page(
    request: Request, services: Services, view: View, typed: Typed, status: int = 200
) -> Response:
    assert view.seat is not None
    providers = await _providers(services, view.seat.tenant.id)
    return render(
        request, "send_test.html", status, typed=typed, providers=providers, channels=CHANNELS
    )


@router.get("/t/{tenant_id}/send-test")
async def send_test_page(
    request: Request, view: OwnerDep, services: ServicesDep, channel: ChannelName = ""
) -> Response:
    """The form of one channel (``?channel=``, email by default)."""
    return await _page(request, services, view, Typed(_channel(channel)))


@router.post("/t/{tenant_id}/send-test")
async def send_test(request: Request, view: OwnerDep, services: ServicesDep) -> Response:
    """Queue the typed test and go to its message page; the form again when refused."""
    form = checked(await read_form(request, MAX_SEND_FORM_BYTES), view)
    assert view.seat is not None
    refuse_suspended(view.seat.tenant)
    typed = _typed(form)
    try:
        if typed.problems:
            raise InvalidRequest("the form has a field over its bound")
        job_id = await _queue(services, view, typed)
    except HomingError as exc:
        typed.problems.setdefault(_field_of(exc), sentence(exc.message))
        return await _page(request, services, view, typed, status_of(exc))
    await flash(services, view, f"Test queued on {typed.channel.value}: this is its page.")
    where = f"/t/{view.seat.tenant.id}/messages/{job_id}"
    return RedirectResponse(where, status_code=303)


def _typed(form: Form) -> Typed:
    """What was typed: each field within its bound; a longer one refused beside it,
    not cut and not echoed (as every console form refuses one)."""
    typed = Typed(_channel(form.get("channel", 16)))
    for name, bound in FIELDS.items():
        try:
            typed.values[name] = form.get(name, bound)
        except InvalidRequest:
            typed.values[name] = ""
            typed.problems[name] = f"At most {bound:,} characters, please."
    return typed


def _field_of(exc: HomingError) -> str:
    """The form field a refusal is about (``problem``, above the form, when none is)."""
    named = str(exc.details.get("field", ""))
    if named in FIELDS:
        return named
    if exc.code == "domain_not_verified":
        return "from"
    if exc.code == "template_error" or "missing" in exc.details or "part" in exc.details:
        return "template"
    return "problem"


async def _queue(services: Services, view: View, typed: Typed) -> str:
    """Check, build and accept the typed test; the new job's id."""
    assert view.seat is not None
    tenant = view.seat.tenant
    channel = typed.channel
    needs_sender = channel is Channel.SMS and not typed.get("sms_from")
    await services.presence.check(tenant.id, channel, needs_sender=needs_sender)
    admission = services.admission
    admission.enforce(await admission.hit(tenant))
    made = await rendered(services, tenant.id, typed)
    job = await _job(services, tenant.id, typed, made)
    principal = Principal(tenant=tenant, api_key_id="console", test_key=False)
    rule = None
    if channel is Channel.EMAIL:
        rule = services.domains.sender_rule(tenant.id, str(job.payload["from"]))
    accepted = await admission.accept(principal, job, rule)
    services.wakeup.notify()
    return accepted.job.id


async def _job(
    services: Services, tenant_id: str, typed: Typed, template: Rendered | None
) -> NewJob:
    """The job of the typed channel (a chat goes to the first enabled chat provider's
    vendor, as the API's does when no provider is pinned)."""
    if typed.channel is Channel.EMAIL:
        return email_job(tenant_id, typed, template)
    if typed.channel is Channel.SMS:
        return sms_job(tenant_id, typed, template)
    if typed.channel is Channel.CHAT:
        kind = (await _providers(services, tenant_id))[Channel.CHAT]
        if kind is None:
            raise refuse("no enabled chat provider", "problem")
        return chat_job(tenant_id, kind, typed, template)
    return webhook_job(services, tenant_id, typed, template)
