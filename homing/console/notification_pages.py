"""A tenant's multi-channel notifications (docs/notifications.md): the list, newest
first, and one notification's page: its recipient, template, strategy and status,
each step (channel, status, why, its job, when), and the digest it was gathered into.

Read-only pages for every member, reached through the user's seat in the tenant
(``access.seated``): every read names the tenant, so another tenant's notification is
404 like one that does not exist. Reads go through ``Notifications``, as
``GET /v1/notifications/{id}`` does.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query
from starlette.requests import Request
from starlette.responses import Response

from homing.clock import as_datetime
from homing.console.access import MemberDep, ServicesDep
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.domain.digests import GATHERED
from homing.domain.notification_search import NotificationFilter
from homing.store import flow_rules as rules

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
# A notification's status, as the list filters by it.
STATUSES = (rules.RUNNING, rules.SUCCEEDED, rules.FAILED, rules.UNCONFIRMED, GATHERED)
# Ids are UUIDs: a malformed one is refused (422) before any read.
_ID = r"^[0-9a-f-]{1,36}$"
NotificationId = Annotated[str, Path(pattern=_ID)]
Status = Annotated[str, Query(max_length=20)]
Cursor = Annotated[str | None, Query(pattern=_ID)]
# What a step's reason code means, where a code alone does not say it.
WHY = {
    "accepted": "accepted by a provider (in-app: stored in the feed)",
    "unreachable": "the recipient has no address on this channel",
    "no_template_part": "the template has no part for this channel",
    "no_provider": "the tenant has no provider for this channel",
    "no_sender": "no SMS provider of the tenant has a sender of its own",
    "invalid_address": "the recipient's address on this channel is not valid",
    "preference": "the recipient does not want this category on this channel",
    "frequency_cap": "the category's frequency cap for this recipient was reached",
    "suppressed": "the address is suppressed (a bounce, a complaint or an opt-out)",
    "no_signal": "no success signal in time: the next step was made",
}


@router.get("/t/{tenant_id}/notifications")
async def notifications(
    request: Request,
    view: MemberDep,
    services: ServicesDep,
    status: Status = "",
    cursor: Cursor = None,
) -> Response:
    """The tenant's notifications, newest first, of one status when chosen."""
    assert view.seat is not None
    chosen = status.lower()
    if chosen and chosen not in STATUSES:
        return render(
            request,
            "notifications.html",
            422,
            chosen=chosen,
            statuses=STATUSES,
            notes=[],
            problem="Choose a status from the list.",
            next_query=None,
        )
    found = NotificationFilter(view.seat.tenant.id, chosen or None)
    page = await services.notifications.page(found, PAGE, cursor)
    more = {"status": chosen} if chosen else {}
    next_query = urlencode(more | {"cursor": page.next_cursor}) if page.next_cursor else None
    return render(
        request,
        "notifications.html",
        chosen=chosen,
        statuses=STATUSES,
        notes=page.notifications,
        problem=None,
        next_query=next_query,
    )


@router.get("/t/{tenant_id}/notifications/{notification_id}")
async def notification(
    request: Request, notification_id: NotificationId, view: MemberDep, services: ServicesDep
) -> Response:
    """One notification: its request's facts, each step, and its digest."""
    assert view.seat is not None
    note = await services.notifications.get(view.seat.tenant.id, notification_id)
    closes = None if note.gathered is None else as_datetime(note.gathered.close_at)
    return render(request, "notification.html", note=note, closes=closes, why=WHY)
