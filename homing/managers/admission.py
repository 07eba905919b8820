"""Admission control (docs/architecture.md, "Admission"): who is asking, may they send
now, may they send this.

- Who: API keys are checked against the database through a short-lived in-process
  cache (``HOMING_AUTH_CACHE_SECONDS``, under one second), so a busy key costs one
  lookup per TTL, and a revoked key, a suspension or a plan change reaches every API
  process within a second. The cache is keyed by the key's SHA-256, never the key.
- Now: the tenant's request rate on the sending endpoints, over a 60-second moving
  window, in the shared ``RateLimiter`` (Redis, or memory for one process).
- This: ``accept`` applies the plan to a job (forced priority, the test-key flag) and
  hands the store the tenant's quotas for the job's channel, which it counts in the
  transaction that accepts the job (``homing.store.usage``); ``retry`` counts a
  re-queued job the same way, and takes one request of the sending rate unless the
  caller took it already (the API's sending gate does, before the body is read).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from homing.clock import Clock, SystemClock
from homing.crypto import hash_api_key
from homing.domain.accepting import Accepted, NewJob
from homing.domain.tenants import Principal
from homing.errors import HomingError, SendAtTooFar
from homing.managers.plans import RATE_WINDOW_SECONDS, Limits, Quota, effective_limits
from homing.managers.quiet_hours import QuietWindow, window_of
from homing.managers.scheduling import needs_tenant_window, schedule
from homing.managers.suspension import refuse_suspended
from homing.metrics import ACCEPTED, REFUSED, SUPPRESSED, refusal_reason
from homing.models import Job, JobStatus, Plan, Tenant
from homing.ratelimit import RateDecision, RateLimiter
from homing.settings import AdmissionSettings
from homing.store.accepting import AcceptCheck
from homing.store.batches import BatchStore, ItemResult
from homing.store.jobs import JobStore
from homing.store.tenant_settings import TenantSettingsStore
from homing.store.tenants import TenantStore

_DEFAULT = AdmissionSettings()

_MAX_CACHED = 10_000


@dataclass(frozen=True, slots=True)
class _Cached:
    principal: Principal
    until: float


@dataclass(frozen=True, slots=True)
class _Defaults:
    """What a tenant's settings give a job that names nothing: ttls by channel and
    the quiet hours of a category that has none."""

    ttls: dict[str, int]
    quiet: QuietWindow | None = None


_NO_DEFAULTS = _Defaults({})


class Admission:
    """The API's gate: authenticates API keys (with a short cache), applies the plan's
    request rate and monthly quota, and hands valid jobs to the store in one
    transaction."""

    def __init__(
        self,
        tenants: TenantStore,
        limiter: RateLimiter,
        plans: Mapping[Plan, Limits],
        jobs: JobStore,
        batches: BatchStore,
        *,
        auth_cache_seconds: float = _DEFAULT.auth_cache_seconds,
        tenant_settings: TenantSettingsStore | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._tenants = tenants
        self._settings = tenant_settings
        self._clock = clock or SystemClock()
        # tenant id -> (until, its defaults), cached like keys (under a second).
        self._ttls: dict[str, tuple[float, _Defaults]] = {}
        self._ttl_lookups: dict[str, asyncio.Future[_Defaults]] = {}
        self._limiter = limiter
        self._jobs = jobs
        self._batches = batches
        self._plans = plans
        self._ttl = auth_cache_seconds
        self._cache: dict[str, _Cached] = {}
        # Lookups under way, by key digest: a burst of requests with a key whose cache
        # entry just expired makes one query, not one each.
        self._lookups: dict[str, asyncio.Future[Principal | None]] = {}
        self._generation = 0
        # Each tenant's effective limits, for the Tenant object they were worked out
        # from (a fresh lookup brings a new one): two per request otherwise.
        self._limits: dict[str, tuple[Tenant, Limits]] = {}

    def __repr__(self) -> str:
        return f"Admission({self._limiter!r}, auth_cache_seconds={self._ttl})"

    async def authenticate(self, key: str) -> Principal | None:
        """The principal behind an API key, or None for an unknown or revoked key."""
        digest = hash_api_key(key)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached.until > now:
            return cached.principal
        lookup = self._lookups.get(digest)
        if lookup is None:
            lookup = asyncio.ensure_future(self._lookup(key, digest))
            self._lookups[digest] = lookup
            lookup.add_done_callback(lambda done: self._looked_up(digest, done))
        # Shielded: one waiter giving up does not cancel the others' lookup.
        return await asyncio.shield(lookup)

    async def _lookup(self, key: str, digest: str) -> Principal | None:
        generation = self._generation
        principal = await self._tenants.authenticate(key)
        if principal is None:
            self._cache.pop(digest, None)
            return None
        # Not cached when a key or tenant was forgotten meanwhile: it may be stale.
        if self._ttl > 0 and generation == self._generation:
            now = time.monotonic()
            if len(self._cache) >= _MAX_CACHED:
                self._evict(now)
            self._cache[digest] = _Cached(principal, now + self._ttl)
        return principal

    def _looked_up(self, digest: str, done: asyncio.Future[Principal | None]) -> None:
        if self._lookups.get(digest) is done:
            del self._lookups[digest]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have gone

    def forget_key(self, key_id: str) -> None:
        """Drop a revoked key from this process's cache at once (others follow by TTL)."""
        self._drop(lambda p: p.api_key_id == key_id)

    def forget_tenant(self, tenant_id: str) -> None:
        """Drop a changed tenant's keys from this process's cache."""
        self._drop(lambda p: p.tenant.id == tenant_id)

    def limits(self, tenant: Tenant) -> Limits:
        known = self._limits.get(tenant.id)
        if known is not None and known[0] is tenant:
            return known[1]
        limits = effective_limits(tenant, self._plans)
        if len(self._limits) >= _MAX_CACHED:
            self._limits.clear()
        self._limits[tenant.id] = (tenant, limits)
        return limits

    async def accept(
        self, principal: Principal, new: NewJob, check: AcceptCheck | None = None
    ) -> Accepted:
        """Accept one job under the tenant's plan; QuotaExceeded when over quota."""
        limits = self.limits(principal.tenant)
        admitted = await self._with_ttl(_admitted(new, principal, limits))
        if admitted.send_at is not None or admitted.hold is not None:
            admitted = await self._scheduled(admitted)
        accepted = await self._jobs.accept(admitted, _quotas(new, limits), check)
        count_accepted(accepted)
        return accepted

    async def admitted(self, principal: Principal, new: NewJob) -> tuple[NewJob, tuple[Quota, ...]]:
        """The job as the plan admits it (its forced priority, the test-key flag, the
        tenant's default ttl) and the quotas it counts toward: what ``accept`` hands the
        store, for a caller whose store accepts it in a transaction of its own (the
        steps of a multi-channel notification, homing.store.notifications)."""
        limits = self.limits(principal.tenant)
        return await self._with_ttl(_admitted(new, principal, limits)), _quotas(new, limits)

    async def accept_many(
        self,
        principal: Principal,
        news: Sequence[NewJob],
        checks: Sequence[AcceptCheck | None] | None = None,
    ) -> list[ItemResult]:
        """Accept jobs of one channel together under the tenant's plan, all or none
        (``checks``, one per job, may refuse a job alone)."""
        if not news:
            return []
        limits = self.limits(principal.tenant)
        admitted = [await self._with_ttl(_admitted(n, principal, limits)) for n in news]
        for new in admitted:  # a loop, not any(): no call per job when none is scheduled
            if new.send_at is not None or new.hold is not None:
                return await self._scheduled_many(news, admitted, limits, checks)
        results = await self._batches.accept_many(admitted, _quotas(news[0], limits), checks)
        return _counted(news, results)

    async def _scheduled_many(
        self,
        news: Sequence[NewJob],
        admitted: Sequence[NewJob],
        limits: Limits,
        checks: Sequence[AcceptCheck | None] | None,
    ) -> list[ItemResult]:
        """``accept_many`` when some jobs are scheduled: each one's ``send_at``
        decided, those refused (SendAtTooFar) answered alone, the others together."""
        scheduled = [await self._scheduled_item(n) for n in admitted]
        kept = [i for i, n in enumerate(scheduled) if isinstance(n, NewJob)]
        jobs = [n for n in scheduled if isinstance(n, NewJob)]
        rules = None if checks is None else [checks[i] for i in kept]
        quotas = _quotas(news[0], limits)
        stored = iter(await self._batches.accept_many(jobs, quotas, rules) if jobs else [])
        results = [s if isinstance(s, HomingError) else next(stored) for s in scheduled]
        return _counted(news, results)

    async def _scheduled_item(self, new: NewJob) -> NewJob | HomingError:
        """``_scheduled`` for a batch's job: its refusal returned, not raised."""
        if new.send_at is None and new.hold is None:
            return new
        try:
            return await self._scheduled(new)
        except SendAtTooFar as refused:
            return refused

    async def _scheduled(self, new: NewJob) -> NewJob:
        """The job with its ``send_at`` decided (``homing.managers.scheduling``)."""
        window = None
        if needs_tenant_window(new) and self._settings is not None:
            window = (await self._defaults(new.tenant_id)).quiet
        return schedule(new, self._clock.now(), window)

    async def _with_ttl(self, new: NewJob) -> NewJob:
        """The job with the tenant's default ttl for its channel when it names none."""
        if new.ttl_seconds is not None or self._settings is None:
            return new
        ttl = (await self._defaults(new.tenant_id)).ttls.get(new.channel.value)
        return new if ttl is None else replace(new, ttl_seconds=ttl)

    async def _defaults(self, tenant_id: str) -> _Defaults:
        """The tenant's default ttls and quiet hours, cached like keys; a burst that
        finds the cache entry expired makes one query, not one each."""
        cached = self._ttls.get(tenant_id)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        lookup = self._ttl_lookups.get(tenant_id)
        if lookup is None:
            lookup = asyncio.ensure_future(self._look_up_ttls(tenant_id))
            self._ttl_lookups[tenant_id] = lookup
            lookup.add_done_callback(lambda done: self._ttls_looked_up(tenant_id, done))
        return await asyncio.shield(lookup)

    async def _look_up_ttls(self, tenant_id: str) -> _Defaults:
        assert self._settings is not None
        settings = await self._settings.get(tenant_id)
        found = _Defaults(settings.default_ttl_seconds, window_of(settings.quiet_hours))
        if not found.ttls and found.quiet is None:
            found = _NO_DEFAULTS
        if self._ttl > 0:
            if len(self._ttls) >= _MAX_CACHED:
                self._ttls.clear()
            self._ttls[tenant_id] = (time.monotonic() + self._ttl, found)
        return found

    def _ttls_looked_up(self, tenant_id: str, done: asyncio.Future[_Defaults]) -> None:
        if self._ttl_lookups.get(tenant_id) is done:
            del self._ttl_lookups[tenant_id]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have gone

    async def retry(
        self, principal: Principal, job_id: str, *, rate: RateDecision | None = None
    ) -> Job:
        """Re-queue a FAILED job under the tenant's plan: it takes one request of the
        sending rate (RateLimited past it) and uses one unit of its channel's quota like
        a new accept (QuotaExceeded when over); a test key may retry only its test jobs
        (Forbidden for a live one); a suspended tenant nothing (TenantSuspended).
        ``rate``: the request's decision when the caller took the rate already (the
        API's sending gate), so one request pays once."""
        refuse_suspended(principal.tenant)
        if rate is None:
            rate = await self.hit(principal.tenant)
        self.enforce(rate)
        limits = self.limits(principal.tenant)
        return await self._jobs.retry(
            principal.tenant.id, job_id, limits.quotas_for, test_only=principal.test_key
        )

    async def hit(self, tenant: Tenant) -> RateDecision:
        """Take one request from the tenant's sending rate (nothing when it is full)."""
        limit = self.limits(tenant).rate_per_minute
        return await self._limiter.hit(_rate_key(tenant.id), limit, RATE_WINDOW_SECONDS)

    async def rate_status(self, tenant: Tenant) -> RateDecision:
        """The tenant's sending rate as it stands, without taking from it."""
        limit = self.limits(tenant).rate_per_minute
        return await self._limiter.peek(_rate_key(tenant.id), limit, RATE_WINDOW_SECONDS)

    @staticmethod
    def enforce(decision: RateDecision) -> None:
        """Raise RateLimited (or RateLimitUnavailable when failing closed) if refused."""
        decision.enforce(RATE_WINDOW_SECONDS)

    def _drop(self, matches: Callable[[Principal], bool]) -> None:
        self._generation += 1
        self._lookups.clear()
        for digest in [d for d, c in self._cache.items() if matches(c.principal)]:
            del self._cache[digest]

    def _evict(self, now: float) -> None:
        expired = [d for d, c in self._cache.items() if c.until <= now]
        for digest in expired or list(self._cache)[: _MAX_CACHED // 10]:
            del self._cache[digest]


def _counted(news: Sequence[NewJob], results: list[ItemResult]) -> list[ItemResult]:
    """``results`` (one per job of ``news``), each counted in the metrics."""
    for new, result in zip(news, results, strict=True):
        if isinstance(result, HomingError):
            # A refusal of the whole request is counted where it is answered (the API).
            REFUSED.labels(new.channel.value, refusal_reason(result)).inc()
        else:
            count_accepted(result)
    return results


def count_accepted(accepted: Accepted) -> None:
    """One accept in the metrics: a new job is accepted, or refused as ``suppressed``
    when it ended SUPPRESSED; a replay counts again as neither."""
    if accepted.replayed:
        return
    channel = accepted.job.channel.value
    if accepted.job.status is JobStatus.SUPPRESSED:
        REFUSED.labels(channel, SUPPRESSED).inc()
    else:
        ACCEPTED.labels(channel).inc()


def _admitted(new: NewJob, principal: Principal, limits: Limits) -> NewJob:
    priority = new.priority if limits.priority is None else limits.priority
    return replace(new, priority=priority, test=principal.test_key)


def _quotas(new: NewJob, limits: Limits) -> tuple[Quota, ...]:
    return limits.quotas_for(new.channel)


def _rate_key(tenant_id: str) -> str:
    return f"send:{tenant_id}"
