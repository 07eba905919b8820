"""Erasure (docs/recipients.md, "Erasure"): remove one person's data from a tenant.

``DELETE /v1/recipients/{external_id}`` erases a recipient (its row, preferences and
feed, and every trace of its addresses); ``POST /v1/erasure`` erases one address on one
channel. Either removes, from the calling tenant's data only: the payloads, recipient
columns and errors of finished jobs to it (the rows stay, with status and attempts, so
counts and audits stay true), their attempts' errors and responses, dead letters and
matched inbound events, the inbound events naming it (with their conflicting repeats,
``inbound_conflicts``), the console flashes naming it, the jobs its notifications'
steps would make (a pending step ends ``skipped``), the recipient's id in its finished
notifications and its digests (with their items' data), the Idempotency-Keys naming
it, and the address in audit events. Its suppressions and refusals
survive as keyed hashes (``AddressRefs``), so erasure never resubscribes anyone.

The work is done in batches of HOMING_ERASURE_BATCH_SIZE rows, one short transaction
each, at most HOMING_ERASURE_MAX_BATCHES per call; a tenant makes at most
HOMING_ERASURES_PER_MINUTE calls. A call that runs out of batches, or finds jobs still
queued, answers ``complete: false``; calling again finishes it (each batch leaves
nothing the next search finds again, so a crash loses no work either). A recipient's
row goes last, with the audit event, only once everything else is erased.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from homing.addresses import address_key
from homing.channels import Channel
from homing.domain.recipients import Recipient
from homing.errors import InvalidRequest
from homing.managers.audit import AuditLog
from homing.models import Actor, AuditAction
from homing.ratelimit import RateLimiter
from homing.settings import ErasureSettings
from homing.store.erasure import ERASED, ErasureStore, ErasureTarget
from homing.store.recipients import RecipientStore
from homing.store.suppressions import chat_recipient, entered_key
from homing.vendors import VENDORS

_DEFAULT = ErasureSettings()

__all__ = ["ERASABLE_CHANNELS", "Erasure", "ErasureLimits", "ErasureReport", "erased_payload"]

# The channels whose addresses are a person's (a webhook's URL is the tenant's own).
ERASABLE_CHANNELS: Final = (Channel.EMAIL, Channel.SMS, Channel.CHAT)
# Payload fields that say nothing of the person: kept so the job still reads as a job.
_KEPT_FIELDS: Final = frozenset(
    {"from", "kind", "template", "encoding", "characters", "segments", "category"}
)
# The chat vendors' recipient fields: (vendor, field).
_CHAT_FIELDS: Final = tuple(
    (v.name, v.chat.recipient_field)
    for v in VENDORS.values()
    if v.chat is not None and v.chat.recipient_field
)


def erased_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with every value but the kept fields' replaced by ``ERASED`` (and
    the sealed headers dropped)."""
    return {
        key: value if key in _KEPT_FIELDS or value is None else ERASED
        for key, value in payload.items()
        if key != "headers_sealed"
    }


@dataclass(frozen=True, slots=True)
class ErasureLimits:
    """HOMING_ERASURE_BATCH_SIZE, HOMING_ERASURE_MAX_BATCHES, HOMING_ERASURES_PER_MINUTE."""

    batch_size: int = _DEFAULT.batch_size
    max_batches: int = _DEFAULT.max_batches
    per_minute: int = _DEFAULT.per_minute


@dataclass(slots=True)
class ErasureReport:
    """What one call erased, per kind; what it kept as keyed hashes; whether the
    erasure is complete (else: jobs still queued, or batches left for another call)."""

    erased: Counter[str] = field(default_factory=Counter)
    hashed: Counter[str] = field(default_factory=Counter)
    waiting_jobs: int = 0
    complete: bool = False

    def erased_counts(self) -> dict[str, int]:
        """The kinds this call erased rows of, with their counts."""
        return {kind: count for kind, count in sorted(self.erased.items()) if count}

    def changes(self) -> dict[str, Any]:
        """The audit event's ``changes``: counts only, never an address."""
        return {
            "erased": self.erased_counts(),
            "kept_as_hash": dict(sorted(self.hashed.items())),
            "complete": self.complete,
        }


def recipient_addresses(recipient: Recipient) -> tuple[tuple[str, str], ...]:
    """The (channel, address key) pairs a recipient's sends went to."""
    found: list[tuple[str, str]] = []
    if recipient.email:
        found.append((Channel.EMAIL.value, address_key(recipient.email)))
    if recipient.phone:
        found.append((Channel.SMS.value, recipient.phone))
    for vendor, name in _CHAT_FIELDS:
        value = getattr(recipient, name, None)
        if value:
            found.append((Channel.CHAT.value, chat_recipient(vendor, str(value))))
    return tuple(found)


def _recipient_column(channel: Channel, key: str) -> tuple[str, str] | None:
    """The recipient column that holds an address of ``channel``, and the address as
    that column keeps it (an email's key, an E.164 number, a chat's bare id); None
    for a chat vendor no recipient field is for."""
    if channel is Channel.CHAT:
        vendor, _, chat_id = key.partition(":")
        column = dict(_CHAT_FIELDS).get(vendor)
        return None if column is None else (column, chat_id)
    return ("email" if channel is Channel.EMAIL else "phone"), key


def address_of(channel: Channel, address: str) -> str:
    """The key of an address given to ``POST /v1/erasure``: an email's, a phone
    number's E.164 form, a chat's ``<vendor>:<chat id>``; InvalidRequest otherwise."""
    if channel is Channel.CHAT:
        vendor, _, chat_id = address.partition(":")
        known = VENDORS.get(vendor)
        if known is None or known.chat is None or not chat_id:
            raise InvalidRequest("a chat address is <vendor>:<chat id>", {"field": "address"})
        return chat_recipient(vendor, chat_id)
    try:
        return entered_key(channel, address)
    except ValueError as exc:
        raise InvalidRequest(
            f"not an address of the {channel} channel", {"field": "address"}
        ) from exc


class Erasure:
    """Erases a recipient or an address from one tenant's data, in bounded batches."""

    def __init__(
        self,
        store: ErasureStore,
        recipients: RecipientStore,
        audit: AuditLog,
        limiter: RateLimiter,
        limits: ErasureLimits,
    ) -> None:
        self._store = store
        self._recipients = recipients
        self._audit = audit
        self._limiter = limiter
        self._limits = limits

    async def erase_recipient(
        self, actor: Actor, tenant_id: str, external_id: str
    ) -> ErasureReport:
        """Erase the tenant's recipient (NotFound when it has none of this id): its
        traces first, its row last, once nothing else is left."""
        recipient = await self._recipients.get(tenant_id, external_id)
        await self._take(tenant_id)
        target = ErasureTarget(
            tenant_id, recipient_addresses(recipient), recipient.id, recipient.external_id
        )
        report = await self._run(target)
        if report.complete:
            report.erased["recipients"] = 1
            event = self._event(
                actor, tenant_id, AuditAction.RECIPIENT_ERASED, recipient.id, report
            )
            report.erased["preferences"] = await self._store.delete_recipient(target, event)
        else:
            event = self._event(
                actor, tenant_id, AuditAction.RECIPIENT_ERASED, recipient.id, report
            )
            await self._store.record(event)
        return report

    async def erase_address(
        self, actor: Actor, tenant_id: str, channel: Channel, address: str
    ) -> ErasureReport:
        """Erase one address of the tenant's on ``channel``."""
        if channel not in ERASABLE_CHANNELS:
            raise InvalidRequest(
                "only email, sms and chat addresses are erased", {"field": "channel"}
            )
        key = address_of(channel, address)
        await self._take(tenant_id)
        target = ErasureTarget(tenant_id, ((channel.value, key),))
        report = await self._run(target)
        await self._recipients_holding(target, channel, report)
        ref = self._store.address_ref(tenant_id, channel.value, key)
        await self._store.record(
            self._event(actor, tenant_id, AuditAction.ADDRESS_ERASED, ref, report)
        )
        return report

    async def _recipients_holding(
        self, target: ErasureTarget, channel: Channel, report: ErasureReport
    ) -> None:
        """Clear the address from the tenant's recipients that hold it (their rows stay:
        a recipient is erased by ``DELETE``); their refusals are kept as its hash."""
        held = _recipient_column(channel, target.addresses[0][1])
        if held is None:
            return
        column, value = held
        size = self._limits.batch_size
        counts = await self._store.recipients_batch(target, column, value, size)
        report.erased["recipient_addresses"] += counts["recipient_addresses"]
        report.hashed["opt_outs"] += counts["opt_outs"]
        if counts["recipient_addresses"] >= size:
            report.complete = False

    async def _take(self, tenant_id: str) -> None:
        decision = await self._limiter.hit(
            f"erasure:tenant:{tenant_id}", self._limits.per_minute, 60
        )
        decision.enforce(60, "erasures")

    async def _run(self, target: ErasureTarget) -> ErasureReport:
        report = ErasureReport()
        report.hashed["suppressions"] = await self._store.hash_suppressions(target)
        report.hashed["opt_outs"] = await self._store.keep_opt_outs(target)
        budget = _Budget(self._limits.max_batches)
        size = self._limits.batch_size
        done = await budget.drain(
            lambda: self._store.jobs_batch(target, size, erased_payload), report, "jobs", size
        )
        for kind, batch in (
            ("inbound_events", lambda: self._store.events_batch(target, size)),
            ("audit_events", lambda: self._store.audit_batch(target, size)),
            ("flashes", lambda: self._store.flashes_batch(target, size)),
            ("feed_items", lambda: self._store.feed_batch(target, size)),
            ("notification_steps", lambda: self._store.steps_batch(target, size)),
            ("notifications", lambda: self._store.notifications_batch(target, size)),
        ):
            done = done and await budget.drain(_counted(kind, batch), report, kind, size)
        done = done and await budget.drain(
            lambda: self._store.digest_batch(target, size), report, "digests", size
        )
        report.waiting_jobs = await self._store.waiting_jobs(target, size)
        running = await self._store.running_notifications(target, size)
        report.complete = done and report.waiting_jobs == 0 and running == 0
        return report

    def _event(
        self,
        actor: Actor,
        tenant_id: str,
        action: AuditAction,
        target_id: str,
        report: ErasureReport,
    ) -> Any:
        return self._audit.event(
            actor,
            action,
            tenant_id=tenant_id,
            target_type="recipient" if action is AuditAction.RECIPIENT_ERASED else "address",
            target_id=target_id,
            changes=report.changes(),
        )


Batch = Callable[[], Awaitable[dict[str, int]]]


def _counted(kind: str, batch: Callable[[], Awaitable[int]]) -> Batch:
    async def run() -> dict[str, int]:
        return {kind: await batch()}

    return run


class _Budget:
    """The batches one call may still run that change rows (a batch that finds nothing
    left is free: at most one per kind a call)."""

    def __init__(self, batches: int) -> None:
        self.left = batches

    async def drain(self, batch: Batch, report: ErasureReport, kind: str, size: int) -> bool:
        """Run ``batch`` until a batch erases fewer than ``size`` of ``kind``; False
        when the budget ran out first."""
        while self.left > 0:
            counts = await batch()
            if any(counts.values()):
                self.left -= 1
            report.erased.update({k: v for k, v in counts.items() if v})
            if counts.get(kind, 0) < size:
                return True
        return False
