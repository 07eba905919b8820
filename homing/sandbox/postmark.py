"""Postmark as the sandbox speaks it: ``POST /email`` and ``GET /server``.

Success is 200 with ``ErrorCode: 0``; failures are ``{"ErrorCode", "Message"}``: 401
with code 10 for a missing or bad ``X-Postmark-Server-Token`` (one containing
``invalid``), 422 with code 300 for a bad request and 402 for bad JSON, 406 for a
recipient at ``inactive.example`` (Postmark's inactive, i.e. suppressed, recipients).

``POST /email/batch`` (postmarkapp.com/developer/user-guide/send-email-with-api/
batch-emails) takes a JSON array of up to 500 messages, at most 50 MB in all, and
answers 200 with one result per message in the order sent, each ``{"ErrorCode",
"Message", "MessageID", "To", "SubmittedAt"}``: an invalid message fails alone (its
ErrorCode, e.g. 300), the others are sent. More than 500 is refused whole (ErrorCode
410), as is a body over 50 MB (HTTP 413).

Header fields come in ``Headers``, an array of ``{"Name", "Value"}``
(postmarkapp.com/developer/api/email-api, "Headers"), on a single send and on each
message of a batch. Postmark documents no limits of its own for them; the sandbox
answers one that is not an array of string pairs with 422 ErrorCode 403 (Incompatible
JSON input), per message in a batch.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from email.utils import getaddresses, parseaddr
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.faults import guarded, retry_after_seconds, status_phrase
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER = "postmark"
MAX_RECIPIENTS = 50
MAX_BATCH = 500
# Recipients at this domain are the sandbox's inactive (suppressed) ones: ErrorCode 406.
INACTIVE_DOMAIN = "inactive.example"
INACTIVE_RECIPIENT = 406
_INACTIVE = (
    "You tried to send to recipient(s) that have been marked as inactive. Found inactive "
    "addresses: the recipient. Inactive recipients are ones that have generated a hard "
    "bounce, a spam complaint, or a manual suppression."
)
MAX_BATCH_BYTES = 50 * 1024 * 1024
TOO_MANY_BATCH_MESSAGES = 410
_NO_TOKEN = (
    "No Account or Server API tokens were supplied in the HTTP headers. Please add a "
    "header for either X-Postmark-Server-Token or X-Postmark-Account-Token."
)
_BAD_TOKEN = "Request does not contain a valid Server token."
_FAULTS = {
    401: (10, _BAD_TOKEN),
    422: (300, "Invalid email request"),
    429: (429, "Rate limit exceeded. Please retry the request later."),
    503: (100, "Postmark is down for maintenance. Please retry the request later."),
}


def error_response(
    status: int, code: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Postmark's error body: an API ``ErrorCode`` and a ``Message``."""
    return JSONResponse({"ErrorCode": code, "Message": message}, status, headers)


def fault_response(status: int, retry_after: float | None) -> JSONResponse:
    """The reply Postmark gives for ``status`` (it sends no rate-limit headers itself)."""
    code, message = _FAULTS.get(status, (status, status_phrase(status)))
    header = retry_after_seconds(retry_after)
    return error_response(
        status, code, message, None if header is None else {"Retry-After": header}
    )


def _token(request: Request) -> str | JSONResponse:
    token = request.headers.get("x-postmark-server-token", "").strip()
    if not token:
        return error_response(401, 10, _NO_TOKEN)
    if "invalid" in token:
        return error_response(401, 10, _BAD_TOKEN)
    return token


def _addresses(value: Any) -> list[str]:
    if not isinstance(value, str):
        return []
    return [address for _, address in getaddresses([value]) if address]


def _problem(payload: Any) -> JSONResponse | None:
    if not isinstance(payload, dict):
        return error_response(422, 402, "Received invalid JSON input.")
    sender = parseaddr(str(payload.get("From") or ""))[1]
    if "@" not in sender:
        return error_response(422, 300, f"Invalid 'From' address: '{payload.get('From') or ''}'.")
    recipients = [a for field in ("To", "Cc", "Bcc") for a in _addresses(payload.get(field))]
    if not recipients:
        return error_response(422, 300, "Zero recipients specified")
    for address in recipients:
        if "@" not in address:
            message = (
                f"Error parsing 'To': Illegal email address '{address}'. "
                "It must contain the '@' symbol."
            )
            return error_response(422, 300, message)
    if any(address.endswith("@" + INACTIVE_DOMAIN) for address in recipients):
        return error_response(422, INACTIVE_RECIPIENT, _INACTIVE)
    if len(recipients) > MAX_RECIPIENTS:
        return error_response(422, 300, "You may not have more than 50 recipients per message.")
    if not payload.get("TextBody") and not payload.get("HtmlBody"):
        return error_response(422, 300, "Provide either email TextBody or HtmlBody or both.")
    if payload.get("Headers") is not None and not _valid_headers(payload["Headers"]):
        message = "Incompatible JSON input: Headers is an array of {Name, Value} strings."
        return error_response(422, 403, message)
    return None


def _valid_headers(headers: Any) -> bool:
    return isinstance(headers, list) and all(
        isinstance(item, dict)
        and isinstance(item.get("Name"), str)
        and bool(item["Name"])
        and isinstance(item.get("Value"), str)
        for item in headers
    )


def _record(payload: dict[str, Any], message_id: str, request: Request) -> RecordedMessage:
    metadata = payload.get("Metadata")
    job_id = metadata.get("hjid") if isinstance(metadata, dict) else None
    return RecordedMessage(
        provider=PROVIDER,
        to=tuple(_addresses(payload.get("To"))),
        sender=parseaddr(str(payload["From"]))[1],
        subject=payload.get("Subject"),
        text=payload.get("TextBody"),
        html=payload.get("HtmlBody"),
        message_id=message_id,
        job_id=None if job_id is None else str(job_id),
        idempotency_key=request.headers.get("idempotency-key"),
        headers=tuple((item["Name"], item["Value"]) for item in payload.get("Headers") or []),
    )


async def send(state: SandboxState, request: Request) -> Response:
    """``POST /email``: validate, record, answer 200 with ``ErrorCode: 0``."""
    token = _token(request)
    if isinstance(token, JSONResponse):
        return token
    try:
        payload = json.loads(await request.body())
    except ValueError:
        return error_response(422, 402, "Received invalid JSON input.")
    if (problem := _problem(payload)) is not None:
        return problem
    message_id = str(uuid.uuid4())
    state.recorder.record(_record(payload, message_id, request))
    return JSONResponse(
        {
            "To": payload.get("To"),
            "SubmittedAt": datetime.now(UTC).isoformat(),
            "MessageID": message_id,
            "ErrorCode": 0,
            "Message": "OK",
        }
    )


async def send_batch(state: SandboxState, request: Request) -> Response:
    """``POST /email/batch``: one result per message; a bad message fails alone."""
    token = _token(request)
    if isinstance(token, JSONResponse):
        return token
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BATCH_BYTES:
        return error_response(413, 413, "Payload too large.")
    raw = await request.body()
    if len(raw) > MAX_BATCH_BYTES:
        return error_response(413, 413, "Payload too large.")
    try:
        payload = json.loads(raw)
    except ValueError:
        return error_response(422, 402, "Received invalid JSON input.")
    if not isinstance(payload, list):
        return error_response(422, 403, "Incompatible JSON input: a batch is an array.")
    if len(payload) > MAX_BATCH:
        message = f"Too many batch messages ({len(payload)}). Maximum is {MAX_BATCH}."
        return error_response(422, TOO_MANY_BATCH_MESSAGES, message)
    results = []
    for item in payload:
        problem = _problem(item)
        to = item.get("To") if isinstance(item, dict) else None
        if problem is not None:
            body = json.loads(bytes(problem.body))
            results.append({"ErrorCode": body["ErrorCode"], "Message": body["Message"], "To": to})
            continue
        message_id = str(uuid.uuid4())
        state.recorder.record(_record(item, message_id, request))
        results.append(
            {
                "To": to,
                "SubmittedAt": datetime.now(UTC).isoformat(),
                "MessageID": message_id,
                "ErrorCode": 0,
                "Message": "OK",
            }
        )
    return JSONResponse(results)


async def server(request: Request) -> Response:
    """``GET /server``: the server the token belongs to."""
    token = _token(request)
    if isinstance(token, JSONResponse):
        return token
    return JSONResponse(
        {
            "ID": 1,
            "Name": "Homing sandbox",
            "ApiTokens": [token],
            "Color": "blue",
            "SmtpApiActivated": True,
            "DeliveryType": "Live",
            "InboundAddress": "inbound@sandbox.homing.test",
            "TrackOpens": False,
            "TrackLinks": "None",
        }
    )


def router(state: SandboxState) -> Router:
    """The Postmark routes, to mount under ``/postmark``."""

    async def send_endpoint(request: Request) -> Response:
        return await send(state, request)

    async def batch_endpoint(request: Request) -> Response:
        return await send_batch(state, request)

    return Router(
        routes=[
            Route(
                "/email/batch",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, batch_endpoint),
                methods=["POST"],
            ),
            Route(
                "/email",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["POST"],
            ),
            Route(
                "/server",
                guarded(state, PROVIDER, FaultScope.CHECK, fault_response, server),
                methods=["GET"],
            ),
        ]
    )
