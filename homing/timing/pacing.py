"""Pacing: each provider account's rate rules, checked before every call to it.

A rule is ``{"scope": "account"|"recipient"|"individual"|"group", "limit": N,
"per_seconds": S}`` in the account's ``config.rate_rules``; an account without them gets
its vendor's preset (``homing.timing.presets``). ``individual`` and ``group`` rules apply
to chat jobs: a chat id below zero (or an ``@channel``) is a group or channel,
any other an individual chat. A send takes one slot from every rule that applies;
when any is full the provider counts as throttled for this job (docs/architecture.md,
"Failure classes"), and the job learns when the fullest rule frees a slot. A lower
priority fills only its share of a rule (``presets.share_of``), so higher priorities
find room first. Each window is kept ``margin`` seconds longer than the vendor's, so a
request that travels a little faster than the one before it still lands inside the
vendor's rule. Windows live
where the rate limiter keeps them: Redis when several processes share it, memory
otherwise.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from homing.addresses import address_key
from homing.channels import Channel
from homing.clock import Clock
from homing.models import Job, ProviderAccount
from homing.ratelimit import RateLimiter
from homing.timing.presets import PRESETS, share_of

Scope = Literal["account", "recipient", "individual", "group"]

# Seconds added to every window (see the module docstring).
DEFAULT_MARGIN_SECONDS = 0.5
# Windows whose deferral schedule is remembered at most (past ones are dropped first).
MAX_SCHEDULES = 10_000


class RateRule(BaseModel):
    """One pacing rule; the API validates ``config.rate_rules`` with this model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: Scope
    limit: int = Field(ge=1, le=1_000_000)
    per_seconds: int = Field(ge=1, le=86_400)


RATE_RULES = TypeAdapter(list[RateRule])


def rules_of(config: dict[str, Any]) -> list[RateRule]:
    """The account's rules (already validated when they were stored)."""
    return RATE_RULES.validate_python(config.get("rate_rules") or [])


def account_rules(account: ProviderAccount) -> list[RateRule]:
    """The rules that pace ``account``: its own when it sets ``rate_rules`` (even an
    empty list), else its vendor's preset."""
    if "rate_rules" in account.config:
        return rules_of(account.config)
    return [
        RateRule(scope=scope, limit=limit, per_seconds=per)  # type: ignore[arg-type]
        for scope, limit, per in PRESETS.get(account.vendor, ())
    ]


def is_group_chat(to: str) -> bool:
    """Whether a chat id names a group or channel (Bot API: negative ids, @channels)."""
    return to.startswith(("-", "@"))


@dataclass(frozen=True, slots=True)
class Paced:
    """A send refused by pacing: which rule, and seconds until it has room again;
    ``key`` names the rule's window, ``limit`` and ``window`` what this job may use of
    it."""

    rule: RateRule
    wait: float
    key: str = ""
    limit: int = 1
    window: float = 1.0

    @property
    def detail(self) -> str:
        r = self.rule
        return f"paced: {r.scope} rule {r.limit} per {r.per_seconds}s is full"


def address_of(job: Job) -> str | None:
    """The address a job goes to, for the ``recipient`` pacing rules: an email's mailbox by its key
    (``homing.addresses``: a display name or the case of the domain changes nothing),
    a webhook's URL, a chat's id."""
    to = job.payload.get("to")
    if job.channel is Channel.CHAT:
        return str(to) if to else None
    if isinstance(to, str) and to:
        return address_key(to)
    url = job.payload.get("url")
    return str(url).strip().lower() if url else None


class Pacer:
    """Takes a slot from an account's rules before each call to it; ``clock`` is the
    one the limiter answers on, so the wait it reports is measured on the same time."""

    def __init__(
        self, limiter: RateLimiter, clock: Clock, margin: float = DEFAULT_MARGIN_SECONDS
    ) -> None:
        self._limiter = limiter
        self._clock = clock
        self._margin = margin
        # In this process only: jobs waiting per window, and each window's next slot
        # for a deferred job.
        self._waiting: Counter[str] = Counter()
        self._next_slot: dict[str, float] = {}

    async def take(self, account: ProviderAccount, job: Job) -> Paced | None:
        """Take a slot from every rule of ``account`` that applies to ``job``.

        Rules are looked at first and taken only when all have room, so a full
        recipient rule does not also spend a slot of the account rule.
        """
        keyed = self._keys(account, job, account_rules(account))
        if not keyed:
            return None
        for key, rule in keyed:
            limit, window = share_of(rule.limit, job.priority), rule.per_seconds + self._margin
            decision = await self._limiter.peek(key, limit, window)
            if not decision.allowed:
                wait = max(0.001, decision.reset_at - self._clock.now())
                return Paced(rule, wait, key, limit, window)
        for key, rule in keyed:
            limit, window = share_of(rule.limit, job.priority), rule.per_seconds + self._margin
            decision = await self._limiter.hit(key, limit, window)
            if not decision.allowed:
                wait = max(0.001, decision.reset_at - self._clock.now())
                return Paced(rule, wait, key, limit, window)
        return None

    def may_wait(self, paced: Paced) -> bool:
        """Whether a job may wait in this worker for ``paced``'s window: no more of
        them than one window's worth, so a broadcast does not fill the tenant's
        in-flight share with waiting jobs (a CRITICAL job then finds room at once)."""
        return self._waiting[paced.key] < paced.limit

    @contextmanager
    def waiting(self, paced: Paced) -> Iterator[None]:
        """Count a job as waiting for ``paced``'s window while the block runs."""
        self._waiting[paced.key] += 1
        try:
            yield
        finally:
            self._waiting[paced.key] -= 1
            if not self._waiting[paced.key]:
                del self._waiting[paced.key]

    def deferral(self, paced: Paced) -> float:
        """Seconds to defer a job that may not wait: the next free slot of a schedule
        kept at the rule's rate, so the deferred jobs of a broadcast come back one
        slot apart instead of all at once."""
        now = self._clock.now()
        slot = max(now + paced.wait, self._next_slot.get(paced.key, 0.0))
        if len(self._next_slot) >= MAX_SCHEDULES:
            self._next_slot = {k: v for k, v in self._next_slot.items() if v > now}
        self._next_slot[paced.key] = slot + paced.window / paced.limit
        return slot - now

    def _keys(
        self, account: ProviderAccount, job: Job, rules: Sequence[RateRule]
    ) -> list[tuple[str, RateRule]]:
        keyed = []
        for index, rule in enumerate(rules):
            key = f"pace:{account.id}:{index}"
            if rule.scope != "account":
                recipient = address_of(job)
                if recipient is None or not _covers(rule.scope, job, recipient):
                    continue
                # Hashed: a recipient's address never becomes a Redis key.
                key += ":" + hashlib.sha256(recipient.encode()).hexdigest()[:32]
            keyed.append((key, rule))
        return keyed


def _covers(scope: Scope, job: Job, recipient: str) -> bool:
    """Whether a recipient-keyed rule of ``scope`` applies to ``job``'s recipient."""
    if scope == "recipient":
        return True
    if job.channel is not Channel.CHAT:
        return False
    return is_group_chat(recipient) is (scope == "group")
