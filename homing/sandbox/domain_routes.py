"""Each vendor's sending-domain API as the sandbox speaks it, after the vendors' API
references (SendGrid domain authentication, Resend domains, Postmark domains API,
Mailgun domains API).

- SendGrid: ``POST /v3/whitelabel/domains`` → 201 with three CNAMEs under ``dns``;
  ``POST …/{id}/validate``; ``GET …/{id}``.
- Resend: ``POST /domains`` → ``not_started`` with records; ``POST /domains/{id}/verify``
  is asynchronous (``pending`` until the next read); ``GET /domains/{id}``.
- Postmark: the Account token (``X-Postmark-Account-Token``), not the server token;
  new DKIM under ``DKIMPending*``; ``PUT /domains/{id}/verifyDkim`` and
  ``…/verifyReturnPath``, matched case-insensitively.
- Mailgun: ``POST /v4/domains`` (a form), ``PUT /v4/domains/{name}/verify``,
  ``GET /v4/domains/{name}``; the same under ``/v3``, where Mailgun's SDK sends them.
"""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from homing.sandbox import mailgun as mailgun_api
from homing.sandbox import postmark as postmark_api
from homing.sandbox import resend as resend_api
from homing.sandbox import sendgrid as sendgrid_api
from homing.sandbox.domain_state import (
    mailgun_body,
    postmark_body,
    resend_body,
    sendgrid_body,
)
from homing.sandbox.form_bodies import read_form
from homing.sandbox.state import SandboxState


def _mailgun_ok(request: Request) -> bool:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    try:
        user, _, key = base64.b64decode(token, validate=True).decode().partition(":")
    except ValueError:
        return False
    return scheme.lower() == "basic" and user == "api" and bool(key) and "invalid" not in key


def _bearer_ok(request: Request) -> bool:
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and bool(key.strip()) and "invalid" not in key


async def _json(request: Request) -> dict[str, Any]:
    try:
        payload = json.loads(await request.body())
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def sendgrid_routes(state: SandboxState) -> list[BaseRoute]:
    """Domain authentication routes, to add under ``/sendgrid``."""

    def unauthorized() -> Response:
        return sendgrid_api.errors_response(401, [("authorization required", None)])

    async def create(request: Request) -> Response:
        if not _bearer_ok(request):
            return unauthorized()
        name = str((await _json(request)).get("domain") or "")
        if "." not in name:
            return sendgrid_api.errors_response(400, [("domain is required", "domain")])
        domain = state.domains.add("sendgrid", name, str(len(state.domains) + 1001))
        if domain is None:
            problem = ("A domain with this name already exists.", "domain")
            return sendgrid_api.errors_response(400, [problem])
        return JSONResponse(sendgrid_body(domain), status_code=201)

    async def read(request: Request) -> Response:
        domain = state.domains.get("sendgrid", request.path_params["id"])
        if not _bearer_ok(request):
            return unauthorized()
        if domain is None:
            return sendgrid_api.errors_response(404, [("resource not found", None)])
        if request.url.path.endswith("/validate"):
            domain.verify()
            results = {
                key: {"valid": domain.verified, "reason": None if domain.verified else "not found"}
                for key in ("mail_cname", "dkim1", "dkim2")
            }
            body = {"id": int(domain.id), "valid": domain.verified, "validation_results": results}
            return JSONResponse(body)
        return JSONResponse(sendgrid_body(domain))

    return [
        Route("/v3/whitelabel/domains", create, methods=["POST"]),
        Route("/v3/whitelabel/domains/{id}", read, methods=["GET"]),
        Route("/v3/whitelabel/domains/{id}/validate", read, methods=["POST"]),
    ]


def resend_routes(state: SandboxState) -> list[BaseRoute]:
    """Domain routes, to add under ``/resend``."""

    async def create(request: Request) -> Response:
        if not _bearer_ok(request):
            return resend_api.error_response(401, "missing_api_key", "Missing API key")
        name = str((await _json(request)).get("name") or "")
        if "." not in name:
            return resend_api.error_response(422, "missing_required_field", "Missing `name`.")
        domain = state.domains.add("resend", name, str(uuid.uuid4()))
        if domain is None:
            message = "The domain has been registered already."
            return resend_api.error_response(403, "validation_error", message)
        return JSONResponse(resend_body(domain))

    async def read(request: Request) -> Response:
        if not _bearer_ok(request):
            return resend_api.error_response(401, "missing_api_key", "Missing API key")
        domain = state.domains.get("resend", request.path_params["id"])
        if domain is None:
            return resend_api.error_response(404, "not_found", "Domain not found")
        if request.method == "POST":
            # Asynchronous at Resend: `pending` now, the outcome on the next read.
            domain.verify()
            return JSONResponse({"object": "domain", "id": domain.id})
        return JSONResponse(resend_body(domain))

    return [
        Route("/domains", create, methods=["POST"]),
        Route("/domains/{id}", read, methods=["GET"]),
        Route("/domains/{id}/verify", read, methods=["POST"]),
    ]


def _postmark_account(request: Request) -> Response | None:
    token = request.headers.get("x-postmark-account-token", "").strip()
    if not token:
        message = "Request does not contain a valid Account token."
        return postmark_api.error_response(401, 10, message)
    if "invalid" in token:
        return postmark_api.error_response(
            401, 10, "Request does not contain a valid Account token."
        )
    return None


def _postmark_verify(state: SandboxState, request: Request) -> Response:
    action = request.path_params["action"].lower()
    if action not in ("verifydkim", "verifyreturnpath"):
        return postmark_api.error_response(404, 404, "Not found.")
    if (refusal := _postmark_account(request)) is not None:
        return refusal
    domain = state.domains.get("postmark", request.path_params["id"])
    if domain is None:
        return postmark_api.error_response(404, 510, "Domain not found.")
    if action == "verifydkim":
        domain.dkim_verified = domain.verifiable
    else:
        domain.return_path_verified = domain.verifiable and domain.return_path is not None
    domain.verify_requested = True
    return JSONResponse(postmark_body(domain))


def postmark_routes(state: SandboxState) -> list[BaseRoute]:
    """Domain routes (Account token), to add under ``/postmark``."""

    async def create(request: Request) -> Response:
        if (refusal := _postmark_account(request)) is not None:
            return refusal
        payload = await _json(request)
        name = str(payload.get("Name") or "")
        if "." not in name:
            return postmark_api.error_response(422, 300, "Invalid 'Name'.")
        number = str(len(state.domains) + 3001)
        return_path = payload.get("ReturnPathDomain") or None
        domain = state.domains.add("postmark", name, number, return_path)
        if domain is None:
            return postmark_api.error_response(422, 300, "This domain already exists.")
        return JSONResponse(postmark_body(domain))

    async def read(request: Request) -> Response:
        if (refusal := _postmark_account(request)) is not None:
            return refusal
        domain = state.domains.get("postmark", request.path_params["id"])
        if domain is None:
            return postmark_api.error_response(404, 510, "Domain not found.")
        return JSONResponse(postmark_body(domain))

    async def verify(request: Request) -> Response:
        return _postmark_verify(state, request)

    return [
        Route("/domains", create, methods=["POST"]),
        Route("/domains/{id}", read, methods=["GET"]),
        Route("/domains/{id}/{action}", verify, methods=["PUT"]),
    ]


def mailgun_routes(state: SandboxState) -> list[BaseRoute]:
    """Domain routes (``/v4``, and ``/v3`` as Mailgun's SDK calls them), to add under
    ``/mailgun``."""

    async def create(request: Request) -> Response:
        if not _mailgun_ok(request):
            return mailgun_api.forbidden()
        name = next((v for k, v in await read_form(request) if k == "name"), "")
        if "." not in name:
            return mailgun_api.message_response(400, "Missing parameter 'name'")
        domain = state.domains.add("mailgun", name, uuid.uuid4().hex)
        if domain is None:
            return mailgun_api.message_response(400, "This domain name is already taken")
        return JSONResponse(mailgun_body(domain, "Domain DNS records have been created"))

    async def read(request: Request) -> Response:
        if not _mailgun_ok(request):
            return mailgun_api.forbidden()
        domain = state.domains.by_name("mailgun", request.path_params["name"])
        if domain is None:
            return mailgun_api.message_response(404, "Domain not found")
        if request.method == "PUT":
            domain.verify()
            return JSONResponse(mailgun_body(domain, "Domain DNS records have been updated"))
        return JSONResponse(mailgun_body(domain, "Domain DNS records"))

    # Homing calls /v4; Mailgun's own SDK (mailgun-python, mailgun/routes.py) still
    # routes domains to /v3, which Mailgun serves with the same bodies.
    return [
        route
        for version in ("/v4", "/v3")
        for route in (
            Route(f"{version}/domains", create, methods=["POST"]),
            Route(f"{version}/domains/{{name}}", read, methods=["GET"]),
            Route(f"{version}/domains/{{name}}/verify", read, methods=["PUT"]),
        )
    ]
