"""Resend as the sandbox speaks it: ``POST /emails``, ``POST /emails/batch`` and ``GET /domains``.

Success is 200 ``{"id"}``; errors are ``{"statusCode", "message", "name"}``. Requests
without a ``User-Agent`` get Cloudflare's 403. ``Idempotency-Key`` replays the stored
reply for the same body (recording nothing) and answers 409 for a different one. A key
containing ``invalid`` is rejected; one containing ``restricted`` is send-only.

``POST /emails/batch`` (resend.com/docs/api-reference/emails/send-batch-emails) takes a
JSON array of up to 100 email objects and answers 200 ``{"data": [{"id"}, ...]}`` in
the order sent. Validation is strict by default: one invalid email refuses the whole
batch (422, nothing recorded). ``x-batch-validation: permissive`` sends the valid ones
and lists the rest as ``errors: [{"index", "message"}]``. Attachments and scheduling
are not taken in a batch (422). ``Idempotency-Key`` works as for a single send.

Header fields come in ``headers``, an object of string values
(resend.com/docs/api-reference/emails/send-email, ``headers``), on a single send and on
each email of a batch. Resend documents no refusal of its own for them; the sandbox
answers one that is not an object of strings with 422 ``validation_error``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from email.utils import getaddresses, parseaddr
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.faults import guarded, status_phrase
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER = "resend"
MAX_BATCH = 100
_BATCH_REFUSED_FIELDS = ("attachments", "scheduled_at")
_TAG = re.compile(r"[A-Za-z0-9_-]{1,256}")
_MISSING_KEY = (
    "Missing API key in the authorization header. Include the following header in the "
    "request: Authorization: Bearer YOUR_API_KEY"
)
_BAD_FROM = (
    "Invalid `from` field. The email address needs to follow the `email@example.com` or "
    "`Name <email@example.com>` format."
)
_FAULTS = {
    400: ("validation_error", "Invalid request."),
    401: ("missing_api_key", _MISSING_KEY),
    403: ("invalid_api_key", "API key is invalid"),
    404: ("not_found", "The requested endpoint does not exist."),
    409: (
        "concurrent_idempotent_requests",
        "Same idempotency key used while original request is still in progress.",
    ),
    422: ("invalid_parameter", "Invalid parameter."),
    429: ("rate_limit_exceeded", "Too many requests. You can only make 2 requests per second."),
    500: ("application_error", "An unexpected error occurred."),
    503: ("service_unavailable", "Service unavailable."),
}


def error_response(
    status: int, name: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Resend's error body."""
    body = {"statusCode": status, "message": message, "name": name}
    return JSONResponse(body, status_code=status, headers=headers)


def fault_response(status: int, retry_after: float | None) -> JSONResponse:
    """The reply Resend gives for ``status``; 429 always carries ``retry-after``."""
    name, message = _FAULTS.get(status, ("application_error", status_phrase(status)))
    headers: dict[str, str] = {}
    if status == 429:
        wait = str(max(1, math.ceil(retry_after or 1)))
        headers = {
            "ratelimit-limit": "2",
            "ratelimit-remaining": "0",
            "ratelimit-reset": wait,
            "retry-after": wait,
        }
    return error_response(status, name, message, headers)


def _api_key(request: Request, invalid_status: int) -> str | Response:
    if not request.headers.get("user-agent", "").strip():
        return PlainTextResponse("error code: 1010", status_code=403)
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return error_response(401, "missing_api_key", _MISSING_KEY)
    if "invalid" in key:
        return error_response(invalid_status, "validation_error", "API key is invalid")
    return key


def _recipients(value: Any) -> list[str]:
    values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [address for _, address in getaddresses([str(item) for item in values]) if address]


def _problem(payload: Any) -> JSONResponse | None:
    if not isinstance(payload, dict):
        return error_response(422, "validation_error", "The request body must be an object.")
    for field in ("from", "to", "subject"):
        if not payload.get(field):
            return error_response(422, "missing_required_field", f"Missing `{field}` field.")
    if "@" not in parseaddr(str(payload["from"]))[1]:
        return error_response(422, "validation_error", _BAD_FROM)
    if not _recipients(payload["to"]):
        return error_response(422, "validation_error", "Invalid `to` field.")
    headers = payload.get("headers")
    if headers is not None and not (
        isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())
    ):
        message = "Invalid `headers` field: an object of string values."
        return error_response(422, "validation_error", message)
    tags = payload.get("tags") or []
    if not isinstance(tags, list) or not all(_valid_tag(tag) for tag in tags):
        message = "Tags should only contain ASCII letters, numbers, underscores, or dashes."
        return error_response(422, "validation_error", message)
    return None


def _valid_tag(tag: Any) -> bool:
    return isinstance(tag, dict) and all(
        isinstance(tag.get(part), str) and _TAG.fullmatch(tag[part]) for part in ("name", "value")
    )


def _record(payload: dict[str, Any], email_id: str, idempotency_key: str | None) -> RecordedMessage:
    tags = {tag["name"]: tag["value"] for tag in payload.get("tags") or []}
    return RecordedMessage(
        provider=PROVIDER,
        to=tuple(_recipients(payload["to"])),
        sender=parseaddr(str(payload["from"]))[1],
        subject=str(payload["subject"]),
        text=payload.get("text"),
        html=payload.get("html"),
        message_id=email_id,
        job_id=tags.get("hjid"),
        idempotency_key=idempotency_key,
        headers=tuple((str(k), str(v)) for k, v in (payload.get("headers") or {}).items()),
    )


async def send(state: SandboxState, request: Request) -> Response:
    """``POST /emails``: validate, honour ``Idempotency-Key``, record, answer ``{"id"}``."""
    key = _api_key(request, invalid_status=401)
    if isinstance(key, Response):
        return key
    idempotency_key = request.headers.get("idempotency-key")
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= 256:
        message = "The key must be between 1-256 chars."
        return error_response(400, "invalid_idempotency_key", message)
    try:
        payload = json.loads(await request.body())
    except ValueError:
        return error_response(400, "validation_error", "The request body is not valid JSON.")
    if (problem := _problem(payload)) is not None:
        return problem
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    fingerprint = hashlib.sha256(canonical.encode()).hexdigest()
    cache_key = f"{key}\0{idempotency_key}"
    if idempotency_key is not None and (stored := state.idempotency.get(cache_key)):
        if stored.fingerprint != fingerprint:
            message = "Same idempotency key used with a different request payload."
            return error_response(409, "invalid_idempotent_request", message)
        return Response(stored.body, stored.status_code, media_type="application/json")
    email_id = str(uuid.uuid4())
    state.recorder.record(_record(payload, email_id, idempotency_key))
    body = json.dumps({"id": email_id}).encode()
    if idempotency_key is not None:
        state.idempotency.put(cache_key, fingerprint, 200, body)
    return Response(body, 200, media_type="application/json")


def _batch_problems(payload: list[Any]) -> list[tuple[int, str]]:
    """The index and message of every email a batch cannot take."""
    problems: list[tuple[int, str]] = []
    for index, item in enumerate(payload):
        problem = _problem(item)
        if problem is None and any(item.get(f) for f in _BATCH_REFUSED_FIELDS):
            problem = error_response(
                422, "validation_error", "`attachments` and `scheduled_at` are not supported."
            )
        if problem is not None:
            problems.append((index, json.loads(bytes(problem.body))["message"]))
    return problems


async def _batch_payload(request: Request) -> list[Any] | Response:
    try:
        payload = json.loads(await request.body())
    except ValueError:
        return error_response(400, "validation_error", "The request body is not valid JSON.")
    if not isinstance(payload, list) or not payload:
        return error_response(422, "validation_error", "The request body must be an array.")
    if len(payload) > MAX_BATCH:
        message = f"Too many emails in the batch: at most {MAX_BATCH} per request."
        return error_response(422, "validation_error", message)
    return payload


def _batch_headers(request: Request) -> tuple[str, str | None, str] | Response:
    """The API key, the idempotency key and the validation mode, or the refusal."""
    key = _api_key(request, invalid_status=401)
    if isinstance(key, Response):
        return key
    idempotency_key = request.headers.get("idempotency-key")
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= 256:
        message = "The key must be between 1-256 chars."
        return error_response(400, "invalid_idempotency_key", message)
    mode = request.headers.get("x-batch-validation", "strict").strip().lower()
    if mode not in ("strict", "permissive"):
        return error_response(422, "validation_error", "Invalid batch validation mode.")
    return key, idempotency_key, mode


async def send_batch(state: SandboxState, request: Request) -> Response:
    """``POST /emails/batch``: up to 100 emails, strict or permissive validation."""
    headers = _batch_headers(request)
    if isinstance(headers, Response):
        return headers
    key, idempotency_key, mode = headers
    payload = await _batch_payload(request)
    if isinstance(payload, Response):
        return payload
    problems = _batch_problems(payload)
    if problems and mode == "strict":
        index, message = problems[0]
        return error_response(422, "validation_error", f"emails[{index}]: {message}")
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    fingerprint = hashlib.sha256(canonical.encode()).hexdigest()
    cache_key = f"{key}\0batch\0{idempotency_key}"
    if idempotency_key is not None and (stored := state.idempotency.get(cache_key)):
        if stored.fingerprint != fingerprint:
            message = "Same idempotency key used with a different request payload."
            return error_response(409, "invalid_idempotent_request", message)
        return Response(stored.body, stored.status_code, media_type="application/json")
    refused = {index for index, _ in problems}
    data = []
    for index, item in enumerate(payload):
        if index not in refused:
            email_id = str(uuid.uuid4())
            state.recorder.record(_record(item, email_id, idempotency_key))
            data.append({"id": email_id})
    answer: dict[str, Any] = {"data": data}
    if mode == "permissive":
        answer["errors"] = [{"index": i, "message": m} for i, m in problems]
    body = json.dumps(answer).encode()
    if idempotency_key is not None:
        state.idempotency.put(cache_key, fingerprint, 200, body)
    return Response(body, 200, media_type="application/json")


async def domains(request: Request) -> Response:
    """``GET /domains``: the team's domains; a send-only key gets 401 ``restricted_api_key``."""
    key = _api_key(request, invalid_status=400)
    if isinstance(key, Response):
        return key
    if "restricted" in key:
        message = "This API key is restricted to only send emails"
        return error_response(401, "restricted_api_key", message)
    return JSONResponse({"object": "list", "has_more": False, "data": []})


def router(state: SandboxState) -> Router:
    """The Resend routes, to mount under ``/resend``."""

    async def send_endpoint(request: Request) -> Response:
        return await send(state, request)

    async def batch_endpoint(request: Request) -> Response:
        return await send_batch(state, request)

    return Router(
        routes=[
            Route(
                "/emails/batch",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, batch_endpoint),
                methods=["POST"],
            ),
            Route(
                "/emails",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["POST"],
            ),
            Route(
                "/domains",
                guarded(state, PROVIDER, FaultScope.CHECK, fault_response, domains),
                methods=["GET"],
            ),
        ]
    )
