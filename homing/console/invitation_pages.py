"""Accepting an invitation: ``/invitations/{token}``, with no session needed.

The page names the tenant and the role. For an email with no user yet, when the link
proves the mailbox (it went by mail, or the operator's command made it), it asks for a
new password (twice): the user is made, the membership added and the browser signed in,
in one step. A link that was shown to an owner instead offers to mail the invitation
to its address first (``POST /invitations/{token}/mail``), or, where Homing cannot
mail, says so (``homing.managers.invitations``). For an email that has a user it asks
for that user's password: the invitee signs in as that email (locked out and
throttled like the sign-in form), then the membership is added. An unknown, used,
revoked or expired token is one same 404 page. Opening and posting links is throttled
per client address. The form has no session yet, so, like the sign-in form, it is
refused when posted from another site, and it carries a token of its own: an HMAC keyed
by the invitation's token.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from homing.console.access import ServicesDep
from homing.console.forms import Form, read_form
from homing.console.routing import ConsoleRoute, status_of
from homing.console.signin import same_origin, signed_in_to
from homing.console.templating import render
from homing.crypto import constant_time_equals, csrf_token
from homing.domain.invitations import Invitation
from homing.errors import Conflict, Forbidden, InvalidRequest, RateLimited, Unauthenticated
from homing.managers.people import MAX_PASSWORD
from homing.services import Services

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

_REFUSED = (Conflict, Forbidden, InvalidRequest, RateLimited, Unauthenticated)


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _mode(services: Services, invitation: Invitation, has_user: bool) -> str:
    """What the page offers: sign in, a new password, the link by mail, or neither."""
    if has_user:
        return "sign_in"
    if services.invitations.proven(invitation):
        return "new"
    return "mail" if services.invitations.mails else "no_mail"


def _page(
    request: Request,
    token: str,
    invitation: Invitation,
    mode: str,
    error: str | None = None,
    status: int = 200,
) -> Response:
    return render(
        request,
        "invitation.html",
        status,
        invitation=invitation,
        has_user=mode == "sign_in",
        mode=mode,
        form_token=csrf_token(token),
        error=error,
    )


def _check_form(request: Request, token: str, form: Form) -> None:
    if not same_origin(request):
        raise Forbidden("This form came from another site.")
    if not constant_time_equals(form.get("csrf", 64), csrf_token(token)):
        raise Forbidden("This form has expired. Open the invitation's link again.")


@router.get("/invitations/{token}")
async def invitation(request: Request, token: str, services: ServicesDep) -> Response:
    found, has_user = await services.invitations.opened(token, _client(request))
    return _page(request, token, found, _mode(services, found, has_user))


@router.post("/invitations/{token}/mail")
async def mail(request: Request, token: str, services: ServicesDep) -> Response:
    """Send the invitation to its address under a new token: the mailbox's proof."""
    form = await read_form(request)
    found, has_user = await services.invitations.opened(token, _client(request))
    mode = _mode(services, found, has_user)
    try:
        _check_form(request, token, form)
        await services.invitations.remail(token, found)
    except _REFUSED as exc:
        return _page(request, token, found, mode, exc.message, status_of(exc))
    return _page(request, token, found, "sent")


@router.post("/invitations/{token}")
async def accept(request: Request, token: str, services: ServicesDep) -> Response:
    """Accept: a new user with the chosen password, or the existing user signed in."""
    form = await read_form(request)
    found, has_user = await services.invitations.opened(token, _client(request))
    mode = _mode(services, found, has_user)
    try:
        _check_form(request, token, form)
        password = form.get("password", MAX_PASSWORD)
        if has_user:
            session = await services.invitations.accept_signed_in(found, password, _client(request))
        else:
            if form.get("confirm", MAX_PASSWORD) != password:
                raise InvalidRequest("The two passwords differ: type the same one twice.")
            session = await services.invitations.accept_new(found, password)
    except _REFUSED as exc:
        return _page(request, token, found, mode, exc.message, status_of(exc))
    return signed_in_to(request, services, session, f"/t/{found.tenant.id}/")
