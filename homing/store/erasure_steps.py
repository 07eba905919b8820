"""The SQL of erasing a person from multi-channel notifications and digests
(docs/recipients.md, "Erasure"), one bounded batch per call as ``erasure`` does.

A step not made yet keeps the job it would make (``notification_steps.spec``: the
address, the name and the rendered content), and a digest names its recipient by
external id. So erasure drops the spec of every step of the person's (by recipient:
the notifications naming it; by address: the steps addressed to it), ending a pending
one ``skipped`` (reason ``erased``) so it is never made; a running notification left
with no step to wait for ends as its steps say. A digest loses its recipient's name
(each gets a name of its own, as the window's key is unique) and its items' data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Text, cast, func, null, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from homing.store import flow_rules as rules
from homing.store.digests import FAILED, OPEN
from homing.store.sql import one_of
from homing.store.suppressions import address_key_of
from homing.store.tables.notifications import (
    digest_items,
    digests,
    notification_steps,
    notifications,
)

__all__ = ["ERASED_REASON", "KEPT_SPEC", "erase_digests", "erase_steps", "erased_digest_name"]

# A step or digest ended by an erasure says so (docs/notifications.md).
ERASED_REASON = "erased"

_s, _n = notification_steps.c, notifications.c
# A step that keeps a job to make: a made step's spec is JSON ``null`` (SQLAlchemy's
# JSON type writes None so), an erased one's SQL NULL.
KEPT_SPEC = _s.spec.is_not(None) & (cast(_s.spec, Text) != "null")


def erased_digest_name(erased: str, digest_id: str) -> str:
    """What replaces an erased digest's recipient: unique, as (recipient, key, seq) is."""
    return f"{erased}{digest_id}"


async def erase_steps(
    conn: AsyncConnection,
    tenant_id: str,
    external_id: str | None,
    addresses: Sequence[tuple[str, str]],
    limit: int,
    now: Any,
) -> int:
    """Drop the spec of up to ``limit`` of the tenant's steps that keep one for the
    person (its notifications', or addressed to one of ``addresses``); a pending one
    ends ``skipped``. How many steps were erased."""
    found = await _steps_of(conn, tenant_id, external_id, addresses, limit)
    for step in found:
        values: dict[str, Any] = {"spec": null(), "updated_at": now}
        if step.status == rules.PENDING:
            values.update(status=rules.SKIPPED, reason=ERASED_REASON)
        await conn.execute(
            update(notification_steps)
            .where(
                _s.notification_id == step.notification_id,
                _s.position == step.position,
                _s.status == step.status,
            )
            .values(values)
        )
    return len(found)


async def _steps_of(
    conn: AsyncConnection,
    tenant_id: str,
    external_id: str | None,
    addresses: Sequence[tuple[str, str]],
    limit: int,
) -> list[Any]:
    columns = (_s.notification_id, _s.position, _s.status)
    if external_id is not None:
        query = (
            select(*columns)
            .join(notifications, _n.id == _s.notification_id)
            .where(_n.tenant_id == tenant_id, _n.recipient == external_id)
            .where(KEPT_SPEC)
            .limit(limit)
        )
        return list((await conn.execute(query)).all())
    return await _addressed(conn, tenant_id, addresses, limit)


async def _addressed(
    conn: AsyncConnection, tenant_id: str, addresses: Sequence[tuple[str, str]], limit: int
) -> list[Any]:
    """The steps (pending, or unused before their specs were dropped) whose job goes to
    one of ``addresses``: found by the bare address in the spec's text, then checked
    as accepting keys it (a chat id alone could be part of anything)."""
    if not addresses:
        return []
    spec = func.lower(cast(_s.spec, Text))
    bare = {key.partition(":")[2] if channel == "chat" else key for channel, key in addresses}
    query = (
        select(_s.notification_id, _s.position, _s.status, _s.channel, _s.spec)
        .where(_s.status.in_([rules.PENDING, rules.NOT_NEEDED]), KEPT_SPEC)
        .where(_s.tenant_id == tenant_id)
        .where(or_(*(spec.contains(b.lower(), autoescape=True) for b in sorted(bare))))
    )
    wanted = set(addresses)
    found: list[Any] = []
    for row in (await conn.execute(query)).all():
        key = address_key_of(row.channel, row.spec.get("payload") or {})
        if (row.channel, key) in wanted or (row.channel, (key or "").lower()) in wanted:
            found.append(row)
            if len(found) == limit:
                break
    return found


async def erase_digests(
    conn: AsyncConnection, tenant_id: str, external_id: str, erased: str, limit: int, now: Any
) -> dict[str, int]:
    """Up to ``limit`` of the recipient's digests: an open one ended (failed,
    ``erased``: never sent), every item's data emptied, the recipient's name replaced."""
    d, i = digests.c, digest_items.c
    mine = (d.tenant_id == tenant_id) & (d.recipient == external_id)
    ids = list((await conn.scalars(select(d.id).where(mine).limit(limit))).all())
    if not ids:
        return {}
    await conn.execute(
        update(digests)
        .where(one_of(conn, d.id, ids), d.status == OPEN)
        .values(status=FAILED, reason=ERASED_REASON, sent_at=now)
    )
    items = await conn.execute(
        update(digest_items)
        .where(one_of(conn, i.digest_id, ids), i.data.is_not(None))
        .values(data=null())
    )
    for digest_id in ids:
        await conn.execute(
            update(digests)
            .where(d.id == digest_id)
            .values(recipient=erased_digest_name(erased, digest_id))
        )
    return {"digests": len(ids), "digest_items": int(items.rowcount)}
