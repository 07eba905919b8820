"""A day of a tenant's accepted jobs; the SQL is ``homing.store.volume``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DayVolume:
    """One UTC day's accepted jobs of a tenant, by outcome so far."""

    day: str  # YYYY-MM-DD
    completed: int
    failed: int
    other: int

    @property
    def total(self) -> int:
        return self.completed + self.failed + self.other
