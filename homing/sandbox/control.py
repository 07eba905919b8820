"""The sandbox's own routes: ``/_sandbox/*`` to steer and inspect it, ``/slack/*`` to record.

``/_sandbox/faults`` adds, lists and clears fault rules; ``/_sandbox/messages`` lists
and clears what the vendor apps accepted; ``/_sandbox/stats`` gives cheap counters;
``/_sandbox/slack`` lists the Slack incoming-webhook posts; ``/_sandbox/reset`` forgets
everything. Errors use Homing's envelope ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route, Router

from homing.sandbox.chat_rules import SLACK_WEBHOOK
from homing.sandbox.faults import InvalidFault, guarded, parse_fault, retry_after_seconds
from homing.sandbox.state import FaultScope, RecordedMessage, SandboxState

SLACK = "slack"
_SLACK_ERRORS = {400: "invalid_payload", 403: "action_prohibited", 404: "no_service"}


def _error(status: int, code: str, message: str) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": {}}}
    return JSONResponse(body, status_code=status)


def slack_fault_response(status: int, retry_after: float | None) -> Response:
    """What Slack answers for ``status``: a short plain-text error code."""
    header = retry_after_seconds(retry_after)
    return PlainTextResponse(
        _SLACK_ERRORS.get(status, "rate_limited" if status == 429 else "internal_error"),
        status_code=status,
        headers=None if header is None else {"Retry-After": header},
    )


class _Control:
    """The ``/_sandbox`` endpoints over one ``SandboxState``."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state

    async def list_faults(self, request: Request) -> Response:
        return JSONResponse(self.state.faults.listing())

    async def add_fault(self, request: Request) -> Response:
        try:
            rule = parse_fault(json.loads(await request.body()))
        except InvalidFault as exc:
            return _error(400, "invalid_fault", str(exc))
        except ValueError:
            return _error(400, "invalid_json", "the body is not valid JSON")
        return JSONResponse(self.state.faults.add(rule), status_code=201)

    async def clear_faults(self, request: Request) -> Response:
        self.state.faults.clear(request.query_params.get("provider"))
        return Response(status_code=204)

    async def list_messages(self, request: Request) -> Response:
        params = request.query_params
        found = self.state.recorder.messages(params.get("provider"), params.get("job_id"))
        limit = params.get("limit", "")
        if limit.isdigit():
            found = found[-int(limit) :] if int(limit) else []
        return JSONResponse([message.as_dict() for message in found])

    async def clear_messages(self, request: Request) -> Response:
        self.state.recorder.clear()
        return Response(status_code=204)

    async def stats(self, request: Request) -> Response:
        stats = self.state.recorder.stats()
        rules = self.state.chat_rules.stats()
        return JSONResponse({**stats, "slack": len(self.state.slack), "rules": rules})

    async def list_slack(self, request: Request) -> Response:
        return JSONResponse(list(self.state.slack))

    async def clear_slack(self, request: Request) -> Response:
        self.state.slack.clear()
        return Response(status_code=204)

    async def reset(self, request: Request) -> Response:
        self.state.reset()
        return Response(status_code=204)


def control_router(state: SandboxState) -> Router:
    """The routes to mount under ``/_sandbox``."""
    control = _Control(state)
    return Router(
        routes=[
            Route("/faults", control.list_faults, methods=["GET"]),
            Route("/faults", control.add_fault, methods=["POST"]),
            Route("/faults", control.clear_faults, methods=["DELETE"]),
            Route("/messages", control.list_messages, methods=["GET"]),
            Route("/messages", control.clear_messages, methods=["DELETE"]),
            Route("/stats", control.stats, methods=["GET"]),
            Route("/slack", control.list_slack, methods=["GET"]),
            Route("/slack", control.clear_slack, methods=["DELETE"]),
            Route("/reset", control.reset, methods=["POST"]),
        ]
    )


# Webhook paths that steer Slack's documented errors (a word in the last segment).
_SLACK_STEERED = {
    "archived": (410, "channel_is_archived"),
    "gone": (404, "no_service"),
    "missing": (404, "channel_not_found"),
    "prohibited": (403, "action_prohibited"),
    "revoked": (400, "invalid_token"),
    "rollup": (500, "rollup_error"),
}


def _slack_steered(path: str) -> Response | None:
    last = path.rsplit("/", 1)[-1]
    for word, (status, code) in _SLACK_STEERED.items():
        if word in last:
            return PlainTextResponse(code, status_code=status)
    return None


def _slack_paced(state: SandboxState, path: str) -> Response | None:
    """Slack's one message a second per webhook, on ``/services/…`` paths (the shape
    of real webhook URLs; the operator alerter's test paths are not paced)."""
    if not path.startswith("services/"):
        return None
    refusal = state.chat_rules.take(SLACK, [(SLACK_WEBHOOK, path)])
    if refusal is None:
        return None
    headers = {"Retry-After": str(refusal.retry_after)}
    return PlainTextResponse("rate_limited", status_code=429, headers=headers)


def slack_router(state: SandboxState) -> Router:
    """The Slack incoming-webhook recorder, to mount under ``/slack``.

    Like Slack it answers 200 ``ok``, or 400 ``invalid_payload`` / ``no_text``; fault
    rules for provider ``slack`` apply. On ``/services/T…/B…/…`` paths a word in the
    last segment steers Slack's documented errors (``archived``: 410
    ``channel_is_archived``, ``gone``: 404 ``no_service``, ``missing``: 404
    ``channel_not_found``, ``prohibited``: 403, ``revoked``: 400 ``invalid_token``,
    ``rollup``: 500), and one message a second per webhook is enforced (429 with
    ``Retry-After``).
    """

    async def post(request: Request) -> Response:
        path = request.path_params["path"]
        if path.startswith("services/") and (steered := _slack_steered(path)) is not None:
            return steered
        try:
            payload = json.loads(await request.body())
        except ValueError:
            return PlainTextResponse("invalid_payload", status_code=400)
        if not isinstance(payload, dict):
            return PlainTextResponse("invalid_payload", status_code=400)
        if not any(payload.get(key) for key in ("text", "blocks", "attachments")):
            return PlainTextResponse("no_text", status_code=400)
        if (paced := _slack_paced(state, path)) is not None:
            return paced
        if path.startswith("services/"):
            state.recorder.record(_slack_message(path, payload, state.next_message_number()))
        state.slack.append(
            {
                "path": "/" + request.path_params["path"],
                "payload": payload,
                "received_at": datetime.now(UTC).isoformat(),
            }
        )
        return PlainTextResponse("ok")

    endpoint = guarded(state, SLACK, FaultScope.SEND, slack_fault_response, post)
    return Router(routes=[Route("/{path:path}", endpoint, methods=["POST"])])


def _slack_message(path: str, payload: dict[str, object], number: int) -> RecordedMessage:
    text = payload.get("text")
    return RecordedMessage(
        provider=SLACK,
        to=("/" + path,),
        sender="slack",
        subject=None,
        text=text if isinstance(text, str) else None,
        html=None,
        message_id=str(number),
    )
