"""What the accepting transaction checks of a recipient's preferences
(docs/recipients.md); the SQL is ``homing.store.preferences``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PreferenceCheck:
    """What the accepting transaction checks for a job sent in a category: the
    recipient's row id, or (an address-only send) the address's keyed hash
    (``OptOutLinks.address_ref``), and the category's key (the channel is the job's)."""

    recipient_id: str | None
    category: str
    address_ref: str | None = None
    # The address's refs under the previous master keys the service holds (none
    # without a rotation): an opt-out stored before a rotation matches by one of them.
    earlier_refs: tuple[str, ...] = ()
