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
_SHARED_LOCK = text("SELECT pg_advisory_xact_lock_shared(:lock)")


def _lock_id(tenant_id: str, key: str) -> int:
    digest = hashlib.blake2b(f"{tenant_id}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def lock_keys(
    conn: AsyncConnection,
    postgres: bool,
    keys: Iterable[tuple[str, str]],
    *,
    shared: Iterable[tuple[str, str]] = (),
) -> None:
    """Take the advisory locks of these (tenant, key) pairs, and of the ``shared`` ones
    in shared mode (only an exclusive holder blocks it), all in one fixed order, held
    to the commit. A pair in both is taken exclusive."""
    if not postgres:
        return
    exclusive = {_lock_id(tenant, key) for tenant, key in keys}
    locks = {lock: _LOCK for lock in exclusive}
    for tenant, key in shared:
        locks.setdefault(_lock_id(tenant, key), _SHARED_LOCK)
    for lock in sorted(locks):
        await conn.execute(locks[lock], {"lock": lock})


# Past this many keys of one tenant, a transaction takes the tenant's lock alone
# (``lock_by_tenant``): PostgreSQL's lock table is shared by every tenant, and a batch
# of a thousand ordered jobs must not hold a thousand locks.
MOST_KEY_LOCKS = 16
_TENANT_ORDER = "order\0*"


async def lock_by_tenant(
    conn: AsyncConnection, postgres: bool, keys: Iterable[tuple[str, str]], whole: str
) -> None:
    """Lock these (tenant, key) pairs as two levels, under the tenant's lock ``whole``:
    shared by a transaction that then locks its few keys one by one, exclusive by one
    with more than ``MOST_KEY_LOCKS`` keys of that tenant (it locks none of them). Every
    transaction takes all its tenant locks, in one fixed order whatever their mode,
    before any key's, in another: no two wait on each other in a circle. At most
    ``MOST_KEY_LOCKS + 1`` locks per tenant."""
    by_tenant: dict[str, set[tuple[str, str]]] = {}
    for tenant, key in keys:
        by_tenant.setdefault(tenant, set()).add((tenant, key))
    many = {t for t, mine in by_tenant.items() if len(mine) > MOST_KEY_LOCKS}
    few = set(by_tenant) - many
    await lock_keys(conn, postgres, [(t, whole) for t in many], shared=[(t, whole) for t in few])
    await lock_keys(conn, postgres, [key for t in few for key in by_tenant[t]])


async def lock_ordering_keys(
    conn: AsyncConnection, postgres: bool, keys: Iterable[tuple[str, str]]
) -> None:
    """Lock these (tenant, ordering key) pairs (``lock_by_tenant``) for placing,
    finishing or releasing their jobs."""
    await lock_by_tenant(conn, postgres, keys, _TENANT_ORDER)


async def place(
    conn: AsyncConnection, postgres: bool, entry: dict[str, Any], *, locked: bool = False
) -> None:
    """Set ``seq`` and, behind an unfinished predecessor, block a new queue entry;
    ``locked``: the caller took its key's lock already (``lock_ordering_keys``)."""
    key = entry.get("ordering_key")
    if key is None:
        return
    tenant = entry["tenant_id"]
    if not locked:
        await lock_ordering_keys(conn, postgres, [(tenant, key)])
    count, last = (await conn.execute(_TAIL, {"tenant": tenant, "key": key})).one()
    entry["seq"] = (last or 0) + 1
    if count:
        entry["available_at"] = BLOCKED


async def release_next(conn: AsyncConnection, keys: Iterable[tuple[str, str]], now: float) -> None:
    """Make the next waiting entry of each key claimable (its predecessor is done)."""
    for tenant, key in keys:
        await conn.execute(_RELEASE, {"now": now, "tenant": tenant, "key": key, "blocked": BLOCKED})
