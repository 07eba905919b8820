"""The sandbox posts provider events back, signed exactly as each provider signs them.

- ``GET /_sandbox/keys``: the verification key and secrets, per provider, in the shape
  of Homing's ``PUT /v1/providers/{id}/inbound`` body.
- ``POST /_sandbox/events {"provider", "message_to", "type", "target_url"?, "job_id"?}``:
  post one event about the latest accepted message to that address, now; the answer
  has Homing's status and reply and the event as sent (body and headers).
- ``POST /_sandbox/webhooks {"provider", "url", "events": [...]}``: after every
  accepted send of that provider, post those events to ``url`` (in the background,
  like the vendors); ``GET`` lists, ``DELETE`` forgets. ``GET /_sandbox/events`` lists
  what was posted, retries included (``attempt``).
- A refused post (a status the vendor retries, or no answer) is posted again, the same
  signed body, on the vendor's schedule (``homing.sandbox.retries``), on the sandbox's
  clock: ``GET|POST /_sandbox/clock {"offset_seconds"}`` reads or sets its offset from
  the wall clock (start an outage in the past); ``POST /_sandbox/events/retry
  {"advance_seconds"}`` moves it forward and posts every retry then due, answering what
  each came to; ``GET /_sandbox/events/retry`` lists those still pending.

Telegram posts updates about the chat the latest message went to (``blocked``,
``unblocked``, ``stop``, ``start``) with its secret-token header.

Postmark posts with HTTP Basic: ``basic_auth`` in the request or the target, or
``https://user:pass@host/…`` in the URL, else the sandbox's credentials from ``/keys``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from homing.sandbox import telegram_events, twilio_events, vonage_events
from homing.sandbox.event_bodies import KINDS, build
from homing.sandbox.retries import MAX_CLOCK_SECONDS, SCHEDULES, Pending, Resigner
from homing.sandbox.signing import svix_headers
from homing.sandbox.state import RecordedMessage, SandboxState

log = logging.getLogger("homing.sandbox")

EVENT_PROVIDERS: Final = (
    "sendgrid",
    "resend",
    "postmark",
    "mailgun",
    "twilio",
    "vonage",
    "telegram",
)
POST_TIMEOUT_SECONDS: Final = 10.0


class BadEventRequest(ValueError):
    """The event request is malformed."""


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, "details": {}}}, status)


def _auth(url: str, given: Any) -> tuple[str, tuple[str, str] | None]:
    """The URL without userinfo, and the basic-auth pair from the request or the URL."""
    parts = urlsplit(url)
    auth = None
    if isinstance(given, dict):
        auth = (str(given.get("username", "")), str(given.get("password", "")))
    if parts.username is not None:
        auth = auth or (unquote(parts.username), unquote(parts.password or ""))
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        netloc += f":{parts.port}" if parts.port else ""
        url = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url, auth


class EventPoster:
    """Posts provider events back to Homing, signed exactly as the emulated vendor signs
    them, and posts a refused one again on the vendor's schedule
    (``homing.sandbox.retries``)."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state

    def _signed(
        self, message: RecordedMessage, kind: str, url: str, auth: tuple[str, str] | None, at: float
    ) -> tuple[bytes, dict[str, str], Resigner | None]:
        keys = self.state.keys
        if message.provider == "twilio":
            body, headers = twilio_events.callback(message, kind, keys.twilio_auth_token, url)
        elif message.provider == "vonage":
            body, headers = vonage_events.callback(message, kind, keys.vonage_signature_secret, at)
        elif message.provider == "telegram":
            body, headers = telegram_events.callback(message, kind, keys.telegram_secret_token)
        else:
            body, headers = build(message.provider, message, kind, keys, auth, at)
        if not SCHEDULES[message.provider].resigns:
            return body, headers, None
        msg_id = headers["svix-id"]  # Svix keeps the id and signs each attempt anew
        return (
            body,
            headers,
            lambda raw, moment: svix_headers(keys.resend_secret, raw, msg_id, int(moment)),
        )

    async def post(
        self, message: RecordedMessage, kind: str, url: str, basic_auth: Any = None
    ) -> dict[str, Any]:
        """Build, sign and post one event; what was sent and what came back, and when
        the vendor will try again (``retry_at``, None when it will not). httpx.HTTPError
        when nothing answered (the retry is scheduled all the same)."""
        url, auth = _auth(url, basic_auth)
        now = self.state.clock.now()
        body, headers, resign = self._signed(message, kind, url, auth, now)
        pending = Pending(
            provider=message.provider,
            kind=kind,
            url=url,
            body=body,
            headers=headers,
            job_id=message.job_id,
            first_at=now,
            due_at=now,
            resign=resign,
        )
        try:
            response = await self._send(pending, headers)
        except httpx.HTTPError:
            self.state.retries.after_failure(pending, None, now)
            raise
        retried = self.state.retries.after_failure(pending, response.status_code, now)
        try:
            reply: Any = response.json()
        except ValueError:
            reply = response.text
        event = dict(parse_qsl(body.decode())) if message.provider == "twilio" else json.loads(body)
        return {
            "status": response.status_code,
            "response": reply,
            "event": event,
            "headers": headers,
            "retry_at": pending.due_at if retried else None,
        }

    async def _send(self, pending: Pending, headers: dict[str, str]) -> httpx.Response:
        sent = {"Content-Type": "application/json", "User-Agent": "homing-sandbox", **headers}
        status: int | None = None
        try:
            async with httpx.AsyncClient(
                timeout=POST_TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
            ) as client:
                response = await client.post(pending.url, content=pending.body, headers=sent)
            status = response.status_code
            return response
        finally:
            self.state.events_posted.append(
                {
                    "provider": pending.provider,
                    "type": pending.kind,
                    "url": pending.url,
                    "job_id": pending.job_id,
                    "status": status,
                    "attempt": pending.attempts,
                    "posted_at": datetime.now(UTC).isoformat(),
                }
            )

    async def pump(self) -> list[dict[str, Any]]:
        """Post every retry due on the sandbox's clock, once each, earliest first; what
        each came to. One pump at a time."""
        async with self.state.retries.lock:
            now = self.state.clock.now()
            return [await self._retry(pending, now) for pending in self.state.retries.take_due(now)]

    async def _retry(self, pending: Pending, now: float) -> dict[str, Any]:
        pending.attempts += 1
        headers = pending.headers if pending.resign is None else pending.resign(pending.body, now)
        status: int | None = None
        try:
            status = (await self._send(pending, headers)).status_code
        except httpx.HTTPError as exc:
            log.info("sandbox event retry failed", extra={"error": type(exc).__name__})
        retried = self.state.retries.after_failure(pending, status, now)
        return {
            **pending.as_dict(),
            "status": status,
            "retry_at": pending.due_at if retried else None,
        }

    def after_send(self, message: RecordedMessage) -> None:
        """Recorder listener: post the configured events about a message just accepted."""
        target = self.state.webhooks.get(message.provider)
        if target is None:
            return
        for kind in target["events"]:
            coroutine = self._post_quietly(message, kind, target)
            task = asyncio.get_running_loop().create_task(coroutine)
            self.state.posts.add(task)
            task.add_done_callback(self.state.posts.discard)

    async def _post_quietly(
        self, message: RecordedMessage, kind: str, target: dict[str, Any]
    ) -> None:
        try:
            await self.post(message, kind, target["url"], target.get("basic_auth"))
        except httpx.HTTPError as exc:
            log.warning("sandbox event post failed", extra={"error": type(exc).__name__})


def _latest(state: SandboxState, provider: str, to: str, job_id: str | None) -> RecordedMessage:
    for message in reversed(state.recorder.messages(provider, job_id)):
        if to.lower() in (address.lower() for address in message.to):
            return message
    raise LookupError(f"no {provider} message to {to} was accepted")


def _kinds(provider: str) -> tuple[str, ...]:
    if provider == "twilio":
        return twilio_events.KINDS
    if provider == "telegram":
        return telegram_events.KINDS
    return vonage_events.KINDS if provider == "vonage" else KINDS


def _target(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict) or payload.get("provider") not in EVENT_PROVIDERS:
        raise BadEventRequest(f"provider must be one of {', '.join(EVENT_PROVIDERS)}")
    url = payload.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise BadEventRequest("url must be an http(s) URL")
    events = payload.get("events", ["delivered"])
    kinds = _kinds(payload["provider"])
    if not isinstance(events, list) or not all(kind in kinds for kind in events):
        raise BadEventRequest(f"events must list some of {', '.join(kinds)}")
    return {"url": url, "events": events, "basic_auth": payload.get("basic_auth")}


def _seconds(payload: Any, name: str, low: float) -> float:
    """``payload[name]``: a number of seconds from ``low`` to MAX_CLOCK_SECONDS."""
    value = payload.get(name, 0) if isinstance(payload, dict) else None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not low <= value <= MAX_CLOCK_SECONDS
    ):
        raise BadEventRequest(f"{name} must be a number from {low:g} to {MAX_CLOCK_SECONDS:g}")
    return float(value)


async def _json(request: Request) -> Any:
    try:
        return json.loads(await request.body())
    except ValueError:
        raise BadEventRequest("the body is not valid JSON") from None


def _event_request(state: SandboxState, payload: Any) -> tuple[RecordedMessage, str, str]:
    if not isinstance(payload, dict) or payload.get("provider") not in EVENT_PROVIDERS:
        raise BadEventRequest(f"provider must be one of {', '.join(EVENT_PROVIDERS)}")
    provider, kind = payload["provider"], payload.get("type")
    kinds = _kinds(provider)
    if kind not in kinds:
        raise BadEventRequest(f"type must be one of {', '.join(kinds)}")
    url = payload.get("target_url") or state.webhooks.get(provider, {}).get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise BadEventRequest("give target_url, or configure /_sandbox/webhooks first")
    to = str(payload.get("message_to") or "")
    return _latest(state, provider, to, payload.get("job_id")), kind, url


class _EventRoutes:
    def __init__(self, state: SandboxState, poster: EventPoster) -> None:
        self.state = state
        self.poster = poster

    async def keys(self, request: Request) -> Response:
        return JSONResponse(self.state.keys.listing())

    async def post_event(self, request: Request) -> Response:
        try:
            payload = await _json(request)
            message, kind, url = _event_request(self.state, payload)
        except BadEventRequest as exc:
            return _error(400, "invalid_event", str(exc))
        except LookupError as exc:
            return _error(404, "no_message", str(exc))
        try:
            result = await self.poster.post(message, kind, url, payload.get("basic_auth"))
        except httpx.HTTPError as exc:
            return _error(502, "post_failed", f"posting the event failed: {type(exc).__name__}")
        return JSONResponse(result)

    def _clock(self) -> JSONResponse:
        clock = self.state.clock
        return JSONResponse({"now": clock.now(), "offset_seconds": clock.offset})

    async def read_clock(self, request: Request) -> Response:
        return self._clock()

    async def set_clock(self, request: Request) -> Response:
        try:
            offset = _seconds(await _json(request), "offset_seconds", -MAX_CLOCK_SECONDS)
        except BadEventRequest as exc:
            return _error(400, "invalid_clock", str(exc))
        self.state.clock.set_offset(offset)
        return self._clock()

    async def retry(self, request: Request) -> Response:
        try:
            advance = _seconds(await _json(request), "advance_seconds", 0.0)
        except BadEventRequest as exc:
            return _error(400, "invalid_clock", str(exc))
        self.state.clock.advance(advance)
        posted = await self.poster.pump()
        pending = self.state.retries.listing()
        return JSONResponse({"now": self.state.clock.now(), "posted": posted, "pending": pending})

    async def pending(self, request: Request) -> Response:
        return JSONResponse(self.state.retries.listing())

    async def posted(self, request: Request) -> Response:
        return JSONResponse(list(self.state.events_posted))

    async def set_webhook(self, request: Request) -> Response:
        try:
            payload = await _json(request)
            target = _target(payload)
        except BadEventRequest as exc:
            return _error(400, "invalid_webhook", str(exc))
        self.state.webhooks[payload["provider"]] = target
        return JSONResponse({"provider": payload["provider"], **target}, status_code=201)

    async def list_webhooks(self, request: Request) -> Response:
        return JSONResponse(self.state.webhooks)

    async def clear_webhooks(self, request: Request) -> Response:
        self.state.webhooks.clear()
        return Response(status_code=204)


def routes(state: SandboxState) -> list[BaseRoute]:
    """The routes to add under ``/_sandbox``; installs the after-send poster."""
    poster = EventPoster(state)
    state.recorder.listeners["events"] = poster.after_send
    handlers = _EventRoutes(state, poster)
    return [
        Route("/keys", handlers.keys, methods=["GET"]),
        Route("/events", handlers.post_event, methods=["POST"]),
        Route("/events", handlers.posted, methods=["GET"]),
        Route("/events/retry", handlers.retry, methods=["POST"]),
        Route("/events/retry", handlers.pending, methods=["GET"]),
        Route("/clock", handlers.read_clock, methods=["GET"]),
        Route("/clock", handlers.set_clock, methods=["POST"]),
        Route("/webhooks", handlers.set_webhook, methods=["POST"]),
        Route("/webhooks", handlers.list_webhooks, methods=["GET"]),
        Route("/webhooks", handlers.clear_webhooks, methods=["DELETE"]),
    ]
