"""Bodies of the provider-account routes (``/v1/providers``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from homing.api.schemas.shared import Strict, examples
from homing.channels import Channel
from homing.models import ProviderAccount
from homing.timing.pacing import RATE_RULES, RateRule
from homing.vendors import VENDORS

# Every vendor's name, in the registry's order: the schema's enum.
if TYPE_CHECKING:
    ProviderName = str
else:
    ProviderName = Literal[tuple(VENDORS)]
# Which providers serve which channel (a provider of another channel is a 422).
CHAT_PROVIDER_NAMES = frozenset(n for n, v in VENDORS.items() if v.channel is Channel.CHAT)
# The vendor of the example body: the first email API (names live in the descriptors).
_EXAMPLE = next(
    v for v in VENDORS.values() if v.channel is Channel.EMAIL and v.endpoint == "base_url"
)


class ProviderCreate(Strict):
    channel: Literal["email", "sms", "chat"]
    provider: ProviderName
    credentials: dict[str, Any]
    config: dict[str, Any] = Field(default_factory=dict)
    priority: int = Field(default=1, ge=0, le=1000)
    enabled: bool = True

    @model_validator(mode="after")
    def _storable(self) -> ProviderCreate:
        # Both are stored with orjson, which refuses what the JSON parser accepts:
        # integers beyond 64 bits and nesting deeper than 254 levels.
        for name in ("credentials", "config"):
            try:
                orjson.dumps(getattr(self, name))
            except TypeError:
                raise ValueError(
                    f"'{name}' must nest less deeply and hold integers within 64 bits"
                ) from None
        return self

    @model_validator(mode="after")
    def _provider_of_channel(self) -> ProviderCreate:
        if (self.channel == "chat") != (self.provider in CHAT_PROVIDER_NAMES):
            raise ValueError(f"{self.provider} is not a provider of the {self.channel} channel")
        return self

    @model_validator(mode="after")
    def _valid_rate_rules(self) -> ProviderCreate:
        if "rate_rules" in self.config:
            try:
                rules = RATE_RULES.validate_python(self.config["rate_rules"])
            except ValidationError as exc:
                problems = "; ".join(f"{e['loc']}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"config.rate_rules is not valid: {problems}") from None
            self.config["rate_rules"] = [r.model_dump() for r in rules]
        return self

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "channel": _EXAMPLE.channel.value,
                "provider": _EXAMPLE.name,
                "credentials": {c.name: "…" for c in _EXAMPLE.credentials if c.required},
                "priority": 1,
            }
        ),
    )


class ProviderPatch(Strict):
    priority: int | None = Field(default=None, ge=0, le=1000)
    enabled: bool | None = None
    rate_rules: list[RateRule] | None = None
    # Check the stored credentials with the provider again; success clears
    # ``credentials_rejected`` (docs/operations.md "Notices").
    recheck: bool | None = None

    model_config = ConfigDict(
        json_schema_extra=examples({"priority": 2, "enabled": False}),
    )


class ProviderPublic(BaseModel):
    id: str
    channel: str
    provider: str
    priority: int
    enabled: bool
    credentials_preview: str
    config: dict[str, Any]
    created_at: datetime
    # The provider refused these credentials at a send (docs/operations.md "Notices").
    credentials_rejected: bool = False
    credentials_rejected_at: datetime | None = None

    @classmethod
    def of(cls, account: ProviderAccount) -> ProviderPublic:
        return cls(
            id=account.id,
            channel=account.channel.value,
            provider=account.vendor,
            priority=account.priority,
            enabled=account.enabled,
            credentials_preview=account.credentials_preview,
            config=account.config,
            created_at=account.created_at,
            credentials_rejected=account.credentials_rejected_at is not None,
            credentials_rejected_at=account.credentials_rejected_at,
        )
