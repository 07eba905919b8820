"""The audit log in the console: a tenant's own for its owners, every tenant's for the
operator. Newest first, a page at a time, filtered by action.

The events are ``GET /v1/audit-log``'s and ``GET /admin/v1/audit-log``'s, read through
the same manager (``homing.managers.audit``); a viewer is refused on the server
(``access.owner_seated``), another tenant's page is 404 (``access.seated``). What an
event changed is shown field by field (a change as "old → new"), from its stored JSON,
already bounded and free of secrets, and escaped like every value a page shows; an
action by its words ("Webhook secret rotated") beside its code.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

import orjson
from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import Response

from homing.console.access import OperatorDep, OwnerDep, ServicesDep
from homing.console.page_params import Cursor, TenantQuery
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.domain.audit import AuditEvent, AuditFilter
from homing.errors import InvalidRequest
from homing.models import AuditAction
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
_SORTED = orjson.OPT_SORT_KEYS

PAGE = 50
Action = Annotated[str, Query(max_length=40)]


def action_of(text: str) -> AuditAction | None:
    """The chosen action (None for "every action"); InvalidRequest for one that is
    not in the vocabulary."""
    if not text:
        return None
    if text not in set(AuditAction):
        raise InvalidRequest("Choose an action from the list.")
    return AuditAction(text)


def readable(action: str) -> str:
    """An action as words: ``webhook_secret.rotated`` -> "Webhook secret rotated"."""
    return action.replace("_", " ").replace(".", " ").capitalize()


def _text(value: Any) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else orjson.dumps(value, option=_SORTED).decode()


def shown_changes(event: AuditEvent) -> list[tuple[str, str]]:
    """What the event changed, field by field: a change as "old → new" (``audit.diff``'s
    ``{"from", "to"}``), any other value as itself (text, or compact JSON); the
    template escapes each."""
    shown = []
    for name, value in sorted((event.changes or {}).items()):
        if isinstance(value, dict) and value.keys() == {"from", "to"}:
            shown.append((name, f"{_text(value['from'])} → {_text(value['to'])}"))
        else:
            shown.append((name, _text(value)))
    return shown


async def _render(
    request: Request,
    services: Services,
    base: str,
    tenant_id: str | None,
    action: str,
    cursor: str | None,
    *,
    operator: bool,
) -> Response:
    """The audit page of ``base``: ``tenant_id``'s events (every tenant's when None)."""
    events: list[AuditEvent] = []
    next_cursor, problem = None, None
    try:
        f = AuditFilter(tenant_id=tenant_id, action=action_of(action))
    except InvalidRequest as exc:
        problem = exc.message
    else:
        events, next_cursor = await services.audit.page(f, limit=PAGE, cursor=cursor)
    return render(
        request,
        "audit.html",
        422 if problem else 200,
        base=base,
        operator=operator,
        events=[(e, shown_changes(e)) for e in events],
        words=readable,
        actions=[(a.value, readable(a.value)) for a in AuditAction],
        action=action,
        tenant_filter=tenant_id or "",
        next_query=_query(action, tenant_id if operator else None, next_cursor),
        problem=problem,
    )


def _query(action: str, tenant_id: str | None, cursor: str | None) -> str | None:
    """The next page's query string, keeping the filters; None on the last page."""
    if cursor is None:
        return None
    fields = {"action": action, "tenant_id": tenant_id or "", "cursor": cursor}
    return urlencode({k: v for k, v in fields.items() if v})


@router.get("/t/{tenant_id}/audit")
async def tenant_audit(
    request: Request,
    view: OwnerDep,
    services: ServicesDep,
    action: Action = "",
    cursor: Cursor = None,
) -> Response:
    """The tenant's audit events, newest first; for its owners only."""
    assert view.seat is not None
    tenant_id = view.seat.tenant.id
    base = f"/t/{tenant_id}/audit"
    return await _render(request, services, base, tenant_id, action, cursor, operator=False)


@router.get("/operator/audit")
async def operator_audit(
    request: Request,
    _view: OperatorDep,
    services: ServicesDep,
    action: Action = "",
    tenant_id: TenantQuery = "",
    cursor: Cursor = None,
) -> Response:
    """Every tenant's audit events (or one tenant's), newest first."""
    tenant = tenant_id.strip() or None
    return await _render(
        request, services, "/operator/audit", tenant, action, cursor, operator=True
    )
