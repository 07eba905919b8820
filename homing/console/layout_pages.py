"""A tenant's email layouts in the console: the list (and a form to add one), a
layout's page with its versions (state, locale, dates), the templates it frames, and a
new draft. Editing, previewing and publishing a version are ``layout_editor``'s.

Reads and changes go through ``homing.managers.layouts`` as the API's do, with the
template pages' helpers (a layout is kept as a template is); a change needs an owner
(``posted_by_owner``, CSRF checked). A refused form is shown again with what was typed
and the reason beside its field.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.routing import ConsoleRoute, status_of
from homing.console.template_pages import PAGE, NewTemplate, Ref, sentence, tenant_of
from homing.console.templating import render
from homing.errors import HomingError
from homing.managers.layouts import DEFAULT
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

# The most templates a layout's page names (the rest are counted as "and more").
FRAMED = 50
# A first draft: the smallest layout that shows a template's email.
STARTER = (
    '<div class="frame">\n  <header><!-- your name and logo --></header>\n'
    "  {{ content }}\n  <footer><!-- your address --></footer>\n</div>"
)


async def _list_page(
    request: Request, view: View, services: Services, typed: NewTemplate, status: int = 200
) -> Response:
    tenant_id = tenant_of(view)
    layouts = services.layouts
    rows, more = await layouts.page(tenant_id, PAGE, None)
    ids = [r.id for r in rows]
    published = await layouts.published(tenant_id, ids)
    live = {i: ", ".join(f"{v.number} ({v.locale})" for v in vs) for i, vs in published.items()}
    changed = await layouts.changed(tenant_id, ids)
    return render(
        request,
        "layouts.html",
        status,
        rows=rows,
        live=live,
        changed=changed,
        more=more,
        typed=typed,
        default=DEFAULT,
    )


@router.get("/t/{tenant_id}/layouts")
async def layouts_list(request: Request, view: MemberDep, services: ServicesDep) -> Response:
    return await _list_page(request, view, services, NewTemplate())


@router.post("/t/{tenant_id}/layouts")
async def add_layout(
    request: Request, view: MemberDep, form: OwnerFormDep, services: ServicesDep
) -> Response:
    """A new layout; a refusal (a bad, reserved or taken key) shows the form again."""
    typed = NewTemplate(form.get("key", 64).strip(), form.get("name", 200).strip())
    try:
        row = await services.layouts.create(
            tenant_of(view), typed.key, typed.name or None, None, view.actor
        )
    except HomingError as exc:
        problem = NewTemplate(typed.key, typed.name, problem=sentence(exc.message))
        return await _list_page(request, view, services, problem, status_of(exc))
    await flash(services, view, f"Layout {row.key} added: write its first draft.")
    return RedirectResponse(f"/t/{tenant_of(view)}/layouts/{row.key}", status_code=303)


@router.get("/t/{tenant_id}/layouts/{ref}")
async def layout_page(
    request: Request, ref: Ref, view: MemberDep, services: ServicesDep
) -> Response:
    """A layout's versions, newest first, and the templates whose live versions it frames."""
    layouts = services.layouts
    layout = await layouts.get(tenant_of(view), ref)
    versions, more = await layouts.versions(layout, PAGE, None)
    framed, more_framed = await layouts.framed(layout, FRAMED)
    return render(
        request,
        "layout.html",
        layout=layout,
        versions=versions,
        more=more,
        framed=framed,
        more_framed=more_framed,
        default=DEFAULT,
    )


@router.post("/t/{tenant_id}/layouts/{ref}/versions")
async def new_layout_draft(
    ref: Ref, view: MemberDep, _form: OwnerFormDep, services: ServicesDep
) -> Response:
    """A new draft: a copy of the newest version, or a starter that shows the content."""
    layouts = services.layouts
    layout = await layouts.get(tenant_of(view), ref)
    newest, _ = await layouts.versions(layout, 1, None)
    if newest:
        parts, locale = newest[0].parts, newest[0].locale
    else:
        parts, locale = {"html": STARTER}, layout.default_locale
    draft = await layouts.add_version(tenant_of(view), layout.id, locale, parts, None, view.actor)
    await flash(services, view, f"Draft {draft.number} added.")
    where = f"/t/{tenant_of(view)}/layouts/{layout.key}/versions/{draft.number}"
    return RedirectResponse(where, status_code=303)
