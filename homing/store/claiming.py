"""What a worker needs to start the jobs it claimed, read in the claim's transaction.

A claim round used to be four transactions: the claim, then the suppressions, the
tenants' provider accounts and their suspensions, each in one of its own. Read inside
the claim's transaction they cost a statement each and no BEGIN or COMMIT, and the
worker starts from one consistent snapshot. A job whose recipient is suppressed ends
in the same transaction, before any provider is called, exactly as it did afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from homing.crypto import AddressRefs
from homing.models import ClaimedJob, ProviderAccount
from homing.store.providers import accounts_of
from homing.store.suppressions import end_suppressed


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim round: the jobs to deliver, those ended as suppressed, the accounts of
    the claimed jobs' tenants and which of those tenants are suspended."""

    jobs: list[ClaimedJob] = field(default_factory=list)
    suppressed: list[ClaimedJob] = field(default_factory=list)
    accounts: dict[str, list[ProviderAccount]] = field(default_factory=dict)
    suspended: set[str] = field(default_factory=set)

    @property
    def size(self) -> int:
        """How many jobs the round claimed (suppressed ones included)."""
        return len(self.jobs) + len(self.suppressed)


async def ready(
    conn: AsyncConnection,
    claimed: Sequence[ClaimedJob],
    suspended: set[str],
    epoch: float,
    refs: AddressRefs | None = None,
) -> Claim:
    """End the suppressed among ``claimed`` (by address, or an erased address's hash
    under ``refs``) and read their tenants' accounts, in ``conn``'s transaction (the
    claim's)."""
    hit = await end_suppressed(conn, claimed, epoch, refs)
    accounts = await accounts_of(conn, {c.job.tenant_id for c in claimed})
    return Claim(
        jobs=[c for c in claimed if c.job.id not in hit],
        suppressed=[c for c in claimed if c.job.id in hit],
        accounts=accounts,
        suspended=suspended,
    )
