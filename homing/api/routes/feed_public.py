"""The recipient's side of the in-app feed (docs/feed.md): ``/feed`` for the person
a feed token was signed for, from a page of an origin the tenant allows (CORS), and
``/feed/bell.js``, the script that draws the bell.

Every route but the script authenticates ``Authorization: Bearer <feed token>``
(``Feed.authenticate``): a reader sees and marks its own items only; another
recipient's item id is 404, as an unknown one is. CORS headers are answered only on
these routes, only to an origin the token's tenant allows (a preflight names no
tenant: it is answered to an origin some tenant allows, and the real request then to
its own tenant's only).
"""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from homing.api.deps import ServicesDep
from homing.api.error_responses import refusals
from homing.api.routes.feed_stream import FeedStream
from homing.api.schemas.feed import FeedItemPublic, FeedPagePublic
from homing.domain.feed import Mark
from homing.errors import InvalidRequest, NotFound, Overloaded, RateLimited, Unauthenticated
from homing.managers.feed import FeedGrant, FeedReader

router = APIRouter(tags=["feed"])

_bearer = HTTPBearer(auto_error=False, scheme_name="FeedToken")
_MARKS: dict[str, Mark] = {"seen": "seen", "read": "read", "archive": "archived"}
ItemId = Annotated[str, Path(pattern=r"^[A-Za-z0-9-]{1,36}$")]
_PREFLIGHT = {
    "Access-Control-Allow-Methods": "GET, POST",
    "Access-Control-Allow-Headers": "Authorization, Last-Event-ID",
    "Access-Control-Max-Age": "600",
}


async def feed_reader(
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> FeedReader:
    """Whose feed this is: the recipient its token was signed for."""
    if credentials is None:
        raise Unauthenticated("a feed token is needed: Authorization: Bearer <token>")
    return await services.feed.authenticate(credentials.credentials)


FeedReaderDep = Annotated[FeedReader, Depends(feed_reader)]


async def feed_grant(
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> tuple[FeedReader, FeedGrant]:
    """``feed_reader``, with what its token was checked with (a stream checks it again)."""
    if credentials is None:
        raise Unauthenticated("a feed token is needed: Authorization: Bearer <token>")
    return await services.feed.grant(credentials.credentials)


async def _cors(request: Request, services: ServicesDep, reader: FeedReader) -> dict[str, str]:
    origin = request.headers.get("origin")
    headers = {"Vary": "Origin", "Cache-Control": "no-store"}
    if origin is not None and await services.feed.origin_allowed(reader.tenant_id, origin):
        headers["Access-Control-Allow-Origin"] = origin
    return headers


@router.get("/feed", response_model=FeedPagePublic, responses=refusals(Unauthenticated))
async def my_feed(
    request: Request,
    reader: FeedReaderDep,
    services: ServicesDep,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=20)] = None,
) -> FeedPagePublic:
    """The reader's feed newest first, with its unread count."""
    page = await services.feed.page(reader, limit, cursor)
    response.headers.update(await _cors(request, services, reader))
    return FeedPagePublic.of(page)


@router.post(
    "/feed/{item_id}/{mark}",
    response_model=FeedItemPublic,
    responses=refusals(Unauthenticated, NotFound),
)
async def mark_item(
    item_id: ItemId,
    mark: Literal["seen", "read", "archive"],
    request: Request,
    reader: FeedReaderDep,
    services: ServicesDep,
    response: Response,
) -> FeedItemPublic:
    """Mark one of the reader's items seen, read (and seen) or archived; once is enough."""
    item = await services.feed.mark(reader, item_id, _MARKS[mark])
    response.headers.update(await _cors(request, services, reader))
    return FeedItemPublic.of(item)


@router.get(
    "/feed/stream",
    response_class=Response,
    responses=refusals(Unauthenticated, RateLimited, Overloaded),
)
async def stream(
    request: Request,
    granted: Annotated[tuple[FeedReader, FeedGrant], Depends(feed_grant)],
    services: ServicesDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=20)] = None,
) -> Response:
    """New items as Server-Sent Events (``event: item``, ``id`` its ``seq``) and the
    unread count (``event: unread``); from after ``Last-Event-ID`` when given. Ends with
    ``event: expired`` or ``event: revoked`` once the token expires or the tenant's
    feed secret is rotated."""
    reader, grant = granted
    if last_event_id is not None and not (last_event_id.isdigit() and len(last_event_id) <= 18):
        raise InvalidRequest("'Last-Event-ID' is a sequence number this feed gave")
    headers = await _cors(request, services, reader)
    after = int(last_event_id) if last_event_id else await services.feed.last_seq(reader)
    wake = services.feed.open_stream(reader)
    s = services.settings
    headers.update({"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"})
    return FeedStream(
        services.feed,
        reader,
        grant,
        after,
        wake,
        headers,
        poll=s.feed.poll_seconds,
        heartbeat=s.feed.heartbeat_seconds,
        buffer=s.feed.stream_buffer,
    )


@router.get("/feed/bell.js", include_in_schema=False)
async def bell_script() -> Response:
    """The bell (docs/feed.md, "The bell"): plain JavaScript, no build step."""
    script = files("homing.api").joinpath("static/bell.js").read_bytes()
    headers = {"Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"}
    return Response(script, media_type="text/javascript", headers=headers)


async def _preflight(request: Request, services: ServicesDep) -> Response:
    """A preflight: allowed for an origin some tenant allows, answered bare otherwise."""
    origin = request.headers.get("origin")
    headers = {"Vary": "Origin"}
    if origin is not None and await services.feed.preflight_allowed(origin):
        headers.update(_PREFLIGHT, **{"Access-Control-Allow-Origin": origin})
    return Response(status_code=204, headers=headers)


for _path in ("/feed", "/feed/stream", "/feed/{item_id}/{mark}"):
    router.add_api_route(_path, _preflight, methods=["OPTIONS"], include_in_schema=False)
