"""A tenant's sending volume by day: how many jobs were accepted each UTC day, and how
they ended, for the console's overview chart.

One grouped read of the tenant's jobs created since a day, over the
``(tenant_id, id)`` index: ids are time-ordered (``homing.models.new_id``), so the
window's first id bounds the scan to the window's rows.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.sql.elements import ColumnElement

from homing.domain.volume import DayVolume
from homing.store.database import Database
from homing.store.tables.core import jobs


def first_id_at(moment: datetime) -> str:
    """The smallest id ``new_id`` can make at or after ``moment``."""
    millis = int(moment.timestamp() * 1000)
    digits = f"{millis:012x}"
    return f"{digits[:8]}-{digits[8:]}-0000-0000-000000000000"


class VolumeStore:
    """Counts of jobs per day, for charts."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _day(self) -> ColumnElement[str]:
        if self._db.is_sqlite:
            return func.strftime("%Y-%m-%d", jobs.c.created_at)
        return func.to_char(func.timezone("UTC", jobs.c.created_at), "YYYY-MM-DD")

    async def daily(self, tenant_id: str, since: datetime) -> dict[str, DayVolume]:
        """The tenant's jobs created since ``since`` (a UTC midnight), by day."""
        day = self._day().label("day")
        query = (
            select(day, jobs.c.status, func.count())
            .where(
                jobs.c.tenant_id == tenant_id,
                jobs.c.id >= first_id_at(since),
                jobs.c.created_at >= since,
            )
            .group_by(day, jobs.c.status)
        )
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        counts: dict[str, list[int]] = {}
        for name, status, count in rows:
            slot = counts.setdefault(name, [0, 0, 0])
            slot[0 if status == "COMPLETED" else 1 if status == "FAILED" else 2] += count
        return {name: DayVolume(name, *slot) for name, slot in counts.items()}
