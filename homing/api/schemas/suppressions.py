"""Bodies of the suppression routes (``/v1/suppressions``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, StringConstraints, model_validator

from homing.api.schemas.shared import Strict
from homing.channels import Channel
from homing.domain.suppressions import Suppression
from homing.store.suppressions import entered_key


class SuppressionCreate(Strict):
    channel: Literal["email", "sms"] = "email"
    address: Annotated[str, StringConstraints(min_length=3, max_length=320)]
    reason: Literal["manual", "hard_bounce", "complaint", "unsubscribed", "opted_out"] = "manual"

    @model_validator(mode="after")
    def _one_address(self) -> SuppressionCreate:
        # Strict, as a send's ``to`` (InvalidAddress and InvalidPhoneNumber are
        # ValueErrors: 422): an email address by its key, a phone number in E.164.
        self.address = entered_key(Channel(self.channel), self.address)
        return self


class SuppressionPublic(BaseModel):
    channel: str
    address: str
    reason: str
    source: str
    created_at: datetime

    @classmethod
    def of(cls, entry: Suppression) -> SuppressionPublic:
        return cls(
            channel=entry.channel.value,
            address=entry.address,
            reason=entry.reason,
            source=entry.source,
            created_at=entry.created_at,
        )
