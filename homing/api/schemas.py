"""Request and response bodies, in families: ``…Create``, ``…Patch``, ``…Public``.

Request bodies are ``Strict`` and lists are ``Page``s (``homing.api.base_schemas``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from homing.addresses import Mailbox, parse_mailbox
from homing.api.base_schemas import Strict
from homing.api.inbound_schemas import DeliveryEventPublic
from homing.models import (
    MAX_TTL_SECONDS,
    MIN_TTL_SECONDS,
    Attempt,
    Channel,
    Job,
    ProviderAccount,
)
from homing.queue.pacing import RATE_RULES, RateRule
from homing.vendors import VENDORS

# Every vendor's name, in the registry's order: the schema's enum.
if TYPE_CHECKING:
    ProviderName = str
else:
    ProviderName = Literal[tuple(VENDORS)]
# Which providers serve which channel (a provider of another channel is a 422).
CHAT_PROVIDER_NAMES = frozenset(n for n, v in VENDORS.items() if v.channel is Channel.CHAT)
PriorityName = Literal["CRITICAL", "NORMAL", "LOW"]


def _no_line_breaks(value: str) -> str:
    if "\r" in value or "\n" in value or "\x00" in value:
        raise ValueError("must not contain line breaks or NUL characters")
    return value


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


class ProviderPatch(Strict):
    priority: int | None = Field(default=None, ge=0, le=1000)
    enabled: bool | None = None
    rate_rules: list[RateRule] | None = None
    # Check the stored credentials with the provider again; success clears
    # ``credentials_rejected`` (docs/operations.md "Notices").
    recheck: bool | None = None


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
            provider=account.provider,
            priority=account.priority,
            enabled=account.enabled,
            credentials_preview=account.credentials_preview,
            config=account.config,
            created_at=account.created_at,
            credentials_rejected=account.credentials_rejected_at is not None,
            credentials_rejected_at=account.credentials_rejected_at,
        )


# Whole seconds only: strict, so "60", 60.5 and true are refused (docs/reliability.md "Expiry").
TtlSeconds = Annotated[int, Field(ge=MIN_TTL_SECONDS, le=MAX_TTL_SECONDS, strict=True)]


class NotificationCreate(Strict):
    """What every notification body shares, whatever its channel."""

    # Not delivered within this many seconds of acceptance, the job ends FAILED with
    # error_class "expired" (the tenant's default_ttl_seconds for the channel if left out).
    ttl_seconds: TtlSeconds | None = None


HeaderText = Annotated[str, StringConstraints(min_length=1, max_length=998)]
Body = Annotated[str, StringConstraints(max_length=5_000_000)]


class EmailCreate(NotificationCreate):
    to: Annotated[str, StringConstraints(min_length=3, max_length=400)]
    from_: Annotated[str, StringConstraints(min_length=3, max_length=400)] = Field(alias="from")
    subject: HeaderText
    text: Body | None = None
    html: Body | None = None
    priority: PriorityName | None = None
    provider: str | None = Field(default=None, max_length=100)
    fallback: str | None = Field(default=None, max_length=100)
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once"
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)

    model_config = ConfigDict(populate_by_name=True)
    # The comparison key of ``to``, read with it: the accepting transaction checks
    # suppressions by it rather than parsing the address again.
    _recipient: str | None = PrivateAttr(default=None)

    @property
    def recipient(self) -> str | None:
        """The suppression key of ``to`` (``Mailbox.key``), once validated."""
        return self._recipient

    @model_validator(mode="after")
    def _valid(self, info: ValidationInfo) -> EmailCreate:
        # Exactly one mailbox each, stored (and sent) in canonical form: homing.addresses.
        # A batch validates its messages with one ``context`` dict: an address repeated
        # in it (the sender, mostly) is parsed once for the request.
        memo = info.context if isinstance(info.context, dict) else None
        to = _mailbox(self.to, memo)
        self.to, self._recipient = str(to), to.key
        self.from_ = str(_mailbox(self.from_, memo))
        _no_line_breaks(self.subject)
        if self.text is None and self.html is None:
            raise ValueError("give 'text', 'html' or both")
        if self.fallback is not None and self.provider is None:
            raise ValueError("'fallback' needs 'provider'")
        return self


def _mailbox(value: str, memo: dict[str, Mailbox] | None) -> Mailbox:
    """The one mailbox ``value`` names (InvalidAddress otherwise), from ``memo`` when this
    request read it already; ``memo`` lives for one request, at most two entries per
    message, so one tenant's addresses never answer another's."""
    if memo is not None and value in memo:
        return memo[value]
    mailbox = parse_mailbox(_no_line_breaks(value))
    if memo is not None:
        memo[value] = mailbox
    return mailbox


class Queued(BaseModel):
    id: str
    status: str


class AttemptPublic(BaseModel):
    number: int
    provider: str
    outcome: str
    status_code: int | None
    error: str | None
    started_at: datetime
    duration_ms: int
    response_excerpt: str | None = None

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptPublic:
        return cls(
            number=attempt.number,
            provider=attempt.provider,
            outcome=attempt.outcome.value,
            status_code=attempt.status_code,
            error=attempt.error,
            started_at=attempt.started_at,
            duration_ms=attempt.duration_ms,
            response_excerpt=attempt.response_excerpt,
        )


class JobPublic(BaseModel):
    id: str
    channel: str
    status: str
    priority: PriorityName
    provider: str | None
    error: str | None
    error_class: str | None
    attempts: list[AttemptPublic]
    created_at: datetime
    completed_at: datetime | None
    expires_at: datetime | None = None
    # Provider events after the send (homing.api.inbound_schemas.history).
    delivery_status: str | None = None
    events: list[DeliveryEventPublic] = Field(default_factory=list)
    # An SMS job's message as sent: to, from, encoding, characters, segments.
    sms: dict[str, Any] | None = None

    @classmethod
    def of(cls, job: Job, attempts: list[Attempt]) -> JobPublic:
        return cls(
            id=job.id,
            channel=job.channel.value,
            status=job.status.value,
            priority=job.priority.name,  # type: ignore[arg-type]
            provider=job.provider,
            error=job.error,
            error_class=job.error_class,
            attempts=[AttemptPublic.of(a) for a in attempts],
            created_at=job.created_at,
            completed_at=job.completed_at,
            sms=sms_view(job),
            expires_at=job.expires_at,
        )


_SMS_SHOWN = ("to", "from", "encoding", "characters", "segments")


def sms_view(job: Job) -> dict[str, Any] | None:
    """What an SMS job shows of its payload: never the text itself, only its cost."""
    if job.channel is not Channel.SMS:
        return None
    return {key: job.payload.get(key) for key in _SMS_SHOWN}


class JobSummary(BaseModel):
    id: str
    channel: str
    status: str
    provider: str | None
    error: str | None
    created_at: datetime
    completed_at: datetime | None
