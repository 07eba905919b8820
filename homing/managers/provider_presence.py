"""Refusing at accept what cannot be delivered by construction (docs/api.md, "Refused
at accept"): a send on a channel the tenant has no enabled provider for (``no_provider``),
an SMS with no sender anywhere (``no_sender``). Without this check such a job would be
queued, claimed once and dead-lettered with ``no_provider``.

The accept path is hot, so what the tenant's providers can do is cached in this process,
positively only: a tenant seen able to send on a channel is believed able for
``CACHE_SECONDS``; a tenant seen unable is read again on its next send. A change made
through this process's ``ProviderStore`` drops the tenant's entry at once; a change made
through another process (another API process, the CLI) reaches this one within
``CACHE_SECONDS`` — a provider disabled there may still see sends accepted here for that
long, which then dead-letter with ``no_provider`` as they did before this check.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from homing.channels import Channel
from homing.errors import HomingError, NoProvider, NoSender
from homing.models import ProviderAccount
from homing.store.providers import ProviderStore

CACHE_SECONDS = 5.0
_MAX_CACHED = 10_000
# The fields of an SMS provider's config that give it a sender of its own (Twilio's
# messaging service picks one; homing/vendors/twilio/adapter.py).
SENDER_FIELDS = ("from", "messaging_service_sid")
# The channels that need one of the tenant's providers (webhooks and the feed need none).
_PROVIDED = frozenset({Channel.EMAIL, Channel.SMS, Channel.CHAT})


@dataclass(frozen=True, slots=True)
class Presence:
    """What a tenant's enabled providers can send: the channels, and whether an SMS
    provider has a sender of its own."""

    channels: frozenset[Channel]
    sms_sender: bool

    def allows(self, channel: Channel, needs_sender: bool) -> bool:
        """Whether a send on ``channel`` (an SMS with no ``from``: ``needs_sender``) can
        be delivered by construction."""
        if channel not in self.channels:
            return False
        return not (channel is Channel.SMS and needs_sender) or self.sms_sender


def presence_of(accounts: Sequence[ProviderAccount]) -> Presence:
    """The presence of these accounts (the disabled ones count for nothing)."""
    enabled = [a for a in accounts if a.enabled]
    sender = any(
        a.channel is Channel.SMS and any(a.config.get(f) for f in SENDER_FIELDS) for a in enabled
    )
    return Presence(frozenset(a.channel for a in enabled), sender)


def refusal_of(presence: Presence, channel: Channel, needs_sender: bool) -> HomingError | None:
    """The error refusing a send on ``channel`` that ``presence`` cannot deliver, or None."""
    if channel not in _PROVIDED or presence.allows(channel, needs_sender):
        return None
    if channel not in presence.channels:
        return NoProvider(
            f"no enabled {channel.value} provider: register or enable one first",
            {"channel": channel.value},
        )
    return NoSender(details={"channel": channel.value})


class ProviderPresence:
    """The accept routes' check that a send can be delivered, with a per-process
    positive cache of each tenant's ``Presence``."""

    def __init__(
        self,
        providers: ProviderStore,
        *,
        seconds: float = CACHE_SECONDS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._providers = providers
        self._seconds = seconds
        self._now = now
        self._cache: dict[str, tuple[float, Presence]] = {}
        # Reads under way, by tenant: a burst of sends past an expiry makes one query.
        self._lookups: dict[str, asyncio.Future[Presence]] = {}
        self._generations: dict[str, int] = {}
        providers.on_change(self.forget)

    def __repr__(self) -> str:
        return f"ProviderPresence(seconds={self._seconds}, cached={len(self._cache)})"

    def forget(self, tenant_id: str) -> None:
        """Drop the tenant's entry: its providers changed in this process (a read under
        way when they did is not cached, and the next send reads them again)."""
        self._cache.pop(tenant_id, None)
        self._lookups.pop(tenant_id, None)
        if len(self._generations) >= _MAX_CACHED:
            self._generations.clear()
        self._generations[tenant_id] = self._generations.get(tenant_id, 0) + 1

    async def check(self, tenant_id: str, channel: Channel, *, needs_sender: bool = False) -> None:
        """NoProvider when the tenant has no enabled provider for ``channel``; NoSender
        for an SMS with no sender (``needs_sender``) when no enabled SMS provider has
        one. A cached positive answer costs no query."""
        if channel not in _PROVIDED:
            return
        refusal = refusal_of(await self.of(tenant_id, channel, needs_sender), channel, needs_sender)
        if refusal is not None:
            raise refusal

    async def of(self, tenant_id: str, channel: Channel, needs_sender: bool = False) -> Presence:
        """The tenant's presence: the cached one when it allows this send, else read
        (one query, shared by the sends that wait for it; a batch reads it once)."""
        cached = self._cache.get(tenant_id)
        if (
            cached is not None
            and cached[0] > self._now()
            and cached[1].allows(channel, needs_sender)
        ):
            return cached[1]
        lookup = self._lookups.get(tenant_id)
        if lookup is None:
            lookup = asyncio.ensure_future(self._read(tenant_id))
            self._lookups[tenant_id] = lookup
            lookup.add_done_callback(lambda done: self._read_done(tenant_id, done))
        # Shielded: one waiter giving up does not cancel the others' read.
        return await asyncio.shield(lookup)

    async def _read(self, tenant_id: str) -> Presence:
        generation = self._generations.get(tenant_id, 0)
        presence = presence_of(await self._providers.all(tenant_id, enabled_only=True))
        # Not cached when the tenant's providers changed meanwhile: it may be stale.
        if generation == self._generations.get(tenant_id, 0):
            self._remember(tenant_id, presence, self._now())
        return presence

    def _read_done(self, tenant_id: str, done: asyncio.Future[Presence]) -> None:
        if self._lookups.get(tenant_id) is done:
            del self._lookups[tenant_id]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter may have gone

    def _remember(self, tenant_id: str, presence: Presence, now: float) -> None:
        if not presence.channels or self._seconds <= 0:
            return
        if len(self._cache) >= _MAX_CACHED:
            self._cache = {t: e for t, e in self._cache.items() if e[0] > now}
            if len(self._cache) >= _MAX_CACHED:
                self._cache.clear()
        self._cache[tenant_id] = (now + self._seconds, presence)
