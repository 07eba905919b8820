"""SendGrid v3 as the sandbox speaks it: ``POST /v3/mail/send`` and ``GET /v3/scopes``.

Success is 202 with an empty body and the id in ``X-Message-Id``; every error is
``{"errors": [{"message", "field", "help"}]}``. A key containing ``invalid`` is
revoked (401); one containing ``restricted`` lacks the ``mail.send`` scope (403).

Header fields come in ``headers``, an object of string values, on the message and on
each personalization (whose fields win). The documented refusals are 400s
(twilio.com/docs/sendgrid/api-reference/mail-send/errors, "Headers errors"): a value
that is not a string, a key twice (the sandbox compares keys ignoring case), a key
with non-ASCII characters or spaces, a reserved key (``RESERVED_HEADERS``).

Several personalizations make one request of several emails ("Personalizations
errors" on the same page): at most 1,000 personalizations and 1,000 recipients in all,
each address once in the whole array; each personalization's ``substitutions`` at most
10,000 bytes, and ``custom_args`` at most 10,000 bytes (the v3 spec, twilio/sendgrid-oai
``tsg_mail_v3.json``; the wording of those two refusals is the sandbox's own). Any
refusal is one 400 for the whole request, nothing sent. An accepted request is recorded
as one message per personalization, all under the request's one ``X-Message-Id``: its
recipients, its subject, the content with its substitutions made (in the subject too),
and the custom args and header fields of the message overridden by its own.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.faults import guarded, retry_after_seconds, status_phrase
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

PROVIDER = "sendgrid"
SCOPES = ("mail.send", "scopes.read", "user.profile.read", "whitelabel.read")
_FAULT_MESSAGES = {
    400: "Bad Request",
    401: "The provided authorization grant is invalid, expired, or revoked",
    403: "access forbidden",
    413: "too large",
    429: "too many requests",
    500: "internal server error",
    503: "service unavailable",
}
_NO_PERSONALIZATIONS = (
    "The personalizations field is required and must have at least one personalization."
)
_NO_TO = (
    "The to array is required for all personalization objects, and must have at least "
    "one email object with a valid email address."
)
_NO_FROM = (
    "The from object must be provided for every email send. It is an object that requires "
    "the email parameter, but may also contain a name parameter."
)
_NO_CONTENT = (
    "Unless a valid template_id is provided, the content parameter is required. There must "
    "be at least one defined content block. We typically suggest both text/plain and "
    "text/html blocks are included, but only one block is required."
)
_NO_SUBJECT = (
    "The subject is required. You can get around this requirement if you use a template "
    "with a subject defined or if every personalization has a subject defined."
)
# Keys SendGrid refuses in `headers`, compared ignoring case.
RESERVED_HEADERS = frozenset(
    {
        "x-sg-id",
        "x-sg-eid",
        "received",
        "dkim-signature",
        "content-type",
        "content-transfer-encoding",
        "to",
        "from",
        "subject",
        "reply-to",
        "cc",
        "bcc",
    }
)
_HEADER_KEY = re.compile(r"[!-~]+")
_HEADER_VALUES = "The header values must be strings."
_HEADER_DUPLICATE = "The headers cannot contain duplicate keys."
_HEADER_KEY_CHARACTERS = "Header keys cannot contain non-ASCII characters and empty spaces."
_HEADER_RESERVED = "Header can not be one of the reserved keys."
Problem = tuple[str, str | None]
MAX_PERSONALIZATIONS = 1000
MAX_RECIPIENTS = 1000
MAX_SUBSTITUTION_BYTES = 10_000
MAX_CUSTOM_ARGS_BYTES = 10_000
_TOO_MANY_PERSONALIZATIONS = (
    "The personalization block is limited to 1000 personalizations per API request. You "
    "have provided {n} personalizations. Please consider splitting this into multiple "
    "requests and resending your request."
)
_TOO_MANY_RECIPIENTS = "There is a limit of 1000 total recipients (to + cc + bcc) per request."
_REPEATED_ADDRESS = (
    "Each unique email address in the personalizations array should only be included once. "
    "You have included {email} more than once."
)
_SUBSTITUTIONS_TOO_LARGE = "Substitutions may not exceed 10,000 bytes per personalization."
_CUSTOM_ARGS_TOO_LARGE = "Custom args may not exceed 10,000 bytes."


class _Object(dict[str, Any]):
    """A JSON object that remembers its keys in order, repeats included."""

    keys_sent: list[str]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    result = _Object(pairs)
    result.keys_sent = [key for key, _ in pairs]
    return result


def _header_problems(headers: Any, field: str) -> list[Problem]:
    """SendGrid's refusals of one ``headers`` object (None: there is none)."""
    if headers is None:
        return []
    if not isinstance(headers, dict):
        return [(f"Invalid type. Expected: object, given: {type(headers).__name__}.", field)]
    keys = headers.keys_sent if isinstance(headers, _Object) else list(headers)
    problems: list[Problem] = []
    if len({key.lower() for key in keys}) != len(keys):
        problems.append((_HEADER_DUPLICATE, field))
    if not all(isinstance(value, str) for value in headers.values()):
        problems.append((_HEADER_VALUES, field))
    if not all(_HEADER_KEY.fullmatch(key) for key in keys):
        problems.append((_HEADER_KEY_CHARACTERS, field))
    if any(key.lower() in RESERVED_HEADERS for key in keys):
        problems.append((_HEADER_RESERVED, field))
    return problems


def errors_response(
    status: int, problems: list[Problem], headers: dict[str, str] | None = None
) -> JSONResponse:
    """SendGrid's error envelope for ``status`` with one entry per (message, field)."""
    errors = [{"message": message, "field": field, "help": None} for message, field in problems]
    return JSONResponse({"errors": errors}, status_code=status, headers=headers)


def fault_response(status: int, retry_after: float | None) -> JSONResponse:
    """The reply SendGrid gives for ``status``; 429 carries rate-limit headers."""
    message = _FAULT_MESSAGES.get(status, status_phrase(status).lower())
    headers: dict[str, str] = {}
    if status == 429:
        wait = retry_after or 1.0
        headers = {
            "X-RateLimit-Limit": "600",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(time.time() + wait)),
        }
    if (header := retry_after_seconds(retry_after)) is not None:
        headers["Retry-After"] = header
    return errors_response(status, [(message, None)], headers)


def _api_key(request: Request) -> str | JSONResponse:
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return errors_response(401, [("authorization required", None)])
    if "invalid" in key:
        return errors_response(401, [(_FAULT_MESSAGES[401], None)])
    return key


def _problems(payload: Any) -> list[Problem]:
    if not isinstance(payload, dict):
        return [("Bad Request", None)]
    problems: list[Problem] = []
    personalizations = payload.get("personalizations")
    if not isinstance(personalizations, list) or not personalizations:
        problems.append((_NO_PERSONALIZATIONS, "personalizations"))
    elif len(personalizations) > MAX_PERSONALIZATIONS:
        n = len(personalizations)
        return [(_TOO_MANY_PERSONALIZATIONS.format(n=n), "personalizations")]
    else:
        for index, item in enumerate(personalizations):
            if not isinstance(item, dict) or not _emails(item.get("to")):
                problems.append((_NO_TO, f"personalizations.{index}.to"))
                continue
            problems.extend(_personalization_problems(item, index))
        problems.extend(_recipient_problems(personalizations))
    if _size(payload.get("custom_args")) > MAX_CUSTOM_ARGS_BYTES:
        problems.append((_CUSTOM_ARGS_TOO_LARGE, "custom_args"))
    if "headers" in payload:
        problems.extend(_header_problems(payload["headers"], "headers"))
    sender = payload.get("from")
    if not isinstance(sender, dict) or "@" not in str(sender.get("email", "")):
        problems.append((_NO_FROM, "from.email"))
    if not payload.get("template_id"):
        problems.extend(_content_problems(payload, personalizations))
    return problems


def _size(value: Any) -> int:
    """The bytes of a string-to-string object's keys and values (0: not an object)."""
    if not isinstance(value, dict):
        return 0
    return sum(len(str(k).encode()) + len(str(v).encode()) for k, v in value.items())


def _personalization_problems(item: dict[str, Any], index: int) -> list[Problem]:
    field = f"personalizations.{index}"
    problems: list[Problem] = []
    if "headers" in item:
        problems.extend(_header_problems(item["headers"], f"{field}.headers"))
    if _size(item.get("substitutions")) > MAX_SUBSTITUTION_BYTES:
        problems.append((_SUBSTITUTIONS_TOO_LARGE, f"{field}.substitutions"))
    if _size(item.get("custom_args")) > MAX_CUSTOM_ARGS_BYTES:
        problems.append((_CUSTOM_ARGS_TOO_LARGE, f"{field}.custom_args"))
    return problems


def _recipient_problems(personalizations: list[Any]) -> list[Problem]:
    addresses = [
        email.lower()
        for item in personalizations
        if isinstance(item, dict)
        for kind in ("to", "cc", "bcc")
        for email in _emails(item.get(kind))
    ]
    if len(addresses) > MAX_RECIPIENTS:
        return [(_TOO_MANY_RECIPIENTS, "personalizations")]
    seen: set[str] = set()
    for address in addresses:
        if address in seen:
            return [(_REPEATED_ADDRESS.format(email=address), "personalizations")]
        seen.add(address)
    return []


def _content_problems(payload: dict[str, Any], personalizations: Any) -> list[Problem]:
    problems: list[Problem] = []
    content = payload.get("content")
    if not isinstance(content, list) or not content:
        problems.append((_NO_CONTENT, "content"))
    per_item = isinstance(personalizations, list) and all(
        isinstance(item, dict) and item.get("subject") for item in personalizations
    )
    if not payload.get("subject") and not per_item:
        problems.append((_NO_SUBJECT, "subject"))
    return problems


def _emails(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [
        str(item["email"])
        for item in value
        if isinstance(item, dict) and "@" in str(item.get("email", ""))
    ]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _headers(
    payload: dict[str, Any], personalization: dict[str, Any]
) -> tuple[tuple[str, str], ...]:
    """The message's header fields, a personalization's replacing the message's own."""
    fields = {key.lower(): (key, value) for key, value in _mapping(payload.get("headers")).items()}
    for key, value in _mapping(personalization.get("headers")).items():
        fields[key.lower()] = (key, value)
    return tuple(fields.values())


def _substitute(value: str | None, substitutions: dict[str, Any]) -> str | None:
    """``value`` with each substitution tag replaced, in one pass (longest tag first)."""
    if value is None or not substitutions:
        return value
    tags = sorted((str(tag) for tag in substitutions if tag), key=len, reverse=True)
    if not tags:
        return value
    pattern = re.compile("|".join(re.escape(tag) for tag in tags))
    return pattern.sub(lambda match: str(substitutions[match.group(0)]), value)


def _records(payload: dict[str, Any], message_id: str, request: Request) -> list[RecordedMessage]:
    """One message per personalization, all under the request's ``message_id``."""
    bodies = {
        str(block.get("type")): str(block.get("value"))
        for block in payload.get("content") or []
        if isinstance(block, dict)
    }
    records = []
    for item in payload["personalizations"]:
        substitutions = _mapping(item.get("substitutions"))
        custom_args = {**_mapping(payload.get("custom_args")), **_mapping(item.get("custom_args"))}
        subject = _text(item.get("subject") or payload.get("subject"))
        records.append(
            RecordedMessage(
                provider=PROVIDER,
                to=tuple(_emails(item.get("to"))),
                sender=str(payload["from"]["email"]),
                subject=_substitute(subject, substitutions),
                text=_substitute(bodies.get("text/plain"), substitutions),
                html=_substitute(bodies.get("text/html"), substitutions),
                message_id=message_id,
                job_id=_text(custom_args.get("hjid")),
                idempotency_key=request.headers.get("idempotency-key"),
                headers=_headers(payload, item),
            )
        )
    return records


async def send(state: SandboxState, request: Request) -> Response:
    """``POST /v3/mail/send``: validate, record, answer 202 with ``X-Message-Id``."""
    key = _api_key(request)
    if isinstance(key, JSONResponse):
        return key
    if "restricted" in key:
        return errors_response(403, [("access forbidden", None)])
    try:
        payload = json.loads(await request.body(), object_pairs_hook=_object)
    except ValueError:
        return errors_response(400, [("Bad Request", None)])
    if problems := _problems(payload):
        return errors_response(400, problems)
    message_id = secrets.token_urlsafe(16)
    for record in _records(payload, message_id, request):
        state.recorder.record(record)
    return Response(status_code=202, headers={"X-Message-Id": message_id})


async def scopes(request: Request) -> Response:
    """``GET /v3/scopes``: the key's scopes; a restricted key lacks ``mail.send``."""
    key = _api_key(request)
    if isinstance(key, JSONResponse):
        return key
    granted = [scope for scope in SCOPES if scope != "mail.send" or "restricted" not in key]
    return JSONResponse({"scopes": granted})


def router(state: SandboxState) -> Router:
    """The SendGrid routes, to mount under ``/sendgrid``."""

    async def send_endpoint(request: Request) -> Response:
        return await send(state, request)

    return Router(
        routes=[
            Route(
                "/v3/mail/send",
                guarded(state, PROVIDER, FaultScope.SEND, fault_response, send_endpoint),
                methods=["POST"],
            ),
            Route(
                "/v3/scopes",
                guarded(state, PROVIDER, FaultScope.CHECK, fault_response, scopes),
                methods=["GET"],
            ),
        ]
    )
