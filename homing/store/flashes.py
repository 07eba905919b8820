"""The SQL of console flashes: queue one for a session (keeping its newest few), take
a session's flashes once.

A flash is what the next page of one session says was done ("API key revoked"), and
may carry a one-time secret, sealed by the caller (``homing.managers.flashes``). Taking
deletes with ``RETURNING`` in one statement, so two pages loading at once never both
show the same flash. A session's flashes go with the session (``ON DELETE CASCADE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, exists, select

from homing.store.database import Database
from homing.store.tables.console import console_flashes

# What a flash's secret is sealed under (with its row id): ``homing keys rotate`` too.
FLASHES_TABLE = "console_flashes"
FLASH_SECRET_FIELD = "secret"


@dataclass(kw_only=True, frozen=True, slots=True)
class FlashRow:
    """One stored flash; ``secret_sealed`` is ciphertext (or None)."""

    id: str
    session_id: str
    kind: str
    message: str
    secret_sealed: str | None
    created_at: datetime

    def __repr__(self) -> str:
        return f"FlashRow(id={self.id!r}, kind={self.kind!r})"


class FlashStore:
    """Console flashes, by session."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, row: FlashRow, keep: int) -> None:
        """Store ``row`` and drop the session's oldest beyond its newest ``keep``."""
        c = console_flashes.c
        older = (
            select(c.id)
            .where(c.session_id == row.session_id)
            .order_by(c.id.desc())
            .offset(keep)
            .limit(1000)
        )
        async with self._db.transaction() as conn:
            await conn.execute(
                console_flashes.insert().values(
                    id=row.id,
                    session_id=row.session_id,
                    kind=row.kind,
                    message=row.message,
                    secret_sealed=row.secret_sealed,
                    created_at=row.created_at,
                )
            )
            dropped = (await conn.execute(older)).scalars().all()
            if dropped:
                await conn.execute(delete(console_flashes).where(c.id.in_(dropped)))

    async def take(self, session_id: str) -> list[FlashRow]:
        """The session's flashes, oldest first, deleted as they are read; a page with
        none to show writes nothing."""
        c = console_flashes.c
        mine = c.session_id == session_id
        async with self._db.transaction() as conn:
            if not (await conn.execute(select(exists().where(mine)))).scalar():
                return []
            rows = (
                await conn.execute(
                    delete(console_flashes).where(mine).returning(*console_flashes.c)
                )
            ).all()
        found = [FlashRow(**row._mapping) for row in rows]
        return sorted(found, key=lambda row: row.id)
