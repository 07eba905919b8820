"""The audit log: who changed what, when, and with which request — never a secret.

Every change to a tenant's configuration (providers, keys, secrets, suppressions,
domains, settings, dead letters) and every operator action on a tenant is recorded
as one event: an actor (``homing.models.Actor``), an action from the closed
vocabulary ``homing.models.AuditAction``, a target and a bounded ``changes`` object.
Events are written in the change's own transaction wherever one store call makes the
change (``homing.store.audit.write_event``), so neither exists without the other.

``changes`` is built here, once, for every caller: at most ``MAX_FIELDS`` fields,
names of at most ``MAX_NAME_CHARS``, text cut to ``MAX_TEXT_CHARS`` with control and
format characters (bidi overrides, zero-width marks) removed, nesting and lists
bounded, and ``MAX_CHANGES_BYTES`` in all. A field whose name says it holds a secret
(``_SECRET_NAMES``) is shown only as ``"changed"``, and secret-looking values
anywhere are masked (``homing.logs.redact_text``) as a second net. Each step
is one pass over bounded input.
"""

from __future__ import annotations

import enum
import math
import re
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from homing.clock import Clock, as_datetime
from homing.domain.audit import AuditEvent, AuditFilter
from homing.logs import current_request_id, redact_text
from homing.models import Actor, ActorKind, AuditAction, Tenant, new_id
from homing.store.audit import AuditStore

__all__ = [
    "CHANGED",
    "CLI_ACTOR",
    "MAX_CHANGES_BYTES",
    "AuditLog",
    "bounded_changes",
    "clean_text",
    "diff",
    "tenant_fields",
]

CHANGED = "changed"
# The ``homing`` command run by whoever has the server's shell.
CLI_ACTOR = Actor(ActorKind.CLI, "homing")
MAX_FIELDS = 32
MAX_NAME_CHARS = 64
MAX_TEXT_CHARS = 256
MAX_ITEMS = 16
MAX_DEPTH = 3
MAX_CHANGES_BYTES = 8192
MAX_TARGET_CHARS = 320
_MAX_EXACT_INT = 2**53
# Field names that say "secret"; as the logs' list, less "signature" (a setting names
# the signature's format, which is no secret).
_SECRET_NAMES = re.compile(
    r"pass(word)?|secret|token|api[_-]?key|authorization|credential|cookie|private",
    re.IGNORECASE,
)
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_text(value: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``value`` cut to ``limit`` characters (marked with "…"), without control or
    format characters."""
    head = value[: limit + 1]
    kept = "".join(ch for ch in head if unicodedata.category(ch) not in _DROPPED_CATEGORIES)
    if len(head) > limit:
        kept = kept[: limit - 1] + "…"
    return kept


def _value(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, enum.Enum):
        return _value(value.value, depth)
    if isinstance(value, int):
        return value if abs(value) <= _MAX_EXACT_INT else clean_text(str(value), 32)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return redact_text(clean_text(value))
    if isinstance(value, datetime):
        return value.isoformat()
    if depth >= MAX_DEPTH:
        return "…"
    if isinstance(value, Mapping):
        return _fields(value, depth + 1)
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)[:MAX_ITEMS] if isinstance(value, list | tuple) else []
        return [_value(item, depth + 1) for item in items]
    return clean_text(type(value).__name__, MAX_NAME_CHARS)


def _fields(changes: Mapping[Any, Any], depth: int) -> dict[str, Any]:
    bounded: dict[str, Any] = {}
    for count, (name, value) in enumerate(changes.items()):
        if count >= MAX_FIELDS:
            bounded["…"] = "more fields left out"
            break
        key = clean_text(str(name), MAX_NAME_CHARS)
        bounded[key] = CHANGED if _SECRET_NAMES.search(key) else _value(value, depth)
    return bounded


def bounded_changes(changes: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a change did, made safe to store and show (see the module's docstring)."""
    if not changes:
        return {}
    bounded = _fields(changes, 0)
    if len(orjson.dumps(bounded)) > MAX_CHANGES_BYTES:
        return {"truncated": True, "fields": sorted(bounded)[:MAX_FIELDS]}
    return bounded


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """``{field: {"from": old, "to": new}}`` for each field of ``after`` that differs
    from ``before`` (the caller leaves secret fields out, or names them as secrets)."""
    return {
        name: {"from": before.get(name), "to": value}
        for name, value in after.items()
        if before.get(name) != value
    }


def tenant_fields(tenant: Tenant) -> dict[str, Any]:
    """The fields of a tenant an operator changes, to ``diff`` a change against."""
    return {
        "name": tenant.name,
        "plan": tenant.plan,
        "rate_limit_per_minute": tenant.rate_limit_per_minute,
        "quota_overrides": tenant.quota_overrides,
    }


class AuditLog:
    """Makes audit events (bounded, with the request's id) and reads them back."""

    def __init__(self, store: AuditStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def event(
        self,
        actor: Actor,
        action: AuditAction,
        *,
        tenant_id: str | None,
        target_type: str,
        target_id: str | None = None,
        changes: Mapping[str, Any] | None = None,
    ) -> AuditEvent:
        """An event to hand to the store call that makes the change."""
        return AuditEvent(
            id=new_id(),
            tenant_id=tenant_id,
            actor=Actor(
                actor.kind,
                clean_text(actor.id, MAX_NAME_CHARS),
                None if actor.name is None else clean_text(actor.name, 200),
            ),
            action=action,
            target_type=target_type,
            target_id=None if target_id is None else clean_text(target_id, MAX_TARGET_CHARS),
            changes=bounded_changes(changes),
            request_id=current_request_id(),
            created_at=as_datetime(self._clock.now()),
        )

    async def record(self, event: AuditEvent) -> None:
        """Record an event on its own, for a change that spans several transactions
        (a bulk redrive or purge); called once the change is done."""
        await self._store.add(event)

    async def page(
        self, f: AuditFilter, *, limit: int, cursor: str | None
    ) -> tuple[list[AuditEvent], str | None]:
        """Events newest first; ``cursor`` is the last id of the previous page."""
        return await self._store.page(f, limit=limit, cursor=cursor)
