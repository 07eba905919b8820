"""Vonage as the sandbox speaks it: the Messages API ``POST /v1/messages`` (SMS only)
and the Application API ``GET /v2/applications`` as a credential check.

HTTP Basic ``api_key:api_secret``: a secret containing ``invalid`` is 401. Errors are
RFC 7807 problem documents. Success is 202 ``{"message_uuid"}``; ``client_ref`` is
recorded as the job id.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.faults import guarded, retry_after_seconds, status_phrase
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER = "vonage"
MAX_TEXT = 1000 * 4
_ERRORS = "https://developer.vonage.com/api-errors"
_FAULTS = {
    401: ("unauthorized", "Unauthorized", "You did not provide correct credentials."),
    402: ("messages-olympus#1020", "Low balance", "This request could not be performed."),
    422: (
        "messages-olympus#1150",
        "Invalid params",
        "The value of one or more parameters is invalid.",
    ),
    429: ("#throttled", "Rate Limit Hit", "Please wait, then retry your request"),
    500: ("#internal", "Internal Error", "An internal error occurred."),
}


def problem(
    status: int, kind: str, title: str, detail: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A problem document as Vonage writes them."""
    body = {
        "type": f"{_ERRORS}/{kind}",
        "title": title,
        "detail": detail,
        "instance": str(uuid.uuid4()),
    }
    return JSONResponse(body, status, headers, media_type="application/problem+json")


def fault_response(status: int, retry_after: float | None) -> JSONResponse:
    """The reply Vonage gives for ``status``."""
    kind, title, detail = _FAULTS.get(status, ("#error", status_phrase(status), "Error"))
    header = retry_after_seconds(retry_after)
    return problem(status, kind, title, detail, None if header is None else {"Retry-After": header})


def _authorised(request: Request) -> str | JSONResponse:
    header = request.headers.get("authorization", "")
    scheme, _, encoded = header.partition(" ")
    try:
        key, _, secret = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        key, secret = "", ""
    if scheme.lower() != "basic" or not key or not secret or "invalid" in secret:
        return fault_response(401, None)
    return key


def _invalid(detail: str) -> JSONResponse:
    kind, title, _ = _FAULTS[422]
    return problem(422, kind, title, detail)


def _check(payload: Any) -> JSONResponse | None:
    if not isinstance(payload, dict):
        return _invalid("The request body is not a JSON object.")
    if payload.get("channel") != "sms" or payload.get("message_type") != "text":
        return _invalid("Only channel 'sms' with message_type 'text' is emulated.")
    to = payload.get("to")
    if not isinstance(to, str) or not to.isdigit() or not 7 <= len(to) <= 15:
        return _invalid("The `to` parameter must be a number in E.164 format without '+'.")
    sender = payload.get("from")
    if not isinstance(sender, str) or not sender:
        return _invalid("The `from` parameter is required.")
    text = payload.get("text")
    if not isinstance(text, str) or not text or len(text) > MAX_TEXT:
        return _invalid("The `text` parameter must be 1 to 4000 characters.")
    return None


async def send(state: SandboxState, request: Request) -> Response:
    """``POST /v1/messages``: authenticate, validate, record, answer 202."""
    key = _authorised(request)
    if isinstance(key, JSONResponse):
        return key
    try:
        payload = json.loads(await request.body())
    except ValueError:
        return _invalid("The request body is not valid JSON.")
    if (refused := _check(payload)) is not None:
        return refused
    message_uuid = str(uuid.uuid4())
    ref = payload.get("client_ref")
    state.recorder.record(
        RecordedMessage(
            provider=PROVIDER,
            to=("+" + payload["to"],),
            sender=payload["from"],
            subject=None,
            text=payload["text"],
            html=None,
            message_id=message_uuid,
            job_id=ref if isinstance(ref, str) else None,
        )
    )
    return JSONResponse({"message_uuid": message_uuid}, 202)


async def applications(request: Request) -> Response:
    """``GET /v2/applications``: one page, empty, for good credentials, with the HAL
    ``_links`` Vonage sends and its SDK requires (vonage-python-sdk
    ``application/tests/data/list_applications_basic.json``). ``total_pages`` is 1, so
    a client that pages until ``page == total_pages`` stops here."""
    key = _authorised(request)
    if isinstance(key, JSONResponse):
        return key
    size = request.query_params.get("page_size", "")
    page_size = int(size) if size.isdigit() and len(size) <= 3 and 1 <= int(size) <= 100 else 100
    return JSONResponse(
        {
            "page_size": page_size,
            "page": 1,
            "total_items": 0,
            "total_pages": 1,
            "_embedded": {"applications": []},
            "_links": {
                "self": {"href": f"/v2/applications?page_size={page_size}&page=1"},
                "first": {"href": f"/v2/applications?page_size={page_size}"},
                "last": {"href": f"/v2/applications?page_size={page_size}&page=1"},
            },
        }
    )


def router(state: SandboxState) -> Router:
    """The Vonage routes, to mount under ``/vonage``."""

    async def send_endpoint(request: Request) -> Response:
        return await send(state, request)

    return Router(
        routes=[
            Route(
                "/v1/messages",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["POST"],
            ),
            Route(
                "/v2/applications",
                guarded(state, PROVIDER, FaultScope.CHECK, fault_response, applications),
                methods=["GET"],
            ),
        ]
    )
