"""The dead-letter console: redrive and purge in bounded batches.

Redrive re-queues each job through ``JobStore.retry`` — the path ``POST
/v1/jobs/{id}/retry`` takes — so it is conditional (a dead letter redriven twice, or by
two operators at once, is re-queued once) and each redriven job uses one unit of the
tenant's quota; a job over quota stays FAILED and is counted as ``refused``.

A redrive sends again, so it takes the tenant's sending rate too, once per request
(not per job: a bulk action is one request): a tenant's own redrive before it starts,
refused with RateLimited when the rate is full and with TenantSuspended when the
tenant is suspended; an operator's (the admin API, the operator's console pages,
``homing dlq``) once for each tenant it re-queues jobs of, and a tenant whose rate is
full keeps those jobs FAILED, counted as ``refused``. The operator may redrive a
suspended tenant's dead letters: they are held with its other jobs until it resumes.

A dead letter of class ``uncertain`` may have reached its provider (a call cut after
the request left, or a worker lost after the call): redriving it may deliver a second
copy. The answer counts those (``uncertain``), a dry run included, so the operator
knows before confirming.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from homing.domain.dead_letters import DeadLetterFilter
from homing.errors import Conflict, Forbidden, NotFound
from homing.managers.admission import Admission
from homing.managers.suspension import refuse_suspended
from homing.models import FailureClass, Tenant
from homing.store.dead_letters import DeadLetterStore
from homing.store.jobs import JobStore
from homing.store.tenants import TenantStore

# The error class of a dead letter whose last call may have reached its provider: a
# redrive of it may deliver a second copy (docs/reliability.md).
UNCERTAIN = FailureClass.UNCERTAIN.value

# Rows fetched per round of a bulk operation: bounds memory and each transaction.
BATCH = 500
# Ids one request may name.
MAX_IDS = 1000


@dataclass(slots=True)
class BulkResult:
    """What a bulk operation matched and did (``done``: redriven or purged);
    ``uncertain``: how many matched ended ``uncertain`` (a redrive may send them twice)."""

    matched: int = 0
    done: int = 0
    refused: int = 0
    uncertain: int = 0


# Called after each batch with the totals so far (``homing dlq`` prints them on stderr).
Progress = Callable[[BulkResult], None]


def _quiet(result: BulkResult) -> None:
    return None


class DeadLetters:
    """Redrive and purge dead letters for a tenant or an operator."""

    def __init__(
        self, store: DeadLetterStore, jobs: JobStore, tenants: TenantStore, admission: Admission
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._tenants = tenants
        self._admission = admission

    async def redrive(
        self,
        f: DeadLetterFilter,
        ids: Sequence[str] | None,
        *,
        dry_run: bool,
        tenant: Tenant | None = None,
        progress: Progress = _quiet,
    ) -> BulkResult:
        """Re-queue the FAILED jobs of the matching dead letters not yet redriven.
        ``tenant``: the tenant redriving its own (``f`` is narrowed to it), which pays
        its sending rate once before anything (TenantSuspended, RateLimited); None for
        the operator, whose redrive pays each tenant's rate once, as it reaches it."""
        if tenant is not None:
            refuse_suspended(tenant)
            if not dry_run:
                self._admission.enforce(await self._admission.hit(tenant))
        paid: dict[str, bool] = {} if tenant is None else {tenant.id: True}
        result = BulkResult()
        after: str | None = None
        # Only the dead letters there now: a redriven job that fails again makes a new
        # one, which this call must not chase (it did, for as long as jobs kept failing).
        upto = await self._store.newest(f, ids)
        while upto is not None and (
            batch := await self._store.matching(
                f, ids, after=after, limit=BATCH, pending_only=True, upto=upto
            )
        ):
            after = batch[-1][0]
            result.matched += len(batch)
            result.uncertain += sum(1 for row in batch if row[3] == UNCERTAIN)
            if dry_run:
                continue
            for _, tenant_id, job_id, _ in batch:
                await self._redrive_one(tenant_id, job_id, result, paid)
            progress(result)
        return result

    async def _redrive_one(
        self, tenant_id: str, job_id: str, result: BulkResult, paid: dict[str, bool]
    ) -> None:
        tenant = await self._tenants.get(tenant_id)
        if tenant is None:
            return
        if tenant_id not in paid:
            paid[tenant_id] = (await self._admission.hit(tenant)).allowed
        if not paid[tenant_id]:
            result.refused += 1
            return
        quotas = self._admission.limits(tenant).quotas_for
        try:
            await self._jobs.retry(tenant_id, job_id, quotas)
        except Forbidden:  # over quota (QuotaExceeded is a Forbidden)
            result.refused += 1
        except (Conflict, NotFound):  # already redriven, or gone meanwhile
            return
        else:
            result.done += 1

    async def purge(
        self,
        f: DeadLetterFilter,
        ids: Sequence[str] | None,
        *,
        dry_run: bool,
        tenant: Tenant | None = None,
        progress: Progress = _quiet,
    ) -> BulkResult:
        """Delete the matching dead-letter rows; their jobs stay FAILED. ``tenant``:
        the tenant purging its own (TenantSuspended when suspended); None for the
        operator."""
        if tenant is not None:
            refuse_suspended(tenant)
        result = BulkResult()
        after: str | None = None
        upto = await self._store.newest(f, ids)  # not those made while it runs
        while upto is not None and (
            batch := await self._store.matching(f, ids, after=after, limit=BATCH, upto=upto)
        ):
            after = batch[-1][0]
            result.matched += len(batch)
            if not dry_run:
                result.done += await self._store.delete(f.tenant_id, [row[0] for row in batch])
            progress(result)
        return result
