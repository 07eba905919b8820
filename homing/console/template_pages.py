"""A tenant's templates in the console: the list (and a form to add one), a template's
page with its versions (state, locale, dates), a new draft, and a line diff between two
versions. Editing, previewing, publishing and test sends are ``template_editor``'s.

Reads and changes go through ``homing.managers.templates`` as the API's do; a change
needs an owner (``posted_by_owner``, CSRF checked). A refused form is shown again with
what was typed and the reason beside its field.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute, status_of
from homing.console.templating import render
from homing.domain.templates import VersionRow
from homing.errors import HomingError
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

Ref = Annotated[str, Path(min_length=1, max_length=64)]
Number = Annotated[int | None, Query(ge=1, le=1_000_000)]
PAGE = 200
# A diff compares at most this many lines a side (difflib is not linear: bounded input).
MAX_DIFF_LINES = 2000


def tenant_of(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


@dataclass(frozen=True, slots=True)
class NewTemplate:
    """The add-a-template form as typed, and what was wrong with it."""

    key: str = ""
    name: str = ""
    problem: str | None = None


async def _list_page(
    request: Request, view: View, services: Services, typed: NewTemplate, status: int = 200
) -> Response:
    tenant_id = tenant_of(view)
    rows, more = await services.templates.page(tenant_id, PAGE, None)
    channels = await services.templates.channels(tenant_id, [r.id for r in rows])
    return render(
        request, "templates.html", status, rows=rows, channels=channels, more=more, typed=typed
    )


@router.get("/t/{tenant_id}/templates")
async def templates_list(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    return await _list_page(request, view, services, NewTemplate())


@router.post("/t/{tenant_id}/templates")
async def add_template(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """A new template; a refusal (a bad or taken key) shows the form again."""
    typed = NewTemplate(form.get("key", 64).strip(), form.get("name", 200).strip())
    try:
        row = await services.templates.create(
            tenant_of(view), typed.key, typed.name or None, None, view.actor
        )
    except HomingError as exc:
        problem = NewTemplate(typed.key, typed.name, problem=sentence(exc.message))
        return await _list_page(request, view, services, problem, status_of(exc))
    await flash(services, view, f"Template {row.key} added: write its first draft.")
    return RedirectResponse(f"/t/{tenant_of(view)}/templates/{row.key}", status_code=303)


def sentence(message: str) -> str:
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


@router.get("/t/{tenant_id}/templates/{ref}")
async def template_page(
    request: Request,
    ref: Ref,
    view: MemberDep,
    services: ServicesDep,
    a: Number = None,
    b: Number = None,
) -> Response:
    """A template's versions, newest first, and (``a`` and ``b``) a diff of two."""
    templates = services.templates
    template = await templates.get(tenant_of(view), ref)
    versions, more = await templates.versions(template, PAGE, None)
    diff = None
    if a is not None and b is not None:
        left = await templates.version(template, a)
        right = await templates.version(template, b)
        diff = line_diff(left, right)
    return render(
        request,
        "template.html",
        tpl=template,
        versions=versions,
        more=more,
        diff=diff,
        compared=a is not None and b is not None,
    )


def lines_of(version: VersionRow) -> list[str]:
    """A version as lines to compare: its locale, then each field of each part."""
    out = [f"locale: {version.locale}"]
    for channel in sorted(version.parts):
        for field, value in sorted(version.parts[channel].items()):
            text = value if isinstance(value, str) else json.dumps(value, indent=2)
            out.append(f"[{channel}.{field}]")
            out.extend(text.splitlines() or [""])
    return out


def line_diff(left: VersionRow, right: VersionRow) -> list[tuple[str, str]] | None:
    """A plain unified line diff of two versions, as (kind, line) with kind ``+``, ``-``,
    ``@`` or `` ``; None when either side is too long to compare."""
    a, b = lines_of(left), lines_of(right)
    if len(a) > MAX_DIFF_LINES or len(b) > MAX_DIFF_LINES:
        return None
    names = (f"version {left.number}", f"version {right.number}")
    out = []
    for line in difflib.unified_diff(a, b, *names, lineterm="", n=2):
        kind = line[:1] if line[:1] in "+-@" else " "
        out.append((kind, line))
    return out


@router.post("/t/{tenant_id}/templates/{ref}/versions")
async def new_draft(
    ref: Ref, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """A new draft: a copy of the newest version, or an email part to start from."""
    templates = services.templates
    template = await templates.get(tenant_of(view), ref)
    newest, _ = await templates.versions(template, 1, None)
    if newest:
        parts, variables, locale = newest[0].parts, newest[0].variables, newest[0].locale
    else:
        parts = {"email": {"subject": "Hello", "html": "<p>Hello</p>"}}
        variables, locale = None, template.default_locale
    draft = await templates.add_version(
        tenant_of(view), template.id, locale, parts, variables, view.actor
    )
    await flash(services, view, f"Draft {draft.number} added.")
    where = f"/t/{tenant_of(view)}/templates/{template.key}/versions/{draft.number}"
    return RedirectResponse(where, status_code=303)
