"""``homing keys rotate``: re-seal every stored secret with the current master key.

Rotation in three steps (docs/operations.md, "Rotating the master key"): set the new key as
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from homing.crypto import Sealer
from homing.store.database import Database
from homing.store.resealing import ResealStore, Sealed, Swap
from homing.webhooks.message import HEADERS_BINDING

log = logging.getLogger("homing.keys")


@dataclass
class RotationReport:
    """How many values were re-sealed, per place, how many were already current, and
    how many were skipped because they changed between the read and the write."""

    resealed: dict[str, int] = field(default_factory=dict)
    current: int = 0
    skipped: int = 0
    # Addresses kept only as keyed hashes: not re-keyed (see ``KeyRotation.run``).
    keyed_hashes: int = 0

    @property
    def total(self) -> int:
        return sum(self.resealed.values())


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
        self._store = ResealStore(db, HEADERS_BINDING)
        self._sealer = sealer
        self._progress = progress or (lambda _message: None)
        self._before_write = before_write

    async def run(self) -> RotationReport:
        """Re-seal everything not yet under the current key; safe to run again.

        The keyed hashes of erased addresses and address opt-outs are counted, not
        re-keyed: a hash cannot be made again without its address, which Homing no
        longer holds. Each is matched under every key held and moved to the current
        key when its address is next seen (``homing.store.suppressions.rekey``); those
        never seen again hold only while their key stays in
        ``HOMING_PREVIOUS_SECRET_KEYS``, which the command's warning says."""
        report = RotationReport()
        for place in self._store.places:
            report.resealed[place] = await self._place(place, report)
        report.keyed_hashes = await self._store.keyed_hashes()
        return report

    def _reseal(self, value: Sealed) -> str | None:
        """``value`` sealed again under the current key; None when it already is."""
        if self._sealer.key_id_of(value.sealed) == self._sealer.current_key_id:
            return None
        table, row_id, name = value.binding
        plaintext = self._sealer.open(value.sealed, table=table, row_id=row_id, field=name)
        return self._sealer.seal(plaintext, table=table, row_id=row_id, field=name)

    async def _write(self, place: str, swaps: list[Swap], report: RotationReport) -> int:
        """Write one page's compare-and-swaps; count the ones that lost a race as skipped."""
        if not swaps:
            return 0
        if self._before_write is not None:
            await self._before_write()
        written = await self._store.swap(place, swaps)
        report.skipped += len(swaps) - written
        return written

    async def _place(self, place: str, report: RotationReport) -> int:
        done = 0
        after: Any = None
        while True:
            values, after = await self._store.page(place, after)
            swaps = []
            for value in values:
                new = self._reseal(value)
                if new is None:
                    report.current += 1
                else:
                    swaps.append(Swap(value, new))
            done += await self._write(place, swaps, report)
            if after is None:
                return done
            self._progress(f"{place}: {done} re-sealed")
