"""Fault injection for the HTTP vendor apps, and the parsing of fault rules.

Every vendor endpoint is wrapped by ``guarded``: it counts the request, takes the
provider's next fault rule and, if there is one, delays, fails with the vendor's own
error body, hangs, or accepts and then hangs, before or around the real handler.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from http import HTTPStatus
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from homing.sandbox.state import PROVIDERS, FaultMode, FaultRule, FaultScope, SandboxState

Endpoint = Callable[[Request], Awaitable[Response]]
ErrorFactory = Callable[[int, float | None], Response]
_E = TypeVar("_E", FaultMode, FaultScope)


class InvalidFault(ValueError):
    """The fault rule is malformed."""


def guarded(
    state: SandboxState,
    provider: str,
    scope: FaultScope,
    on_error: ErrorFactory,
    handler: Endpoint,
) -> Endpoint:
    """Wrap a vendor endpoint so the provider's fault rules apply to it.

    ``on_error(status, retry_after)`` builds the vendor's own error reply for a status;
    ``handler`` is the endpoint's faithful, fault-free behaviour.
    """

    async def endpoint(request: Request) -> Response:
        if scope is FaultScope.SEND:
            state.recorder.count_request(provider)
        rule = state.faults.take(provider, scope)
        if rule is None:
            return await handler(request)
        return await _apply(state, rule, request, on_error, handler)

    return endpoint


async def _apply(
    state: SandboxState,
    rule: FaultRule,
    request: Request,
    on_error: ErrorFactory,
    handler: Endpoint,
) -> Response:
    if rule.latency_ms:
        await state.hang(rule.latency_ms / 1000)
    if rule.mode is FaultMode.TIMEOUT:
        await state.hang(until=_disconnected(request.receive))
        return on_error(503, None)
    if rule.mode is FaultMode.ACCEPT_THEN_HANG:
        response = await handler(request)
        if response.status_code < 300:
            await state.hang(until=_disconnected(request.receive))
        return response
    if rule.status is None:
        return await handler(request)
    if rule.status == 429:
        state.recorder.count_throttled(rule.provider)
    return on_error(rule.status, rule.retry_after)


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone away (unread body chunks are discarded)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def retry_after_seconds(retry_after: float | None) -> str | None:
    """Render a Retry-After header value in whole seconds, rounding up."""
    return None if retry_after is None else str(max(0, math.ceil(retry_after)))


def status_phrase(status: int) -> str:
    """The standard reason phrase for ``status``, or a generic one for unknown codes."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def parse_fault(payload: object) -> FaultRule:
    """Build a ``FaultRule`` from the JSON body of ``POST /_sandbox/faults``.

    Raises ``InvalidFault`` naming the first bad field.
    """
    if not isinstance(payload, Mapping):
        raise InvalidFault("the body must be a JSON object")
    provider = payload.get("provider")
    if provider not in PROVIDERS:
        raise InvalidFault(f"provider must be one of {', '.join(PROVIDERS)}")
    mode = _enum(FaultMode, payload.get("mode", "error"), "mode")
    status = _optional_int(payload, "status", 400, 599)
    latency_ms = _optional_int(payload, "latency_ms", 0, 3_600_000) or 0
    if mode is FaultMode.ERROR and status is None and not latency_ms:
        raise InvalidFault("an error fault needs a status or a latency_ms")
    return FaultRule(
        provider=str(provider),
        mode=mode,
        status=status,
        retry_after=_optional_number(payload, "retry_after"),
        latency_ms=latency_ms,
        count=_optional_int(payload, "count", 1, 10**9),
        scope=_enum(FaultScope, payload.get("scope", "send"), "scope"),
    )


def _enum(kind: type[_E], value: Any, name: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        raise InvalidFault(f"{name} must be one of {', '.join(kind)}") from None


def _optional_int(payload: Mapping[str, Any], name: str, low: int, high: int) -> int | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidFault(f"{name} must be an integer from {low} to {high}")
    return value


def _optional_number(payload: Mapping[str, Any], name: str) -> float | None:
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidFault(f"{name} must be a non-negative number")
    return float(value)
