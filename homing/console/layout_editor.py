"""One layout version in the console: its HTML and locale in a form (a draft's
editable), a preview of a sample email framed by it with sample data, shown in the
template editor's sandboxed frame under its strict CSP, and publishing.

As in ``template_editor`` (whose form reading and ``Typed`` this uses), each action of
a draft saves what was typed first, so the preview shows exactly the form; a refusal
(a syntax error, a layout over the size bound or without ``{{ content }}``, a bad
locale, sample data the layout cannot render with) shows the form again with what was
typed kept and the reason beside the field it is about.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.forms import Form
from homing.console.message_view import frame_document
from homing.console.routing import ConsoleRoute, status_of
from homing.console.template_editor import (
    MAX_DATA,
    MAX_FIELD,
    Number,
    Ref,
    Typed,
    owner_form,
    sample_data,
)
from homing.console.template_pages import sentence, tenant_of
from homing.console.templating import CSP, FRAMED_CSP, render
from homing.domain.templates import DRAFT, TemplateRow, VersionRow
from homing.errors import HomingError
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


def _stored(version: VersionRow) -> Typed:
    return Typed({"html": version.parts["html"], "locale": version.locale, "data": "{}"})


def _typed(form: Form, version: VersionRow) -> Typed:
    """What was typed: a draft's HTML and locale (another version's cannot change) and
    the sample data."""
    if version.state == DRAFT:
        html = form.get("html", MAX_FIELD)
        typed = Typed({"html": html, "locale": form.get("locale", 35).strip()})
    else:
        typed = _stored(version)
    typed.values["data"] = form.get("data", MAX_DATA) or "{}"
    return typed


def _field_of(exc: HomingError) -> str:
    """The form field a refusal is about (``problem`` when none is)."""
    known = str(exc.details.get("field", ""))
    if known in ("data", "locale"):
        return known
    if "missing" in exc.details or "invalid" in exc.details:
        return "data"
    # The rest of a template error is about the HTML (syntax, size, the slot, a render).
    return "html" if exc.code == "template_error" else "problem"


async def _page(
    request: Request,
    view: View,
    layout: TemplateRow,
    version: VersionRow,
    typed: Typed,
    preview: dict[str, Any] | None = None,
    status: int = 200,
) -> Response:
    html = (preview or {}).get("html")
    frame = frame_document(html) if html else None
    return render(
        request,
        "layout_version.html",
        status,
        csp=FRAMED_CSP if frame else CSP,
        layout=layout,
        version=version,
        typed=typed,
        frame=frame,
        editable=version.state == DRAFT and view.owner,
    )


@router.get("/t/{tenant_id}/layouts/{ref}/versions/{number}")
async def layout_version_page(
    request: Request, ref: Ref, number: Number, view: MemberDep, services: ServicesDep
) -> Response:
    layout = await services.layouts.get(tenant_of(view), ref)
    version = await services.layouts.version(layout, number)
    return await _page(request, view, layout, version, _stored(version))


@router.post("/t/{tenant_id}/layouts/{ref}/versions/{number}")
async def act_on_layout(
    request: Request, ref: Ref, number: Number, view: MemberDep, services: ServicesDep
) -> Response:
    """Save a draft, preview it around a sample email, or publish it (``action``); a
    draft is saved first in every case."""
    form = await owner_form(request, view)
    action = form.get("action", 16)
    layout = await services.layouts.get(tenant_of(view), ref)
    version = await services.layouts.version(layout, number)
    typed = _typed(form, version)
    try:
        if version.state == DRAFT:
            version = await services.layouts.edit_version(
                tenant_of(view),
                layout.id,
                version.id,
                typed.values["locale"] or None,
                {"html": typed.values["html"]},
                None,
                view.actor,
            )
        return await _do(request, services, view, layout, version, typed, action)
    except HomingError as exc:
        typed.problems[_field_of(exc)] = sentence(exc.message)
        return await _page(request, view, layout, version, typed, None, status_of(exc))


async def _do(
    request: Request,
    services: Services,
    view: View,
    layout: TemplateRow,
    version: VersionRow,
    typed: Typed,
    action: str,
) -> Response:
    """One action on a saved version: the preview page, or a flash and a redirect."""
    where = f"/t/{tenant_of(view)}/layouts/{layout.key}/versions/{version.number}"
    if action == "publish":
        await services.layouts.publish(tenant_of(view), layout.id, version.id, view.actor)
        await flash(services, view, f"Version {version.number} published: emails use it now.")
        return RedirectResponse(where, status_code=303)
    if action == "preview":
        data = sample_data(typed.values["data"])
        _, parts = await services.layouts.preview(
            tenant_of(view), layout.id, data, None, version.number
        )
        return await _page(request, view, layout, version, typed, parts["email"])
    await flash(services, view, f"Draft {version.number} saved.")
    return RedirectResponse(where, status_code=303)
