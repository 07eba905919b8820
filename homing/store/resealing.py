"""The SQL of ``homing keys rotate``: read sealed values page by page, swap them back.

Every write is a compare-and-swap: a re-sealed value replaces the stored one only
while the row still holds exactly the ciphertext that was read. A value wiped or
replaced between the read and the write (a provider deleted, a secret rotated) is
left as it is now and counted as lost, never revived.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Table, select, update

from homing.store.database import Database

PAGE_SIZE = 500
PAYLOAD_FIELD = "headers_sealed"


@dataclass(frozen=True, slots=True)
class Swap:
    """Replace ``old`` by ``new`` in one row, if the row still holds ``old``.

    For a payload column, ``old`` is the sealed value inside the payload and ``new``
    the whole payload to write.
    """

    row_id: Any
    old: str
    new: Any


class ResealStore:
    """The SQL of key rotation: pages sealed columns and swaps each ciphertext for its
    resealed one."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def page(self, table: Table, key: Column[Any], after: Any) -> list[Any]:
        """Up to PAGE_SIZE rows of ``table`` ordered by ``key``, those after ``after``."""
        query = select(table).order_by(key).limit(PAGE_SIZE)
        if after is not None:
            query = query.where(key > after)
        async with self._db.transaction() as conn:
            return list((await conn.execute(query)).all())

    async def swap_column(
        self, table: Table, key: Column[Any], column: str, swaps: Sequence[Swap]
    ) -> int:
        """Write each swap whose row still holds its ``old`` value; how many were written."""
        target = table.c[column]
        written = 0
        async with self._db.transaction() as conn:
            for swap in swaps:
                result = await conn.execute(
                    update(table)
                    .where(key == swap.row_id, target == swap.old)
                    .values({column: swap.new})
                )
                written += result.rowcount
        return written

    async def swap_payload(self, table: Table, swaps: Sequence[Swap]) -> int:
        """As ``swap_column`` for the sealed value inside the JSON ``payload`` column."""
        sealed = table.c.payload[PAYLOAD_FIELD].as_string()
        written = 0
        async with self._db.transaction() as conn:
            for swap in swaps:
                result = await conn.execute(
                    update(table)
                    .where(table.c.id == swap.row_id, sealed == swap.old)
                    .values(payload=swap.new)
                )
                written += result.rowcount
        return written
