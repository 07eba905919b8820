"""Bodies of the recipient, category and preference routes (docs/recipients.md).

Every field is bounded and checked in linear time before anything is stored: an
email by ``homing.addresses.parse_mailbox``, a phone number by ``phone_key``, a chat
id by its vendor's pattern, a time zone by its shape and then the system's IANA
names (no name reaches the zone files), a locale by the shape of a BCP 47 tag.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from homing.addresses import MAX_PHONE, parse_mailbox, phone_key
from homing.api.schemas.shared import CategoryKey, JsonObject, Name, Strict, examples
from homing.domain.categories import Category
from homing.domain.recipients import Recipient
from homing.managers.recipients import MAX_LOCALE, MAX_TIMEZONE, check_locale, check_timezone
from homing.vendors import VENDORS

# The recipient fields that hold a chat id, and the pattern of each (its vendor's).
CHAT_FIELDS: Final = {
    v.chat.recipient_field: re.compile(v.chat.pattern)
    for v in VENDORS.values()
    if v.chat is not None and v.chat.recipient_field
}

ChannelName = Literal["email", "sms", "chat", "in_app"]
ChatId = Annotated[str, StringConstraints(min_length=1, max_length=100)]
HHMM = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
# A preference change names at most every category of a tenant (HOMING_MAX_CATEGORIES).
MAX_PREFERENCE_CATEGORIES: Final = 1000


class RecipientPut(Strict):
    """``PUT /v1/recipients/{external_id}``: the fields given are set (null clears
    one), the others kept."""

    email: Annotated[str, StringConstraints(min_length=3, max_length=400)] | None = None
    phone: Annotated[str, StringConstraints(min_length=2, max_length=MAX_PHONE)] | None = None
    telegram_chat_id: ChatId | None = None
    slack_channel: ChatId | None = None
    locale: Annotated[str, StringConstraints(max_length=MAX_LOCALE)] | None = None
    # Bounded before check_timezone reads it: a 10,000-character name is refused here.
    timezone: Annotated[str, StringConstraints(max_length=MAX_TIMEZONE)] | None = None
    # Bounded in bytes by HOMING_RECIPIENT_DATA_MAX_BYTES (the manager checks it).
    data: JsonObject | None = None

    @model_validator(mode="after")
    def _valid(self) -> RecipientPut:
        if self.email is not None:
            if "\r" in self.email or "\n" in self.email or "\x00" in self.email:
                raise ValueError("'email' must not contain line breaks or NUL characters")
            self.email = str(parse_mailbox(self.email))
        if self.phone is not None:
            self.phone = phone_key(self.phone)
        for name, pattern in CHAT_FIELDS.items():
            value = getattr(self, name)
            if value is not None and not pattern.fullmatch(value):
                raise ValueError(f"'{name}' is not a chat id of that vendor's form")
        if self.locale is not None:
            check_locale(self.locale)
        if self.timezone is not None:
            check_timezone(self.timezone)
        return self

    def changes(self) -> dict[str, Any]:
        """The fields the body gave, with their values (None clears one)."""
        return {name: getattr(self, name) for name in self.model_fields_set}

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "email": "ada@example.com",
                "phone": "+14155552671",
                "locale": "en",
                "timezone": "Europe/London",
                "data": {"plan": "pro"},
            }
        ),
    )


class RecipientPublic(BaseModel):
    external_id: str
    email: str | None
    phone: str | None
    telegram_chat_id: str | None
    slack_channel: str | None
    locale: str | None
    timezone: str | None
    data: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, recipient: Recipient) -> RecipientPublic:
        return cls(
            external_id=recipient.external_id,
            email=recipient.email,
            phone=recipient.phone,
            telegram_chat_id=recipient.telegram_chat_id,
            slack_channel=recipient.slack_channel,
            locale=recipient.locale,
            timezone=recipient.timezone,
            data=recipient.data,
            created_at=recipient.created_at,
            updated_at=recipient.updated_at,
        )


class FrequencyCap(Strict):
    count: int = Field(ge=1, le=10_000, strict=True)
    per_seconds: int = Field(ge=1, le=2_592_000, strict=True)


class QuietHours(Strict):
    start: HHMM
    end: HHMM

    @model_validator(mode="after")
    def _a_window(self) -> QuietHours:
        if self.start == self.end:
            raise ValueError("quiet hours must start and end at different times")
        return self


class CategoryPut(Strict):
    """``PUT /v1/categories/{key}``: the whole category. A channel left out of
    ``default`` is on for ``transactional`` and off for ``marketing``."""

    name: Name
    kind: Literal["transactional", "marketing"]
    default: dict[ChannelName, Annotated[bool, Field(strict=True)]] = Field(default_factory=dict)
    frequency_cap: FrequencyCap | None = None
    quiet_hours: QuietHours | None = None

    def values(self) -> dict[str, Any]:
        """What the manager stores."""
        return {
            "name": self.name,
            "kind": self.kind,
            "defaults": dict(self.default),
            "frequency_cap": None
            if self.frequency_cap is None
            else self.frequency_cap.model_dump(),
            "quiet_hours": None if self.quiet_hours is None else self.quiet_hours.model_dump(),
        }

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "name": "Product news",
                "kind": "marketing",
                "default": {"email": True, "sms": False},
                "frequency_cap": {"count": 2, "per_seconds": 604800},
            }
        ),
    )


class CategoryPublic(BaseModel):
    key: str
    name: str
    kind: str
    default: dict[str, bool]
    frequency_cap: FrequencyCap | None
    quiet_hours: QuietHours | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, category: Category) -> CategoryPublic:
        cap, quiet = category.frequency_cap, category.quiet_hours
        return cls(
            key=category.key,
            name=category.name,
            kind=category.kind,
            default=category.defaults,
            frequency_cap=None if cap is None else FrequencyCap(**cap),
            quiet_hours=None if quiet is None else QuietHours(**quiet),
            created_at=category.created_at,
            updated_at=category.updated_at,
        )


ChannelChoices = dict[ChannelName, Annotated[bool, Field(strict=True)]]


class Preferences(Strict):
    """A recipient's preferences: by category key, whether each channel gets it."""

    categories: dict[CategoryKey, ChannelChoices]

    @field_validator("categories")
    @classmethod
    def _bounded(cls, value: dict[str, ChannelChoices]) -> dict[str, ChannelChoices]:
        if len(value) > MAX_PREFERENCE_CATEGORIES:
            raise ValueError(f"at most {MAX_PREFERENCE_CATEGORIES} categories at once")
        return value


class PreferenceLink(BaseModel):
    """The recipient's preference page: a signed URL under HOMING_PUBLIC_URL that opens
    with no sign-in (docs/recipients.md, "Links")."""

    url: str
