"""The SQL of ``homing keys rotate``: read sealed values page by page, swap them back.

Each place that holds sealed values (a column with one per row, or the sealed field
inside a JSON ``payload``) is named (``PLACES``); the store knows its table, key and
the associated data each value is bound to, the caller only opens and re-seals.

Every write is a compare-and-swap: a re-sealed value replaces the stored one only
while the row still holds exactly the ciphertext that was read. A value wiped or
replaced between the read and the write (a provider deleted, a secret rotated) is
left as it is now and counted as lost, never revived.

Keyed hashes of addresses are not sealed values: they are only counted
(``keyed_hashes``), for the command's warning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, func, select, update
from sqlalchemy.sql.elements import ColumnElement

from homing.crypto import HASHED_ADDRESS_PREFIX
from homing.store.database import Database
from homing.store.feed_access import FEED_SECRET_FIELD, FEED_SECRETS_TABLE
from homing.store.flashes import FLASH_SECRET_FIELD, FLASHES_TABLE
from homing.store.providers import CREDENTIALS_FIELD
from homing.store.tables.console import console_flashes
from homing.store.tables.core import dead_letters, jobs, provider_accounts, webhook_secrets
from homing.store.tables.feed import feed_secrets
from homing.store.tables.inbound import provider_inbound, suppressions
from homing.store.tables.recipients import address_opt_outs
from homing.store.webhooks import SECRET_FIELD, WEBHOOK_SECRETS_TABLE

__all__ = ["PAGE_SIZE", "PAYLOAD_FIELD", "ResealStore", "Sealed", "Swap"]

PAGE_SIZE = 500
PAYLOAD_FIELD = "headers_sealed"

Binding = tuple[str, str, str]  # (table, row id, field) a value is sealed under


@dataclass(frozen=True, slots=True)
class Sealed:
    """One sealed value as read: its row ``key``, the ciphertext and its binding."""

    key: Any
    sealed: str
    binding: Binding
    payload: dict[str, Any] | None = None  # the whole payload, for a payload place


@dataclass(frozen=True, slots=True)
class Swap:
    """Replace ``value`` by ``new`` (a ciphertext), if its row still holds ``value``."""

    value: Sealed
    new: str


@dataclass(frozen=True, slots=True)
class _Place:
    table: Table
    key: str
    column: str  # "payload" for the sealed field inside a JSON payload
    binding: Callable[[Any], Binding]


class ResealStore:
    """Pages and compare-and-swaps of sealed values, by place (``places``).

    ``payload_binding`` is the (table, field) that sealed webhook headers inside a job
    payload are bound to, with the tenant id as the row (``homing.webhooks.message``).
    """

    def __init__(self, db: Database, payload_binding: tuple[str, str]) -> None:
        self._db = db
        table_name, field_name = payload_binding

        def payload(row: Any) -> Binding:
            return (table_name, row.tenant_id, field_name)

        self._places = {
            "provider credentials": _Place(
                provider_accounts,
                "id",
                "credentials_sealed",
                lambda row: ("provider_accounts", row.id, CREDENTIALS_FIELD),
            ),
            "webhook signing secrets": _Place(
                webhook_secrets,
                "id",
                "secret_sealed",
                lambda row: (WEBHOOK_SECRETS_TABLE, row.id, SECRET_FIELD),
            ),
            "inbound verification secrets": _Place(
                provider_inbound,
                "provider_account_id",
                "secret_sealed",
                lambda row: ("provider_inbound", row.provider_account_id, row.kind),
            ),
            "webhook job headers": _Place(jobs, "id", "payload", payload),
            "dead-letter copies": _Place(dead_letters, "id", "payload", payload),
            "console flashes": _Place(
                console_flashes,
                "id",
                "secret_sealed",
                lambda row: (FLASHES_TABLE, row.id, FLASH_SECRET_FIELD),
            ),
            "feed secrets": _Place(
                feed_secrets,
                "tenant_id",
                "secret_sealed",
                lambda row: (FEED_SECRETS_TABLE, row.tenant_id, FEED_SECRET_FIELD),
            ),
        }

    @property
    def places(self) -> tuple[str, ...]:
        """Every place that holds sealed values, in the order a rotation visits them."""
        return tuple(self._places)

    async def page(self, place: str, after: Any) -> tuple[list[Sealed], Any]:
        """The sealed values among the next PAGE_SIZE rows of ``place`` after the key
        ``after`` (None: from the start), and the key to continue after (None: done)."""
        spec = self._places[place]
        key = spec.table.c[spec.key]
        query = select(spec.table).order_by(key).limit(PAGE_SIZE)
        if after is not None:
            query = query.where(key > after)
        async with self._db.transaction() as conn:
            rows = (await conn.execute(query)).all()
        if not rows:
            return [], None
        values = [v for row in rows if (v := _sealed(spec, row)) is not None]
        return values, getattr(rows[-1], spec.key)

    async def swap(self, place: str, swaps: Sequence[Swap]) -> int:
        """Write each swap whose row still holds its old value; how many were written."""
        spec = self._places[place]
        key = spec.table.c[spec.key]
        written = 0
        async with self._db.transaction() as conn:
            for swap in swaps:
                old = swap.value
                result = await conn.execute(
                    update(spec.table)
                    .where(key == old.key, _current(spec) == old.sealed)
                    .values({spec.column: _written(old, swap.new)})
                )
                written += result.rowcount
        return written

    async def keyed_hashes(self) -> int:
        """How many addresses are kept only as keyed hashes (erased addresses'
        suppressions and address opt-outs, all tenants'): a rotation cannot re-key
        them, having no address (``homing.store.suppressions.rekey``)."""
        s = suppressions.c
        erased = select(func.count()).where(s.address.startswith(HASHED_ADDRESS_PREFIX))
        opted = select(func.count()).select_from(address_opt_outs)
        async with self._db.transaction() as conn:
            return int(await conn.scalar(erased) or 0) + int(await conn.scalar(opted) or 0)


def _sealed(spec: _Place, row: Any) -> Sealed | None:
    key = getattr(row, spec.key)
    if spec.column != "payload":
        value = getattr(row, spec.column)
        # A deleted provider's credentials are wiped: nothing to re-seal.
        return Sealed(key, value, spec.binding(row)) if value else None
    sealed = (row.payload or {}).get(PAYLOAD_FIELD)
    return Sealed(key, sealed, spec.binding(row), row.payload) if sealed else None


def _current(spec: _Place) -> ColumnElement[Any]:
    column: ColumnElement[Any] = spec.table.c[spec.column]
    if spec.column == "payload":
        column = spec.table.c.payload[PAYLOAD_FIELD].as_string()
    return column


def _written(old: Sealed, new: str) -> Any:
    if old.payload is None:
        return new
    return {**old.payload, PAYLOAD_FIELD: new}
