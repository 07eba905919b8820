"""The operator's dead letters: every tenant's, counted by reason, provider and tenant,
listed with filters a page at a time, and redriven in bulk after a dry-run count.

The data and the redrive are ``/admin/v1/dead-letters``'s, through the same store and
manager (``homing.managers.dead_letters``): each matching dead letter not yet redriven
is re-queued once, under its own tenant's quota. The filter is read within bounds
(``FIELDS``), its dates with ``homing.clock.parse_moment`` (the API's ``Moment`` range);
a tenant that does not exist is 404. A redrive of an unfiltered set needs "every dead
letter" ticked, as the API needs ``all: true``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.clock import parse_moment
from homing.console.access import OperatorDep, OperatorFormDep, ServicesDep
from homing.console.dead_letter_pages import redrive_and_say
from homing.console.forms import Form
from homing.console.page_params import Cursor, Short, TenantQuery
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.domain.dead_letters import DeadLetterFilter
from homing.errors import InvalidRequest, NotFound
from homing.models import Queue
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

PAGE = 50
# Groups shown per table (the largest first).
GROUPS = 20
# The longest text searched for in the errors (as the API's ``q``).
MAX_Q = 200
FIELDS = {
    "tenant_id": 36,
    "queue": 40,
    "error_class": 40,
    "provider": 40,
    "since": 40,
    "until": 40,
    "q": MAX_Q,
}
Text = Annotated[str, Query(max_length=MAX_Q)]


@dataclass(kw_only=True, frozen=True, slots=True)
class LetterSearch:
    """The filter as typed (to show it again and to carry it in links and forms)."""

    tenant_id: str = ""
    queue: str = ""
    error_class: str = ""
    provider: str = ""
    since: str = ""
    until: str = ""
    q: str = ""

    def fields(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v}

    def query(self, **more: str) -> str:
        return urlencode(self.fields() | more)

    def narrowed(self, **changes: str) -> str:
        """The query of this search with ``changes`` (a group's link)."""
        return replace(self, **changes).query()


def search_of(form: Form) -> LetterSearch:
    """The filter a redrive form carries, each field within its bound."""
    return LetterSearch(**{name: form.get(name, bound).strip() for name, bound in FIELDS.items()})


def _moment(name: str, text: str) -> datetime | None:
    if not text:
        return None
    try:
        return parse_moment(text)
    except ValueError:
        raise InvalidRequest(f"{name}: a date like 2026-05-01 or 2026-05-01T13:30.") from None


async def to_filter(services: Services, s: LetterSearch) -> DeadLetterFilter:
    """The store's filter; InvalidRequest names a field it cannot read, NotFound a
    tenant that does not exist."""
    if s.queue and s.queue not in set(Queue):
        raise InvalidRequest("Choose a queue from the list.")
    since, until = _moment("From", s.since), _moment("Until", s.until)
    if since and until and since > until:
        raise InvalidRequest("From must not be after Until.")
    if s.tenant_id and await services.tenants.get(s.tenant_id) is None:
        raise NotFound("There is no such tenant.")
    return DeadLetterFilter(
        tenant_id=s.tenant_id or None,
        queue=s.queue or None,
        error_class=s.error_class or None,
        provider=s.provider or None,
        since=since,
        until=until,
        q=s.q or None,
    )


@router.get("/operator/dead-letters")
async def dead_letters(
    request: Request,
    _view: OperatorDep,
    services: ServicesDep,
    tenant_id: TenantQuery = "",
    queue: Short = "",
    error_class: Short = "",
    provider: Short = "",
    since: Short = "",
    until: Short = "",
    q: Text = "",
    cursor: Cursor = None,
) -> Response:
    """Every tenant's dead letters, counted and listed."""
    search = LetterSearch(
        tenant_id=tenant_id.strip(),
        queue=queue,
        error_class=error_class,
        provider=provider,
        since=since,
        until=until,
        q=q,
    )
    return await _listing(request, services, search, cursor)


async def _listing(
    request: Request,
    services: Services,
    search: LetterSearch,
    cursor: str | None = None,
    redrive_problem: str | None = None,
) -> Response:
    """The page of the dead letters ``search`` matches; ``redrive_problem``: why the
    redrive form was refused, shown beside it."""
    store = services.dead_letter_store
    try:
        f = await to_filter(services, search)
    except InvalidRequest as exc:
        return _page(request, search, problem=exc.message)
    letters, next_cursor = await store.page(f, limit=PAGE, cursor=cursor)
    groups = {by: await store.groups(f, by, limit=GROUPS) for by in ("error_class", "provider")}
    tenants = await store.groups(f, "tenant", limit=GROUPS)
    return _page(
        request,
        search,
        letters=letters,
        groups=groups,
        tenants=tenants,
        names={g.key: g.name for g in tenants},
        next_query=search.query(cursor=next_cursor) if next_cursor else None,
        redrive_problem=redrive_problem,
    )


def _page(
    request: Request, search: LetterSearch, problem: str | None = None, **data: Any
) -> Response:
    context: dict[str, Any] = {
        "letters": [],
        "groups": {},
        "tenants": [],
        "names": {},
        "next_query": None,
        "redrive_problem": None,
    }
    context.update(data)
    status = 422 if problem or data.get("redrive_problem") else 200
    return render(
        request,
        "operator_dead_letters.html",
        status,
        search=search,
        queues=list(Queue),
        problem=problem,
        **context,
    )


@router.post("/operator/dead-letters/redrive")
async def redrive(
    request: Request, view: OperatorDep, form: OperatorFormDep, services: ServicesDep
) -> Response:
    """Redrive the filtered dead letters of every tenant, or (``dry_run``) count them;
    without a filter, only once "every dead letter" is ticked (else the page again,
    saying so beside the box)."""
    search = search_of(form)
    f = await to_filter(services, search)
    if not search.fields() and not form.has("all"):
        said = (
            'Narrow the dead letters first (a reason, provider, tenant…) or tick "every '
            'dead letter".'
        )
        return await _listing(request, services, search, redrive_problem=said)
    await redrive_and_say(
        services,
        view,
        f,
        search.fields(),
        dry_run=form.has("dry_run"),
        refused_why="over their tenant's quota or sending rate",
    )
    kept = search.query()
    return RedirectResponse(
        "/operator/dead-letters" + (f"?{kept}" if kept else ""), status_code=303
    )
