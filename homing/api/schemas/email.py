"""Bodies of the email routes: what every notification shares, and the email itself."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    model_validator,
)

from homing.addresses import Mailbox, parse_mailbox
from homing.api.schemas.shared import (
    CategoryKey,
    ExternalId,
    PriorityName,
    SendAt,
    Strict,
    TtlSeconds,
    examples,
)
from homing.api.schemas.templates import Templated, content_or_template, no_template_fields


def _no_line_breaks(value: str) -> str:
    if "\r" in value or "\n" in value or "\x00" in value:
        raise ValueError("must not contain line breaks or NUL characters")
    return value


# Checked in each channel's own validator (one more validator costs every accept a call).
SCHEDULED_IN_LINE = "'send_at' cannot be given with an 'ordering_key'"


class OneChannelCreate(Strict):
    """What every notification body shares, whatever its channel."""

    # Not delivered within this many seconds of acceptance, the job ends FAILED with
    # error_class "expired" (the tenant's default_ttl_seconds for the channel if left out).
    ttl_seconds: TtlSeconds | None = None
    # When the job is due (docs/scheduling.md): RFC 3339 with its offset, at most 30
    # days ahead (422 ``send_at_too_far``); a moment already past is now. Its ttl counts
    # from it. Not with an ``ordering_key``: a job in line goes when its turn comes.
    send_at: SendAt | None = None


class PersonalCreate(OneChannelCreate):
    """A notification that may go to a recipient rather than an address (email, SMS,
    chat: the channels a recipient has an address on)."""

    # In place of ``to``: the tenant's recipient of this external id, whose address on
    # the channel the job goes to (docs/recipients.md).
    recipient: ExternalId | None = None
    # The tenant's category of the notification; with a recipient, its preferences apply.
    category: CategoryKey | None = None

    def _one_destination(self, to: object) -> None:
        """ValueError unless exactly one of ``to`` and ``recipient`` is given."""
        if to is None and self.recipient is None:
            raise ValueError("give 'to' or 'recipient'")
        if to is not None and self.recipient is not None:
            raise ValueError("give 'to' or 'recipient', not both")


HeaderText = Annotated[str, StringConstraints(min_length=1, max_length=998)]
Body = Annotated[str, StringConstraints(max_length=5_000_000)]


class EmailCreate(PersonalCreate, Templated):
    to: Annotated[str, StringConstraints(min_length=3, max_length=400)] | None = None
    from_: Annotated[str, StringConstraints(min_length=3, max_length=400)] = Field(alias="from")
    # Or ``template`` (and ``data``) in place of subject, text and html.
    subject: HeaderText | None = None
    text: Body | None = None
    html: Body | None = None
    priority: PriorityName | None = None
    provider: str | None = Field(default=None, max_length=100)
    fallback: str | None = Field(default=None, max_length=100)
    delivery: Literal["at_least_once", "at_most_once"] = "at_least_once"
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)

    model_config = ConfigDict(
        populate_by_name=True,
        json_schema_extra=examples(
            {
                "to": "ada@example.com",
                "from": "Acme <hello@acme.example>",
                "subject": "Your receipt",
                "text": "Thanks for your order.",
                "html": "<p>Thanks for your order.</p>",
            },
            {
                "recipient": "user_42",
                "from": "hello@acme.example",
                "template": "welcome",
                "data": {"name": "Ada"},
                "category": "account",
            },
        ),
    )
    # The comparison key of ``to``, read with it: the accepting transaction checks
    # suppressions by it rather than parsing the address again.
    _address_key: str | None = PrivateAttr(default=None)

    @property
    def address_key(self) -> str | None:
        """The suppression key of ``to`` (``Mailbox.key``), once validated."""
        return self._address_key

    def address_to(self, address: str) -> None:
        """Send to ``address``: the email of the recipient the body names."""
        to = _mailbox(address, None)
        self.to, self._address_key = str(to), to.key

    @model_validator(mode="after")
    def _valid(self, info: ValidationInfo) -> EmailCreate:
        # Exactly one mailbox each, stored (and sent) in canonical form: homing.addresses.
        # A batch validates its messages with one ``context`` dict: an address repeated
        # in it (the sender, mostly) is parsed once for the request.
        memo = info.context if isinstance(info.context, dict) else None
        self._one_destination(self.to)
        if self.send_at is not None and self.ordering_key is not None:
            raise ValueError(SCHEDULED_IN_LINE)
        if self.to is not None:
            to = _mailbox(self.to, memo)
            self.to, self._address_key = str(to), to.key
        self.from_ = str(_mailbox(self.from_, memo))
        if self.template is not None:
            given = {"subject": self.subject is not None, "text": self.text is not None}
            content_or_template(self, {**given, "html": self.html is not None})
        elif self.subject is None:
            raise ValueError("give 'subject' (or 'template')")
        else:
            if self.data is not None or self.locale is not None:
                no_template_fields(self)
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
