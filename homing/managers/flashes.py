"""Console flashes: what a change did, said once on the session's next page.

A console POST that changes something answers 303 (Post/Redirect/Get) and queues a
flash for its session; the next page rendered for that session shows it and it is
gone. A flash may carry a one-time secret (a new API key, a webhook signing secret):
it is stored sealed under the master key, bound to its row, opened once as the page
is rendered and deleted in the same statement, so a reload shows it no more. A
session keeps at most ``KEEP`` flashes (the oldest go); a message is cut at
``MAX_MESSAGE`` characters; a flash not shown within ``TTL`` is dropped unseen.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from homing.clock import Clock, as_datetime
from homing.crypto import Sealer
from homing.errors import DecryptionError
from homing.models import new_id
from homing.store.flashes import FLASH_SECRET_FIELD, FLASHES_TABLE, FlashRow, FlashStore

KEEP = 5
MAX_MESSAGE = 300
MAX_SECRET = 512
TTL = timedelta(minutes=10)


class FlashKind(StrEnum):
    """How a flash reads: something done (ok) or something that went wrong (error)."""

    OK = "ok"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Flash:
    """One flash as a page shows it; ``secret`` in clear, so never in a repr."""

    kind: FlashKind
    message: str
    secret: str | None = None

    def __repr__(self) -> str:
        shown = "yes" if self.secret else "no"
        return f"Flash(kind={self.kind.value!r}, message={self.message!r}, secret={shown})"


def _cut(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"


class Flashes:
    """Queue flashes for a session and take them once."""

    def __init__(self, store: FlashStore, sealer: Sealer, clock: Clock) -> None:
        self._store = store
        self._sealer = sealer
        self._clock = clock

    def __repr__(self) -> str:
        return "Flashes()"

    async def queue(
        self,
        session_id: str,
        message: str,
        kind: FlashKind = FlashKind.OK,
        *,
        secret: str | None = None,
    ) -> None:
        """Queue ``message`` (with ``secret``, sealed) for the session's next page."""
        row_id = new_id()
        sealed = None
        if secret is not None:
            if len(secret) > MAX_SECRET:
                raise ValueError("a flash's secret is at most 512 characters")
            sealed = self._sealer.seal(
                secret.encode(), table=FLASHES_TABLE, row_id=row_id, field=FLASH_SECRET_FIELD
            )
        now = as_datetime(self._clock.now())
        row = FlashRow(
            id=row_id,
            session_id=session_id,
            kind=kind.value,
            message=_cut(message),
            secret_sealed=sealed,
            created_at=now,
        )
        await self._store.add(row, KEEP)

    async def take(self, session_id: str) -> list[Flash]:
        """The session's flashes, oldest first, deleted as they are taken."""
        since = as_datetime(self._clock.now()) - TTL
        rows = await self._store.take(session_id)
        return [self._flash(row) for row in rows if row.created_at >= since]

    def _flash(self, row: FlashRow) -> Flash:
        kind = FlashKind(row.kind)
        if row.secret_sealed is None:
            return Flash(kind, row.message)
        try:
            secret = self._sealer.open(
                row.secret_sealed, table=FLASHES_TABLE, row_id=row.id, field=FLASH_SECRET_FIELD
            ).decode()
        except DecryptionError:
            # The master key it was sealed with is gone: say so, never guess.
            note = " The secret could not be shown; make a new one."
            return Flash(FlashKind.ERROR, _cut(row.message + note))
        return Flash(kind, row.message, secret)
