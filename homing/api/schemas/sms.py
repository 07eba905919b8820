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
from homing.api.schemas.email import SCHEDULED_IN_LINE, PersonalCreate
from homing.api.schemas.shared import PriorityName, Strict, examples
from homing.api.schemas.templates import Templated, content_or_template, no_template_fields
from homing.models import SmsSegments

# Twilio takes at most 1,600 characters; ten segments is what carriers reliably join.
MAX_SMS_CHARACTERS: Final = 1600
MAX_SMS_SEGMENTS: Final = 10


class SmsCreate(PersonalCreate, Templated):
    to: Annotated[str, StringConstraints(min_length=2, max_length=MAX_PHONE)] | None = None
    from_: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PHONE)] | None = Field(
        default=None, alias="from"
    )
    # Or ``template`` (and ``data``) in place of the body.
    body: Annotated[str, StringConstraints(min_length=1, max_length=MAX_SMS_CHARACTERS)] | None = (
        None
    )
    priority: PriorityName | None = None
    provider: str | None = Field(default=None, max_length=100)
    fallback: str | None = Field(default=None, max_length=100)
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once"
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)
    # Undelivered by the route after a provider accepted it (Twilio 30007, 30008): try
    # the next provider (homing.store.rerouting). Not with an ordering key.
    fallback_on_undelivered: bool = False

    model_config = ConfigDict(
        populate_by_name=True,
        json_schema_extra=examples(
            {"to": "+14155552671", "from": "Acme", "body": "Your code is 123456"}
        ),
    )

    @model_validator(mode="after")
    def _valid(self) -> SmsCreate:
        self._one_destination(self.to)
        if self.send_at is not None and self.ordering_key is not None:
            raise ValueError(SCHEDULED_IN_LINE)
        if self.to is not None:
            self.to = phone_key(self.to)
        if self.from_ is not None:
            self.from_ = sms_sender(self.from_)
        if self.template is not None:
            content_or_template(self, {"body": self.body is not None})
        elif self.body is None:
            raise ValueError("give 'body' (or 'template')")
        else:
            no_template_fields(self)
            check_sms_body(self.body, ValueError)
        if self.fallback is not None and self.provider is None:
            raise ValueError("'fallback' needs 'provider'")
        if self.fallback_on_undelivered and self.ordering_key is not None:
            raise ValueError("'fallback_on_undelivered' cannot keep an 'ordering_key' in order")
        return self


def check_sms_body(body: str, error: type[Exception]) -> None:
    """``error`` unless ``body`` is an SMS Homing sends: no NUL, at most
    MAX_SMS_SEGMENTS segments (the body's own bound, or a rendered one's)."""
    if "\x00" in body:
        raise error("'body' must not contain NUL characters")
    if len(body) > MAX_SMS_CHARACTERS:
        raise error(f"'body' is over {MAX_SMS_CHARACTERS} characters")
    segments = SmsSegments.of(body).segments
    if segments > MAX_SMS_SEGMENTS:
        raise error(f"'body' takes {segments} segments; at most {MAX_SMS_SEGMENTS} are sent")


class SmsBatchItem(SmsCreate):
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=255)


class SmsBatchCreate(Strict):
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_BATCH)

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "messages": [
                    {"to": "+14155552671", "body": "Your table is ready"},
                    {
                        "to": "+447700900123",
                        "body": "Your table is ready",
                        "idempotency_key": "t-2",
                    },
                ]
            }
        ),
    )
