"""The pages a recipient opens from a notification, with no sign-in (docs/recipients.md,
"Links"): ``/u/{token}`` (one-click unsubscribe) and ``/p/{token}`` (preferences).

``GET /u/{token}`` only shows a page with a button: a link scanner that opens every
link unsubscribes nobody. ``POST /u/{token}`` with ``List-Unsubscribe=One-Click`` (RFC
8058 §3.1: urlencoded or multipart, as a mail client posts it, with no session, no
cookie and no CSRF token) opts out at once and answers 200, again for a replay.
``/p/{token}`` shows the tenant's categories with a checkbox per channel; its form is
refused from another site and carries a token of its own, an HMAC of the link's.
A token that does not open is one same 404 page (``homing.managers.optouts``).
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from homing.console.access import ServicesDep
from homing.console.forms import FORM_TYPE, read_body, read_form
from homing.console.routing import ConsoleRoute
from homing.console.signin import same_origin
from homing.console.templating import render
from homing.crypto import constant_time_equals
from homing.errors import Forbidden, InvalidRequest
from homing.managers.optout_links import LinkClaim, LinkPurpose
from homing.managers.optouts import ONE_CLICK
from homing.managers.recipients import PREFERENCE_CHANNELS
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

# A one-click body is 26 bytes; a multipart one a few hundred. A preference form holds
# a checkbox per (category, channel): at most 100 categories of 3 channels.
MAX_ONE_CLICK_BYTES = 4096
MAX_PAGE_FIELDS = 400
MAX_PAGE_BYTES = 32 * 1024
_CHANNELS = {c.value: "SMS" if c.value == "sms" else c.value.title() for c in PREFERENCE_CHANNELS}


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@router.get("/u/{token}")
async def unsubscribe_page(request: Request, token: str, services: ServicesDep) -> Response:
    """The page with the button; it changes nothing."""
    claim = await services.optouts.opened(LinkPurpose.UNSUBSCRIBE, token, _client(request))
    return render(request, "unsubscribe.html", category=claim.category, done=False)


@router.post("/u/{token}")
async def unsubscribe(request: Request, token: str, services: ServicesDep) -> Response:
    """Opt out now (RFC 8058): 200 whether this changed anything or was a replay."""
    body = await read_body(request, MAX_ONE_CLICK_BYTES)
    if not _one_click(request.headers.get("content-type", ""), body):
        raise InvalidRequest(f"Post {ONE_CLICK}, as the page's button does.")
    claim = await services.optouts.opened(LinkPurpose.UNSUBSCRIBE, token, _client(request))
    await services.optouts.unsubscribe(claim)
    return render(request, "unsubscribe.html", category=claim.category, done=True)


def _one_click(content_type: str, body: bytes) -> bool:
    """Whether ``body`` is RFC 8058's ``List-Unsubscribe=One-Click``: the urlencoded
    form, or a multipart part of that name holding ``One-Click`` (a linear scan)."""
    kind = content_type.partition(";")[0].strip().lower()
    if kind == FORM_TYPE:
        return ONE_CLICK.encode() in body.split(b"&")
    if kind == "multipart/form-data":
        at = body.find(b'name="List-Unsubscribe"')
        return at >= 0 and b"One-Click" in body[at : at + 200]
    return False


@router.get("/p/{token}")
async def preferences_page(request: Request, token: str, services: ServicesDep) -> Response:
    """The recipient's categories, a checkbox per channel."""
    claim = await services.optouts.opened(LinkPurpose.PREFERENCES, token, _client(request))
    return await _page(request, token, services, claim, saved=False)


@router.post("/p/{token}")
async def save_preferences(request: Request, token: str, services: ServicesDep) -> Response:
    """Store the page's choices: a box left unticked is a category not wanted there."""
    form = await read_form(request, MAX_PAGE_BYTES, MAX_PAGE_FIELDS)
    claim = await services.optouts.opened(LinkPurpose.PREFERENCES, token, _client(request))
    if not same_origin(request):
        raise Forbidden("This form came from another site.")
    if not constant_time_equals(form.get("csrf", 64), services.optouts.links.form_token(token)):
        raise Forbidden("This form has expired. Open the link again.")
    rows = await services.optouts.page(claim)
    wanted = {
        row.category.key: {c: form.has(f"{row.category.key}.{c}") for c in _CHANNELS}
        for row in rows
    }
    await services.optouts.save(claim, wanted)
    return await _page(request, token, services, claim, saved=True)


async def _page(
    request: Request, token: str, services: Services, claim: LinkClaim, saved: bool
) -> Response:
    rows = await services.optouts.page(claim)
    return render(
        request,
        "preferences.html",
        rows=rows,
        channels=_CHANNELS,
        form_token=services.optouts.links.form_token(token),
        saved=saved,
    )
