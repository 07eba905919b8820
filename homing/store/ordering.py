"""Strict order per ordering key: one job of a (tenant, key) is claimable at a time.

A job accepted while another of its key still has a queue entry waits behind it,
blocked (``available_at = BLOCKED``), with the next ``seq``. When the head reaches a
terminal status (COMPLETED or FAILED — a failed head does not hold its successors
forever) its entry goes and the next one in ``seq`` order is released. Retries of the
head keep it at the head, so a retried message is never overtaken.

On PostgreSQL, placing and releasing take a transaction-scoped advisory lock on the
key, so a job accepted while its predecessor completes cannot be left blocked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

BLOCKED = 1e15

_TAIL = text(
    "SELECT count(*), max(seq) FROM queue_entries WHERE tenant_id = :tenant AND ordering_key = :key"
)
_RELEASE = text(
    """
    UPDATE queue_entries SET available_at = :now
    WHERE job_id = (
        SELECT job_id FROM queue_entries
        WHERE tenant_id = :tenant AND ordering_key = :key
        ORDER BY seq LIMIT 1
    ) AND available_at >= :blocked
    """
)
_LOCK = text("SELECT pg_advisory_xact_lock(:lock)")


def _lock_id(tenant_id: str, key: str) -> int:
    digest = hashlib.blake2b(f"{tenant_id}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def lock_keys(conn: AsyncConnection, postgres: bool, keys: Iterable[tuple[str, str]]) -> None:
    """Take the advisory locks of these (tenant, key) pairs, in a fixed order."""
    if not postgres:
        return
    for lock in sorted({_lock_id(tenant, key) for tenant, key in keys}):
        await conn.execute(_LOCK, {"lock": lock})


async def place(conn: AsyncConnection, postgres: bool, entry: dict[str, Any]) -> None:
    """Set ``seq`` and, behind an unfinished predecessor, block a new queue entry."""
    key = entry.get("ordering_key")
    if key is None:
        return
    tenant = entry["tenant_id"]
    await lock_keys(conn, postgres, [(tenant, key)])
    count, last = (await conn.execute(_TAIL, {"tenant": tenant, "key": key})).one()
    entry["seq"] = (last or 0) + 1
    if count:
        entry["available_at"] = BLOCKED


async def release_next(conn: AsyncConnection, keys: Iterable[tuple[str, str]], now: float) -> None:
    """Make the next waiting entry of each key claimable (its predecessor is done)."""
    for tenant, key in keys:
        await conn.execute(_RELEASE, {"now": now, "tenant": tenant, "key": key, "blocked": BLOCKED})
