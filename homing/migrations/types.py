"""Column types the migrations use: frozen copies, never imports of application code.

A revision must build the same schema years from now, whatever ``homing.store`` has
become by then, so the types it needs are copied here as they were when written. Add a
new type (or a ``...V2``) rather than changing one: old revisions use these.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

ID = sa.String(36)


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both databases (SQLite drops the zone).

    A copy of ``homing.store.tables.columns.UTCDateTime`` as of revision 0001."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTCDateTime column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
