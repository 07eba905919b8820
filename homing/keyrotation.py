"""``homing keys rotate``: re-seal every stored secret with the current master key.

Rotation in three steps (README, "Rotating the master key"): set the new key as
``HOMING_SECRET_KEY`` and the old one in ``HOMING_PREVIOUS_SECRET_KEYS``, run this,
then drop the old key. Until this has run, values sealed with the old key still open
(the Sealer tries every known key by id), so nothing stops working meanwhile.

Each sealed value is opened with the associated data it was bound to (its table,
row and field) and sealed again under the same binding, one row per statement, so
an interrupted run can simply be started again: values already under the current
key are skipped. Each write is a compare-and-swap (``homing.store.resealing``): a
value wiped or replaced since it was read stays as it is now, and is counted as
skipped rather than revived.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sqlalchemy import Table

from homing.crypto import Sealer
from homing.store.database import Database
from homing.store.inbound_schema import provider_inbound
from homing.store.providers import CREDENTIALS_FIELD
from homing.store.resealing import PAYLOAD_FIELD, ResealStore, Swap
from homing.store.schema import dead_letters, jobs, provider_accounts, webhook_secrets
from homing.store.webhooks import SECRET_FIELD, WEBHOOK_SECRETS_TABLE
from homing.webhooks.message import HEADERS_BINDING

log = logging.getLogger("homing.keys")


@dataclass
class RotationReport:
    """How many values were re-sealed, per place, how many were already current, and
    how many were skipped because they changed between the read and the write."""

    resealed: dict[str, int] = field(default_factory=dict)
    current: int = 0
    skipped: int = 0

    @property
    def total(self) -> int:
        return sum(self.resealed.values())


@dataclass(frozen=True, slots=True)
class _Column:
    """A column that holds one sealed value per row, and how it is bound."""

    name: str
    table: Table
    key: str
    column: str
    binding: Callable[[Any], tuple[str, str, str]]


_COLUMNS = (
    _Column(
        "provider credentials",
        provider_accounts,
        "id",
        "credentials_sealed",
        lambda row: ("provider_accounts", row.id, CREDENTIALS_FIELD),
    ),
    _Column(
        "webhook signing secrets",
        webhook_secrets,
        "id",
        "secret_sealed",
        lambda row: (WEBHOOK_SECRETS_TABLE, row.id, SECRET_FIELD),
    ),
    _Column(
        "inbound verification secrets",
        provider_inbound,
        "provider_account_id",
        "secret_sealed",
        lambda row: ("provider_inbound", row.provider_account_id, row.kind),
    ),
)


class KeyRotation:
    """Re-seals every stored secret under the current key, page by page.

    ``before_write`` (for tests) runs after a page is read and re-sealed in memory and
    before it is written back: the window in which a concurrent change could be lost.
    """

    def __init__(
        self,
        db: Database,
        sealer: Sealer,
        progress: Callable[[str], None] | None = None,
        *,
        before_write: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._store = ResealStore(db)
        self._sealer = sealer
        self._progress = progress or (lambda _message: None)
        self._before_write = before_write

    async def run(self) -> RotationReport:
        """Re-seal everything not yet under the current key; safe to run again."""
        report = RotationReport()
        for column in _COLUMNS:
            report.resealed[column.name] = await self._column(column, report)
        for name, table in (("webhook job headers", jobs), ("dead-letter copies", dead_letters)):
            report.resealed[name] = await self._payloads(table, report)
        return report

    def _fresh(self, sealed: str) -> bool:
        return self._sealer.key_id_of(sealed) == self._sealer.current_key_id

    def _reseal(self, sealed: str, binding: tuple[str, str, str]) -> str:
        table, row_id, name = binding
        plaintext = self._sealer.open(sealed, table=table, row_id=row_id, field=name)
        return self._sealer.seal(plaintext, table=table, row_id=row_id, field=name)

    async def _write(
        self,
        swaps: list[Swap],
        write: Callable[[list[Swap]], Awaitable[int]],
        report: RotationReport,
    ) -> int:
        """Write one page's compare-and-swaps; count the ones that lost a race as skipped."""
        if not swaps:
            return 0
        if self._before_write is not None:
            await self._before_write()
        written = await write(swaps)
        report.skipped += len(swaps) - written
        return written

    async def _column(self, column: _Column, report: RotationReport) -> int:
        done = 0
        key = column.table.c[column.key]
        write = partial(self._store.swap_column, column.table, key, column.column)
        async for rows in self._pages(column.table, key):
            swaps = []
            for row in rows:
                sealed = getattr(row, column.column)
                if not sealed:
                    continue  # a deleted provider's wiped credentials
                if self._fresh(sealed):
                    report.current += 1
                    continue
                value = self._reseal(sealed, column.binding(row))
                swaps.append(Swap(getattr(row, column.key), sealed, value))
            done += await self._write(swaps, write, report)
            self._progress(f"{column.name}: {done} re-sealed")
        return done

    async def _payloads(self, table: Table, report: RotationReport) -> int:
        done = 0
        write = partial(self._store.swap_payload, table)
        async for rows in self._pages(table, table.c.id):
            swaps = [s for row in rows if (s := self._payload(row, report))]
            done += await self._write(swaps, write, report)
            self._progress(f"{table.name} payloads: {done} re-sealed")
        return done

    def _payload(self, row: Any, report: RotationReport) -> Swap | None:
        sealed = (row.payload or {}).get(PAYLOAD_FIELD)
        if not sealed:
            return None
        if self._fresh(sealed):
            report.current += 1
            return None
        table_name, field_name = HEADERS_BINDING
        resealed = self._reseal(sealed, (table_name, row.tenant_id, field_name))
        return Swap(row.id, sealed, {**row.payload, PAYLOAD_FIELD: resealed})

    async def _pages(self, table: Table, key: Any) -> AsyncIterator[list[Any]]:
        after: Any = None
        while rows := await self._store.page(table, key, after):
            yield rows
            after = getattr(rows[-1], key.name)
