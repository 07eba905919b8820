"""Where providers post events. No API key: each request proves itself by signature.

An unknown provider account (or one without an inbound secret) is 404, a body over
HOMING_INBOUND_MAX_BODY_BYTES is 413 before it is read whole, and a request that does
not verify is 401 with the same words whatever was wrong with it (a one-time token
grafted onto another body included). A verified body is answered 200 with what became
of its events, repeats included: a vendor's retry of a body already taken is a repeat.
"""

from __future__ import annotations

from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from homing.api.deps import ServicesDep
from homing.api.error_responses import refusals
from homing.api.errors import envelope
from homing.api.middleware.body_limit import read_body
from homing.errors import NotFound, PayloadTooLarge, RateLimited, Unauthenticated
from homing.inbound.billing import BILLING_SOURCES
from homing.inbound.receiver import Scope
from homing.inbound.sources import KINDS, MAX_BODY_BYTES, SOURCES
from homing.inbound.verification import VerificationFailed
from homing.metrics import INBOUND_EVENTS
from homing.settings import Settings
from homing.vendors import VENDORS

# The result label of a body that failed verification (homing_inbound_events_total).
UNVERIFIED: Final = "unverified"

router = APIRouter(tags=["inbound"])

MAX_ACCOUNT_ID: Final = 36


def _either(titles: list[str]) -> str:
    return ", ".join(titles[:-1]) + " or " + titles[-1] if len(titles) > 1 else "".join(titles)


# The vendors each route serves, by their own spelling (the registries list them); the
# line break is the one docs/openapi.json has always carried.
BILLING_SUMMARY: Final = f"Billing events ({', '.join(s.title for s in BILLING_SOURCES.values())})"
EVENTS_DESCRIPTION: Final = (
    f"{_either([VENDORS[name].title for name in SOURCES])} events for one\nprovider account."
)


def _not_found() -> JSONResponse:
    return envelope(404, "not_found", "not found")


def _unverified() -> JSONResponse:
    return envelope(401, "unauthenticated", "the request could not be verified")


async def _body(request: Request, settings: Settings, provider: str = "") -> bytes:
    """The body, read up to HOMING_INBOUND_MAX_BODY_BYTES, or less for a provider whose
    events are small (its source's ``max_body_bytes``); PayloadTooLarge past it."""
    limit = min(settings.inbound.max_body_bytes, MAX_BODY_BYTES.get(provider, 1 << 62))
    return await read_body(request.headers.raw, request.receive, limit)


def public_url(request: Request, settings: Settings) -> str:
    """The URL the provider posted to, as it was given that URL: HOMING_PUBLIC_URL and
    the path (behind a proxy the request's own URL names the proxy's upstream), else
    the request's URL as received."""
    if settings.public_url is None:
        return str(request.url)
    query = request.url.query
    return settings.public_url.rstrip("/") + request.url.path + (f"?{query}" if query else "")


@router.post(
    "/inbound/billing/{vendor}",
    summary=BILLING_SUMMARY,
    responses=refusals(Unauthenticated, NotFound, PayloadTooLarge, RateLimited),
)
async def billing_events(vendor: str, request: Request, services: ServicesDep) -> JSONResponse:
    """A verified payment moves its tenant to the plan it paid for (once)."""
    source = BILLING_SOURCES.get(vendor)
    secret = None if source is None else source.secret(services.settings)
    if source is None or secret is None:
        return _not_found()
    body = await _body(request, services.settings)
    headers = dict(request.headers)
    try:
        source.verify(secret, body, headers)
    except VerificationFailed:
        return _unverified()
    summary = await services.inbound.receiver.receive(Scope(vendor), body, headers)
    return JSONResponse(summary.as_dict())


@router.post(
    "/inbound/{provider}/{account_id}",
    summary="Provider delivery events",
    description=EVENTS_DESCRIPTION,
    responses=refusals(Unauthenticated, NotFound, PayloadTooLarge, RateLimited),
)
async def provider_events(
    provider: str, account_id: str, request: Request, services: ServicesDep
) -> JSONResponse:
    """Delivery events for one provider account, from a vendor of ``SOURCES``."""
    if provider not in KINDS or len(account_id) > MAX_ACCOUNT_ID:
        return _not_found()
    target = await services.inbound.secrets.target(provider, account_id)
    if target is None:
        return _not_found()
    body = await _body(request, services.settings, provider)
    headers = dict(request.headers)
    scope = Scope(provider, target.provider_account_id, target.tenant_id)
    try:
        url = public_url(request, services.settings)
        nonce = services.inbound.verify(target, body, headers, url)
        summary = await services.inbound.receiver.receive(scope, body, headers, nonce)
    except VerificationFailed:
        # One per body: an unverified body's events are not read.
        INBOUND_EVENTS.labels(provider, UNVERIFIED).inc()
        return _unverified()
    return JSONResponse(summary.as_dict())
