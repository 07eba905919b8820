"""Bodies of the SMS endpoints: one SMS, and a batch of them.

Numbers are normalised to E.164 here (``homing.addresses.phone_key``), so the job, the
suppression list and every adapter see one form; the text is bounded in characters and
in segments (``homing.models.SmsSegments``) before it becomes a job.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from homing.addresses import MAX_PHONE, phone_key, sms_sender
from homing.api.schemas.batch import MAX_BATCH
from homing.api.schemas.email import PersonalCreate
from homing.api.schemas.shared import PriorityName, Strict
from homing.models import SmsSegments

# Twilio takes at most 1,600 characters; ten segments is what carriers reliably join.
MAX_SMS_CHARACTERS: Final = 1600
MAX_SMS_SEGMENTS: Final = 10


class SmsCreate(PersonalCreate):
    to: Annotated[str, StringConstraints(min_length=2, max_length=MAX_PHONE)] | None = None
    from_: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PHONE)] | None = Field(
        default=None, alias="from"
    )
    body: Annotated[str, StringConstraints(min_length=1, max_length=MAX_SMS_CHARACTERS)]
    priority: PriorityName | None = None
    provider: str | None = Field(default=None, max_length=100)
    fallback: str | None = Field(default=None, max_length=100)
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once"
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)
    # Undelivered by the route after a provider accepted it (Twilio 30007, 30008): try
    # the next provider (homing.store.rerouting). Not with an ordering key.
    fallback_on_undelivered: bool = False

    model_config = ConfigDict(populate_by_name=True)

    @model_validator(mode="after")
    def _valid(self) -> SmsCreate:
        self._one_destination(self.to)
        if self.to is not None:
            self.to = phone_key(self.to)
        if self.from_ is not None:
            self.from_ = sms_sender(self.from_)
        if "\x00" in self.body:
            raise ValueError("'body' must not contain NUL characters")
        segments = SmsSegments.of(self.body).segments
        if segments > MAX_SMS_SEGMENTS:
            raise ValueError(
                f"'body' takes {segments} segments; at most {MAX_SMS_SEGMENTS} are sent"
            )
        if self.fallback is not None and self.provider is None:
            raise ValueError("'fallback' needs 'provider'")
        if self.fallback_on_undelivered and self.ordering_key is not None:
            raise ValueError("'fallback_on_undelivered' cannot keep an 'ordering_key' in order")
        return self


class SmsBatchItem(SmsCreate):
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=255)


class SmsBatchCreate(Strict):
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_BATCH)
