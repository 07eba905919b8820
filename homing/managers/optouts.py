"""What a recipient does through its links, with no sign-in (docs/recipients.md,
"Links"): one-click unsubscribe from a category (RFC 8058) and the hosted preference
page; and the links and header fields a send carries.

A token is read before anything is looked up (``OptOutLinks.read``); a token that does
not open, or names a recipient its tenant no longer has, is one same ``NotFound``.
Throttled twice, so that no tenant's recipients slow another's: a link that opens
counts against its own tenant's window (``HOMING_RECIPIENT_LINKS_PER_MINUTE``), one
that does not against the client address's (``HOMING_RECIPIENT_LINK_MISSES_PER_MINUTE``).
A mail provider posts every one-click unsubscribe of its users from a few addresses,
so a working link is never refused for its client address.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from homing.clock import Clock
from homing.domain.audit import AuditEvent
from homing.domain.categories import Category
from homing.email_headers import Headers
from homing.errors import NotFound, PublicUrlRequired
from homing.managers.audit import AuditLog
from homing.managers.optout_links import LinkClaim, LinkPurpose, OptOutLinks
from homing.managers.recipients import PREFERENCE_CHANNELS
from homing.models import Actor, ActorKind, AuditAction
from homing.ratelimit import RateLimiter
from homing.store.categories import CategoryStore
from homing.store.opt_outs import OptOutStore
from homing.store.preferences import PreferenceStore

__all__ = ["INVALID", "LinkLimits", "OptOuts", "PageRow", "SendLinks"]

INVALID = "This link does not work: it may be mistyped or cut short."
ONE_CLICK = "List-Unsubscribe=One-Click"  # RFC 8058 §3.1: the POST body and the field's value


@dataclass(frozen=True, slots=True)
class LinkLimits:
    """The two windows links are throttled by, per minute."""

    per_tenant: int
    misses_per_client: int


@dataclass(frozen=True, slots=True)
class SendLinks:
    """The links one send carries: unsubscribe from its category (None without one)
    and the preference page (None for an address-only send)."""

    unsubscribe_url: str | None
    preferences_url: str | None

    def __repr__(self) -> str:
        return "SendLinks(…)"


@dataclass(frozen=True, slots=True)
class PageRow:
    """One category on the preference page, and whether the recipient gets it on each
    channel (its choice, else the category's default)."""

    category: Category
    allowed: dict[str, bool]


class OptOuts:
    """Links a recipient opens, the changes they make, and the fields a send carries."""

    def __init__(
        self,
        links: OptOutLinks,
        store: OptOutStore,
        preferences: PreferenceStore,
        categories: CategoryStore,
        audit: AuditLog,
        limiter: RateLimiter,
        clock: Clock,
        *,
        limits: LinkLimits,
        public_url: str | None,
    ) -> None:
        self._links = links
        self._store = store
        self._preferences = preferences
        self._categories = categories
        self._audit = audit
        self._limiter = limiter
        self._clock = clock
        self._limits = limits
        self._public_url = public_url.rstrip("/") if public_url else None

    @property
    def links(self) -> OptOutLinks:
        return self._links

    def for_send(
        self,
        tenant_id: str,
        channel: str,
        category: str | None,
        recipient_id: str | None,
        address_key: str | None,
    ) -> SendLinks | None:
        """The links of one send (None when Homing has no HOMING_PUBLIC_URL, or the
        send names neither a recipient nor an address)."""
        if self._public_url is None:
            return None
        ref = None
        if recipient_id is None:
            if address_key is None:
                return None
            ref = self._links.address_ref(tenant_id, channel, address_key)
        unsubscribe = None
        if category is not None:
            claim = LinkClaim(tenant_id, channel, category, recipient_id, ref)
            unsubscribe = self._url(LinkPurpose.UNSUBSCRIBE, claim)
        preferences = None
        if recipient_id is not None:
            claim = LinkClaim(tenant_id, channel, category or "", recipient_id)
            preferences = self._url(LinkPurpose.PREFERENCES, claim)
        return SendLinks(unsubscribe, preferences)

    def marketing_headers(self, links: SendLinks | None, mailbox: str | None) -> Headers:
        """RFC 2369's ``List-Unsubscribe`` (the link, then ``mailbox`` as a mailto: when
        the tenant has one) and RFC 8058's ``List-Unsubscribe-Post``; PublicUrlRequired
        without a link."""
        if links is None or links.unsubscribe_url is None:
            raise PublicUrlRequired()
        value = f"<{links.unsubscribe_url}>"
        if mailbox:
            value += f", <mailto:{mailbox}?subject=unsubscribe>"
        return (("List-Unsubscribe", value), ("List-Unsubscribe-Post", ONE_CLICK))

    def _url(self, purpose: LinkPurpose, claim: LinkClaim) -> str:
        return f"{self._public_url}/{purpose.value}/{self._links.issue(purpose, claim)}"

    async def opened(self, purpose: LinkPurpose, token: str, client: str) -> LinkClaim:
        """The claim of a working link; NotFound (one same answer) otherwise,
        RateLimited past either window."""
        claim = self._links.read(purpose, token)
        if claim is not None and claim.recipient_id is not None:
            if not await self._store.known(claim.tenant_id, claim.recipient_id):
                claim = None
        if claim is None or (purpose is LinkPurpose.PREFERENCES and claim.recipient_id is None):
            miss = await self._limiter.hit(
                f"recipient-links:miss:{client}", self._limits.misses_per_client, 60
            )
            miss.enforce(60, "links that do not work", " from this address")
            raise NotFound(INVALID)
        decision = await self._limiter.hit(
            f"recipient-links:tenant:{claim.tenant_id}", self._limits.per_tenant, 60
        )
        decision.enforce(60, "recipient links opened")
        return claim

    async def unsubscribe(self, claim: LinkClaim) -> bool:
        """Opt the link's recipient (or address) out of its category on its channel;
        False when it was already (a replay changes nothing and records nothing)."""
        event = self._event(claim, AuditAction.RECIPIENT_UNSUBSCRIBED)
        if claim.recipient_id is None:
            assert claim.address_ref is not None
            return await self._store.opt_out_address(
                claim.tenant_id, claim.channel, claim.category, claim.address_ref, event
            )
        changes = {claim.category: {claim.channel: False}}
        return bool(await self._store.change(claim.recipient_id, changes, event))

    async def page(self, claim: LinkClaim) -> list[PageRow]:
        """Every category of the link's tenant, with the recipient's preferences."""
        assert claim.recipient_id is not None
        chosen = await self._preferences.chosen(claim.recipient_id)
        return [
            PageRow(category, {**category.defaults, **chosen.get(category.key, {})})
            for category in await self._categories.all(claim.tenant_id)
        ]

    async def save(self, claim: LinkClaim, wanted: Mapping[str, Mapping[str, bool]]) -> bool:
        """Store the page's choices (only keys of the tenant's categories and the
        preference channels are kept); True when something changed."""
        assert claim.recipient_id is not None
        known = {category.key for category in await self._categories.all(claim.tenant_id)}
        channels = {channel.value for channel in PREFERENCE_CHANNELS}
        changes = {
            key: {c: bool(v) for c, v in chosen.items() if c in channels}
            for key, chosen in wanted.items()
            if key in known
        }
        event = self._event(claim, AuditAction.RECIPIENT_PREFERENCES_CHANGED)
        return bool(await self._store.change(claim.recipient_id, changes, event))

    def _event(self, claim: LinkClaim, action: AuditAction) -> AuditEvent:
        actor = Actor(ActorKind.SYSTEM, "recipient link")
        return self._audit.event(
            actor,
            action,
            tenant_id=claim.tenant_id,
            target_type="recipient" if claim.recipient_id else "address",
            target_id=claim.recipient_id,
            changes={"category": claim.category, "channel": claim.channel},
        )
