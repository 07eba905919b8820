"""Recipients, categories and preferences (docs/recipients.md): their bounds, the rules
between them, and what a send by recipient is addressed to.

- A recipient is a person a tenant knows by ``external_id``, with an address per
  channel; its ``data`` is bounded (HOMING_RECIPIENT_DATA_MAX_BYTES) and a tenant
  keeps at most HOMING_MAX_RECIPIENTS_PER_TENANT of them.
- A category's defaults cover every preference channel: one a tenant leaves out is
  on for a ``transactional`` category and off for a ``marketing`` one (consent first).
- A recipient's preferences are its own choices over those defaults; what
  ``GET .../preferences`` shows is the result, for every category and channel.
- ``address`` turns the ``recipient`` and ``category`` of sends into the address on
  the send's channel and the preference the accepting transaction checks.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final
from zoneinfo import available_timezones

import orjson

from homing.channels import Channel
from homing.domain.audit import AuditEvent
from homing.domain.categories import Category
from homing.domain.preferences import PreferenceCheck
from homing.domain.recipients import Recipient
from homing.errors import (
    HomingError,
    InvalidRequest,
    RecipientUnreachable,
    UnknownCategory,
    UnknownRecipient,
)
from homing.settings import LimitSettings
from homing.store.categories import CategoryPage, CategoryStore
from homing.store.preferences import PreferenceStore
from homing.store.recipients import RecipientPage, RecipientStore

_DEFAULT = LimitSettings()

__all__ = [
    "CATEGORY_KEY",
    "EXTERNAL_ID",
    "PREFERENCE_CHANNELS",
    "Addressed",
    "Ask",
    "RecipientBounds",
    "Recipients",
    "check_locale",
    "check_timezone",
]

# What a tenant may name a recipient and a category by: bounded, and safe in a path.
EXTERNAL_ID: Final = r"[A-Za-z0-9][A-Za-z0-9._:@+=|~-]{0,254}"
CATEGORY_KEY: Final = r"[a-z0-9][a-z0-9_.-]{0,63}"
# The channels a recipient has an address on, and so a preference for.
PREFERENCE_CHANNELS: Final = (Channel.EMAIL, Channel.SMS, Channel.CHAT, Channel.IN_APP)
# The recipient field that holds the address on each channel (chat's is the vendor's).
ADDRESS_FIELDS: Final = {Channel.EMAIL: "email", Channel.SMS: "phone"}

MAX_TIMEZONE: Final = 64
MAX_LOCALE: Final = 35
# An IANA name's shape (``America/Argentina/Buenos_Aires``, ``Etc/GMT+5``, ``UTC``):
# checked before the name is looked up, so no ``..``, slash-led or backslashed path
# ever reaches the zone files.
_TIMEZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+-]{0,29}(?:/[A-Za-z0-9][A-Za-z0-9_+-]{0,29}){0,2}")
# BCP 47 in its common shape: a language, then up to four subtags (script, region…).
_LOCALE = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,4}")


@cache
def _zones() -> frozenset[str]:
    """The IANA names this system knows: read once per process, then a set lookup."""
    return frozenset(available_timezones())


def check_timezone(name: str) -> str:
    """``name`` when it is an IANA time zone this system knows; ValueError otherwise.
    Bounded and shape-checked first: a hostile name is refused without a file read."""
    if len(name) > MAX_TIMEZONE or not _TIMEZONE.fullmatch(name) or name not in _zones():
        raise ValueError("'timezone' must be an IANA time zone name such as Europe/Paris")
    return name


def check_locale(tag: str) -> str:
    """``tag`` when it is a BCP 47 language tag of the common shape (``en``,
    ``pt-BR``, ``zh-Hant-TW``); ValueError otherwise."""
    if len(tag) > MAX_LOCALE or not _LOCALE.fullmatch(tag):
        raise ValueError("'locale' must be a BCP 47 language tag such as en or pt-BR")
    return tag


@dataclass(frozen=True, slots=True)
class RecipientBounds:
    """HOMING_MAX_RECIPIENTS_PER_TENANT, HOMING_MAX_CATEGORIES_PER_TENANT and
    HOMING_RECIPIENT_DATA_MAX_BYTES."""

    max_recipients: int = _DEFAULT.recipients
    max_categories: int = _DEFAULT.categories
    data_max_bytes: int = _DEFAULT.recipient_data_bytes


@dataclass(frozen=True, slots=True)
class Ask:
    """One send's ``recipient`` and ``category``, and the recipient field that holds
    its channel's address (``email``, ``phone``, a chat vendor's field)."""

    recipient: str | None
    category: str | None
    field: str


@dataclass(kw_only=True, frozen=True, slots=True)
class Addressed:
    """What a send by recipient goes to: the address (None when the send named none,
    so its ``to`` stands) and the preference its accept checks (None without a
    category; without a recipient, that of the address: its opt-outs and the cap)."""

    address: str | None = None
    preference: PreferenceCheck | None = None
    # The named category's kind (``marketing`` sends carry an unsubscribe link), and the
    # recipient's row id (what its links name); None when the send names neither.
    kind: str | None = None
    recipient_id: str | None = None
    # What scheduling reads (docs/scheduling.md): the recipient's time zone and locale,
    # and the category's quiet hours as stored; None when not set or not named.
    timezone: str | None = None
    locale: str | None = None
    quiet_hours: dict[str, str] | None = None


class Recipients:
    """Recipients, categories and preferences, through their stores."""

    def __init__(
        self,
        recipients: RecipientStore,
        categories: CategoryStore,
        preferences: PreferenceStore,
        bounds: RecipientBounds,
    ) -> None:
        self._recipients = recipients
        self._categories = categories
        self._preferences = preferences
        self._bounds = bounds

    async def put(
        self,
        tenant_id: str,
        external_id: str,
        values: Mapping[str, Any],
        audit: AuditEvent | None = None,
    ) -> tuple[Recipient, bool]:
        """Create the recipient or change the fields given (validated by the API's
        schema), with ``audit``; True when it is new. InvalidRequest for ``data`` over
        its bound."""
        data = values.get("data")
        if data is not None:
            self._check_data(data)
        return await self._recipients.put(
            tenant_id, external_id, values, self._bounds.max_recipients, audit
        )

    def _check_data(self, data: object) -> None:
        limit = self._bounds.data_max_bytes
        try:
            size = len(orjson.dumps(data))
        except orjson.JSONEncodeError as exc:  # nested past orjson's depth
            raise InvalidRequest("'data' is nested too deeply", {"field": "data"}) from exc
        if size > limit:
            raise InvalidRequest(
                f"'data' takes {size} bytes as JSON; at most {limit} are kept",
                {"field": "data", "max_bytes": limit},
            )

    async def get(self, tenant_id: str, external_id: str) -> Recipient:
        """The tenant's recipient; NotFound otherwise."""
        return await self._recipients.get(tenant_id, external_id)

    async def page(self, tenant_id: str, *, limit: int, cursor: str | None) -> RecipientPage:
        """The tenant's recipients by external id."""
        return await self._recipients.page(tenant_id, limit=limit, cursor=cursor)

    async def put_category(
        self, tenant_id: str, key: str, values: Mapping[str, Any], audit: AuditEvent | None = None
    ) -> tuple[Category, bool]:
        """Create or replace a category, with ``audit``; its defaults made whole by its
        kind."""
        given: Mapping[str, bool] = values.get("defaults") or {}
        fill = values["kind"] == "transactional"
        defaults = {c.value: bool(given.get(c.value, fill)) for c in PREFERENCE_CHANNELS}
        whole = {
            "name": values["name"],
            "kind": values["kind"],
            "defaults": defaults,
            "frequency_cap": values.get("frequency_cap"),
            "quiet_hours": values.get("quiet_hours"),
        }
        return await self._categories.put(tenant_id, key, whole, self._bounds.max_categories, audit)

    async def category(self, tenant_id: str, key: str) -> Category:
        """The tenant's category; NotFound otherwise."""
        return await self._categories.get(tenant_id, key)

    async def categories(self, tenant_id: str, *, limit: int, cursor: str | None) -> CategoryPage:
        """The tenant's categories by key."""
        return await self._categories.page(tenant_id, limit=limit, cursor=cursor)

    async def preferences(self, tenant_id: str, external_id: str) -> dict[str, dict[str, bool]]:
        """Whether the recipient gets each of the tenant's categories on each channel:
        its own choice, else the category's default. NotFound for no such recipient."""
        recipient = await self._recipients.get(tenant_id, external_id)
        chosen = await self._preferences.chosen(recipient.id)
        return {
            category.key: {**category.defaults, **chosen.get(category.key, {})}
            for category in await self._categories.all(tenant_id)
        }

    async def choose(
        self,
        tenant_id: str,
        external_id: str,
        changes: Mapping[str, Mapping[str, bool]],
        audit: AuditEvent | None = None,
    ) -> dict[str, dict[str, bool]]:
        """Set the recipient's choices in ``changes`` and return its preferences;
        ``audit`` names the recipient's row. NotFound for no such recipient,
        UnknownCategory for a key the tenant lacks."""
        recipient = await self._recipients.get(tenant_id, external_id)
        await self._known_categories(tenant_id, changes.keys())
        event = None if audit is None else audit.about(target_id=recipient.id)
        await self._preferences.choose(recipient.id, changes, event)
        return await self.preferences(tenant_id, external_id)

    async def _known_categories(self, tenant_id: str, keys: Collection[str]) -> None:
        found = await self._categories.find_many(tenant_id, set(keys))
        missing = sorted(set(keys) - set(found))
        if missing:
            raise UnknownCategory(
                "the tenant has no category of this key", {"category": missing[0]}
            )

    async def address(self, tenant_id: str, asks: Sequence[Ask]) -> list[Addressed | HomingError]:
        """What each send goes to, in order (two queries for them all): the address
        its recipient has in its field, and the preference to check when it names a
        category. UnknownRecipient, RecipientUnreachable or UnknownCategory for a send
        that cannot go."""
        recipients = await self._recipients.find_many(
            tenant_id, {a.recipient for a in asks if a.recipient is not None}
        )
        categories = await self._categories.find_many(
            tenant_id, {a.category for a in asks if a.category is not None}
        )
        return [_addressed(ask, recipients, categories) for ask in asks]


def _addressed(
    ask: Ask, recipients: Mapping[str, Recipient], categories: Mapping[str, Category]
) -> Addressed | HomingError:
    if ask.category is not None and ask.category not in categories:
        return UnknownCategory("the tenant has no category of this key", {"field": "category"})
    category = None if ask.category is None else categories[ask.category]
    kind = None if category is None else category.kind
    quiet = None if category is None else category.quiet_hours
    if ask.recipient is None:  # to an address: its opt-outs and the cap are checked
        check = None if ask.category is None else PreferenceCheck(None, ask.category)
        return Addressed(preference=check, kind=kind, quiet_hours=quiet)
    recipient = recipients.get(ask.recipient)
    if recipient is None:
        return UnknownRecipient("no recipient has this external id", {"field": "recipient"})
    address = getattr(recipient, ask.field, None) if ask.field else None
    if not address:
        return RecipientUnreachable(
            "the recipient has no address on this channel", {"field": ask.field or "recipient"}
        )
    check = None if ask.category is None else PreferenceCheck(recipient.id, ask.category)
    return Addressed(
        address=str(address),
        preference=check,
        kind=kind,
        recipient_id=recipient.id,
        timezone=recipient.timezone,
        locale=recipient.locale,
        quiet_hours=quiet,
    )
