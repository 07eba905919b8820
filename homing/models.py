"""Frozen domain types shared by every layer. No I/O here."""

from __future__ import annotations

import enum
import hashlib
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Final, Literal, Required, TypedDict, cast

from homing.channels import Channel
from homing.email_headers import email_headers


class Priority(enum.IntEnum):
    """Lower value is served first; stored as the integer."""

    CRITICAL = 0
    NORMAL = 1
    LOW = 2


class Plan(enum.StrEnum):
    """A tenant's plan, which sets its request rate and monthly quotas."""

    FREE = "FREE"
    INDIE = "INDIE"
    STARTUP = "STARTUP"


class JobStatus(enum.StrEnum):
    """Where a job stands; the terminal ones have no queue entry."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    SUPPRESSED = "SUPPRESSED"
    # Withdrawn by the tenant before a worker held it (``POST /v1/jobs/{id}/cancel``).
    CANCELLED = "CANCELLED"


TERMINAL_STATUSES = frozenset(
    {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.SUPPRESSED, JobStatus.CANCELLED}
)

# The ``error_class`` of a job that was not delivered before its ``expires_at``.
EXPIRED = "expired"
# ``ttl_seconds`` bounds (docs/reliability.md "Expiry"): one second to thirty days.
MIN_TTL_SECONDS = 1
MAX_TTL_SECONDS = 30 * 86_400


class Role(enum.StrEnum):
    """What a console member may do in a tenant: everything (owner) or read (viewer)."""

    OWNER = "owner"
    VIEWER = "viewer"


class DeliveryMode(enum.StrEnum):
    """Whether an uncertain provider outcome may be resent (at least once) or ends the
    job (at most once)."""

    AT_LEAST_ONCE = "at_least_once"
    AT_MOST_ONCE = "at_most_once"


class FailureClass(enum.StrEnum):
    """How a provider failure is handled (docs/architecture.md, "Failure classes")."""

    TRANSIENT = "transient"
    THROTTLED = "throttled"
    PROVIDER_PERMANENT = "provider_permanent"
    MESSAGE_PERMANENT = "message_permanent"
    UNCERTAIN = "uncertain"


class AttemptOutcome(enum.StrEnum):
    """What one provider call came to, as recorded on an attempt row."""

    SUCCESS = "success"
    TRANSIENT = "transient"
    THROTTLED = "throttled"
    PROVIDER_PERMANENT = "provider_permanent"
    MESSAGE_PERMANENT = "message_permanent"
    UNCERTAIN = "uncertain"
    SKIPPED = "skipped"
    # A call an earlier claim may have made whose outcome was never recorded (its
    # worker died or lost its lease): written by the next claim, so the job's history
    # shows every call that may have reached a vendor (docs/reliability.md).
    UNKNOWN = "unknown"


class Queue(enum.StrEnum):
    """The logical queues a job is placed on, one per channel plus Homing's own email."""

    EMAIL = "notifications-email"
    WEBHOOK = "notifications-webhook"
    SMS = "notifications-sms"
    CHAT = "notifications-chat"
    # Never claimed: an in-app job is COMPLETED as it is accepted (docs/feed.md).
    IN_APP = "notifications-in-app"
    PLATFORM_EMAIL = "platform-email"


QUEUE_FOR_CHANNEL = {
    Channel.EMAIL: Queue.EMAIL,
    Channel.WEBHOOK: Queue.WEBHOOK,
    Channel.SMS: Queue.SMS,
    Channel.CHAT: Queue.CHAT,
    Channel.IN_APP: Queue.IN_APP,
}


@dataclass(frozen=True, slots=True)
class Quota:
    """At most ``limit`` jobs a month on ``channels`` together (periods: ``homing.clock``)."""

    name: str
    channels: frozenset[Channel]
    limit: int


class SignatureFormat(enum.StrEnum):
    """How a tenant's ``X-Webhook-*`` headers are written (a tenant setting)."""

    DESIGN = "design"
    NOTIFYKIT = "notifykit"


class EventType(enum.StrEnum):
    """The one vocabulary of inbound provider events, whatever vendor sent them."""

    DELIVERED = "delivered"
    OPENED = "opened"
    CLICKED = "clicked"
    DEFERRED = "deferred"  # also a soft bounce: recorded, never suppresses
    BOUNCED = "bounced"  # a hard bounce
    COMPLAINED = "complained"
    UNSUBSCRIBED = "unsubscribed"
    FAILED = "failed"  # accepted by the provider, then not sent
    INFO = "info"  # processed, sent, accepted…: part of the history, not a status
    OTHER = "other"  # not about an email (a contact or domain changed): ignored
    PAYMENT = "payment"  # billing


class EntryStatus(enum.StrEnum):
    """Where a journal entry is: stored, then applied, ignored or quarantined."""

    RECEIVED = "received"
    APPLIED = "applied"
    IGNORED = "ignored"
    QUARANTINED = "quarantined"


SUPPRESSING = frozenset({EventType.BOUNCED, EventType.COMPLAINED})


class EventError(ValueError):
    """A verified event that cannot be read or mapped; it is quarantined with this text."""


def payload_hash(payload: Any) -> str:
    """SHA-256 of the event's canonical JSON (sorted keys), the journal's body hash."""
    # Imported here: this module stays standard-library only for the receivers' helper
    # (``homing.webhooks`` imports it, and documents that it needs nothing else).
    import orjson

    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, slots=True)
class RawEvent:
    """One event cut out of a verified body, before it is understood.

    ``payload`` is the event's own JSON; ``raw`` keeps a body that was not JSON.
    ``error`` says why it cannot even be read (it is then quarantined as it is).
    """

    event_id: str
    payload: Any = None
    raw: str | None = None
    error: str | None = None
    body_hash: str = ""

    @classmethod
    def of(cls, event_id: str, payload: Any) -> RawEvent:
        return cls(event_id=event_id, payload=payload, body_hash=payload_hash(payload))


@dataclass(kw_only=True, frozen=True, slots=True)
class DeliveryEvent:
    """A provider event about one email, in Homing's terms."""

    type: EventType
    vendor_type: str
    occurred_at: datetime | None
    address: str | None = None
    job_hint: str | None = None  # the hjid the provider carried back
    message_ids: tuple[str, ...] = ()  # the provider message id as Homing may have stored it
    detail: dict[str, Any] = field(default_factory=dict)
    # The channel of the job it is about (SMS vendors report on SMS jobs).
    channel: Channel = Channel.EMAIL
    # An opt-out (True: the recipient replied STOP) or opt-in (False: START) that
    # suppresses or lifts ``address`` on ``channel``; about no job.
    opt_out: bool | None = None
    # Why the provider could not deliver by its route (carrier filtering…): a job that
    # asked for it continues at its next provider (homing.store.rerouting).
    reroute: str | None = None

    @property
    def suppresses(self) -> bool:
        return self.type in SUPPRESSING


@dataclass(frozen=True, slots=True)
class Payment:
    """A verified payment event of a billing provider: who paid, for which plan, how
    much."""

    tenant_id: str
    plan: Plan
    amount: int
    currency: str
    reference: str


_last_id = [0, 0]  # [millis, 12-bit sequence] of the previous id in this process


def new_id() -> str:
    """A time-ordered UUID (version 7 layout) as a string.

    Sorting ids sorts by creation time, which keeps cursor pagination and the
    primary-key index append-only. Within one millisecond the 12 ``rand_a`` bits
    count up (RFC 9562 §6.2, method 1), so ids made by one process are strictly
    increasing: attempts made in one pass list in the order they were made.
    """
    millis = time.time_ns() // 1_000_000
    last_millis, sequence = _last_id
    if millis <= last_millis:
        millis, sequence = last_millis, sequence + 1
        if sequence > 0xFFF:
            millis, sequence = millis + 1, 0
    else:
        sequence = int.from_bytes(os.urandom(2), "big") & 0x3FF
    _last_id[:] = [millis, sequence]
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = ((millis & ((1 << 48) - 1)) << 80) | (0x7 << 76) | (sequence << 64) | (0b10 << 62)
    return str(uuid.UUID(int=value | rand_b))


@dataclass(kw_only=True, frozen=True, slots=True)
class Tenant:
    """A customer of Homing: its plan, limits and whether it is suspended."""

    id: str
    name: str
    plan: Plan
    suspended: bool
    created_at: datetime
    # Custom limits that override the plan's (homing.managers.plans): requests a minute, and
    # monthly quotas by quota name ("webhook", "email+webhook"; None lifts a quota).
    rate_limit_per_minute: int | None = None
    quota_overrides: dict[str, int | None] | None = None


@dataclass(kw_only=True, frozen=True, slots=True)
class ProviderAccount:
    """A tenant's registered provider. ``credentials_sealed`` is ciphertext."""

    id: str
    tenant_id: str
    channel: Channel
    vendor: str
    priority: int
    enabled: bool
    credentials_sealed: str
    credentials_preview: str
    config: dict[str, Any]
    created_at: datetime
    # When a provider last answered that these credentials are refused (a notice told
    # the tenant); None once the tenant re-checked them.
    credentials_rejected_at: datetime | None = None


def resolve_pin(pin: str | None, accounts: Sequence[ProviderAccount]) -> ProviderAccount | None:
    """A pin names an account by id, or by provider name (the first in priority order)."""
    if pin is None:
        return None
    for account in accounts:
        if account.id == pin:
            return account
    return next((a for a in accounts if a.vendor == pin), None)


@dataclass(kw_only=True, frozen=True, slots=True)
class EmailContent:
    """The message of an email job: recipient, sender, subject, bodies, and the extra
    header fields (``homing.email_headers``: checked, in order) it carries."""

    to: str
    from_: str
    subject: str
    text: str | None = None
    html: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # No email exists with header fields that could inject or override others.
        if self.headers:
            email_headers(self.headers)


# SMS text (the SMS channel) -------------------------------------------------------------
#
# A text that fits the GSM 03.38 alphabet travels as GSM-7: 160 septets in one segment,
# 153 a segment once it is split (the rest holds the concatenation header); the
# extension table's characters take two septets. Anything else travels as UCS-2: 70
# UTF-16 code units in one segment, 67 once split. Carriers charge per segment.

GSM7_BASIC: Final = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM7_EXTENSION: Final = frozenset("^{}\\[~]|€\f")


class SmsEncoding(enum.StrEnum):
    """How an SMS text travels: the GSM 7-bit alphabet, or UCS-2 for anything else."""

    GSM7 = "GSM-7"
    UCS2 = "UCS-2"


@dataclass(frozen=True, slots=True)
class SmsSegments:
    """What an SMS text costs: its encoding, its length in that encoding's units
    (septets or UTF-16 code units) and the segments it is split into."""

    encoding: SmsEncoding
    units: int
    segments: int

    @classmethod
    def of(cls, text: str) -> SmsSegments:
        """Count ``text`` in one pass over its characters."""
        septets = 0
        for ch in text:
            if ch in GSM7_BASIC:
                septets += 1
            elif ch in GSM7_EXTENSION:
                septets += 2
            else:
                units = len(text.encode("utf-16-le")) // 2
                return cls(SmsEncoding.UCS2, units, _segments(units, 70, 67))
        return cls(SmsEncoding.GSM7, septets, _segments(septets, 160, 153))


def _segments(units: int, single: int, split: int) -> int:
    if units <= single:
        return 1
    return -(-units // split)


@dataclass(frozen=True, slots=True)
class SmsContent:
    """The message of an SMS job: the E.164 recipient, the sender (None: the provider
    account's own) and the text."""

    to: str
    from_: str | None
    body: str


# A job's payload per channel: the keys written at accept and read by the channel's
# sender, the console and the API (stored as one JSON object). ``template`` records the
# template a send was rendered from; ``test`` marks a console test send of raw content.
# Retention and erasure may replace a finished job's payload (docs/recipients.md), so
# only a sender, which holds an unfinished job, reads one through these types.
EmailPayload = TypedDict(
    "EmailPayload",
    {
        "to": Required[str],
        "from": Required[str],
        "subject": Required[str],
        "text": str | None,
        "html": str | None,
        # [name, value] pairs, checked by homing.email_headers before a send.
        "headers": list[list[str]],
        "template": dict[str, Any],
        "test": bool,
    },
    total=False,
)
SmsPayload = TypedDict(
    "SmsPayload",
    {
        "to": Required[str],
        # None: the provider account's own sender.
        "from": Required[str | None],
        "body": Required[str],
        "encoding": str,
        "characters": int,
        "segments": int,
        "fallback_on_undelivered": bool,
        "template": dict[str, Any],
        "test": bool,
    },
    total=False,
)


# How a chat message's text is marked up (each vendor renders its own subset).
ChatFormat = Literal["plain", "markdown", "html"]


class ChatPayload(TypedDict, total=False):
    to: Required[str]
    text: Required[str]
    format: ChatFormat
    # The chat vendor the address belongs to (``telegram``, ``slack``).
    kind: Required[str]
    template: dict[str, Any]
    test: bool


class WebhookPayload(TypedDict, total=False):
    url: Required[str]
    body: Required[str]
    # The request's extra headers, sealed (homing.webhooks.message).
    headers_sealed: Required[str | None]
    event_type: Required[str | None]
    template: dict[str, Any]
    test: bool


class InAppPayload(TypedDict, total=False):
    recipient: Required[str]
    category: Required[str | None]
    template: dict[str, Any]


@dataclass(kw_only=True, frozen=True, slots=True)
class Job:
    """The durable record of one notification, as the tenant sees it."""

    id: str
    tenant_id: str
    channel: Channel
    queue: Queue
    status: JobStatus
    priority: Priority
    payload: dict[str, Any]
    delivery: DeliveryMode
    provider_pin: str | None
    fallback_pin: str | None
    idempotency_key: str | None
    # The passes over its providers it has spent (the ``attempts_made`` column).
    passes_made: int
    skipped_providers: tuple[str, ...]
    provider: str | None
    provider_message_id: str | None
    error: str | None
    error_class: str | None
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    # Accepted with a test API key: only a sandbox provider may receive it.
    test: bool = False
    # Jobs of one tenant with the same key are delivered one at a time, in order.
    ordering_key: str | None = None
    # Not delivered by then, the job ends FAILED with error_class "expired".
    expires_at: datetime | None = None
    # When payload retention replaced its content (``JobStore.get`` reads it).
    payload_scrubbed_at: datetime | None = None
    # When it is due, if not on acceptance, and why: ``requested`` (the send's
    # ``send_at``) or ``quiet_hours`` (docs/scheduling.md).
    send_at: datetime | None = None
    schedule_reason: str | None = None
    # The W3C traceparent of the span that accepted it, when tracing was on then: its
    # delivery passes' spans are that span's children (docs/tracing.md).
    traceparent: str | None = None


@dataclass(kw_only=True, frozen=True, slots=True)
class Attempt:
    """One provider call. ``number`` is the pass (1..max_attempts) it belongs to."""

    job_id: str
    tenant_id: str
    number: int
    provider_account_id: str | None
    provider: str
    outcome: AttemptOutcome
    status_code: int | None
    error: str | None
    started_at: datetime
    duration_ms: int
    response_excerpt: str | None = None
    id: str = field(default_factory=new_id)


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job a worker holds under lease; ``claim_token`` proves the lease, and
    ``pass_number`` is the pass this claim runs (the queue entry's ``attempts`` column,
    moved by the claim)."""

    job: Job
    claim_token: str
    pass_number: int
    deferred_seconds: float
    provider_calls: int = 0


class DomainStatus(enum.StrEnum):
    """Where a sending domain stands at its provider."""

    PENDING = "pending"
    VERIFIED = "verified"
    FAILED = "failed"


@dataclass(kw_only=True, frozen=True, slots=True)
class DnsRecord:
    """One record the tenant publishes. ``purpose``: dkim, spf, return_path, mx, …"""

    type: str
    host: str
    value: str
    purpose: str | None = None
    priority: int | None = None
    valid: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of(cls, data: dict[str, Any]) -> DnsRecord:
        return cls(
            type=str(data["type"]),
            host=str(data["host"]),
            value=str(data["value"]),
            purpose=data.get("purpose"),
            priority=data.get("priority"),
            valid=data.get("valid"),
        )


@dataclass(frozen=True, slots=True)
class DomainInfo:
    """A provider's view of one sending domain: its id there, status and DNS records."""

    provider_domain_id: str
    status: DomainStatus
    records: tuple[DnsRecord, ...]


# --- The audit log (docs/architecture.md, "The audit log") ---------------------------


class AuditAction(enum.StrEnum):
    """The closed vocabulary of changes the audit log records."""

    PROVIDER_ADDED = "provider.added"
    PROVIDER_UPDATED = "provider.updated"
    PROVIDER_REMOVED = "provider.removed"
    PROVIDER_REORDERED = "provider.reordered"
    INBOUND_SECRET_ROTATED = "inbound_secret.rotated"
    INBOUND_SECRET_DELETED = "inbound_secret.deleted"
    API_KEY_ISSUED = "api_key.issued"
    API_KEY_REVOKED = "api_key.revoked"
    WEBHOOK_SECRET_CREATED = "webhook_secret.created"
    WEBHOOK_SECRET_ROTATED = "webhook_secret.rotated"
    WEBHOOK_SECRET_DELETED = "webhook_secret.deleted"
    WEBHOOK_ENDPOINT_ENABLED = "webhook_endpoint.enabled"
    SUPPRESSION_ADDED = "suppression.added"
    SUPPRESSION_REMOVED = "suppression.removed"
    DOMAIN_ADDED = "domain.added"
    DOMAIN_REMOVED = "domain.removed"
    TENANT_CREATED = "tenant.created"
    TENANT_UPDATED = "tenant.updated"
    TENANT_PLAN_CHANGED = "tenant.plan_changed"
    TENANT_SUSPENDED = "tenant.suspended"
    TENANT_RESUMED = "tenant.resumed"
    SETTINGS_UPDATED = "settings.updated"
    DEAD_LETTERS_REDRIVEN = "dead_letters.redriven"
    DEAD_LETTERS_PURGED = "dead_letters.purged"
    MASTER_KEY_ROTATED = "master_key.rotated"
    USER_INVITED = "user.invited"
    INVITATION_REVOKED = "invitation.revoked"
    INVITATION_ACCEPTED = "invitation.accepted"
    INVITATION_MAILED = "invitation.mailed"
    MEMBER_ROLE_CHANGED = "member.role_changed"
    MEMBER_REMOVED = "member.removed"
    USER_ADDED = "user.added"
    USER_PASSWORD_SET = "user.password_set"
    FEED_SECRET_ROTATED = "feed_secret.rotated"
    RECIPIENT_UNSUBSCRIBED = "recipient.unsubscribed"
    RECIPIENT_PREFERENCES_CHANGED = "recipient.preferences_changed"
    TEMPLATE_CREATED = "template.created"
    TEMPLATE_DELETED = "template.deleted"
    TEMPLATE_VERSION_ADDED = "template.version_added"
    TEMPLATE_VERSION_EDITED = "template.version_edited"
    TEMPLATE_VERSION_PUBLISHED = "template.version_published"
    LAYOUT_CREATED = "layout.created"
    LAYOUT_DELETED = "layout.deleted"
    LAYOUT_VERSION_ADDED = "layout.version_added"
    LAYOUT_VERSION_EDITED = "layout.version_edited"
    LAYOUT_VERSION_PUBLISHED = "layout.version_published"
    RECIPIENT_CREATED = "recipient.created"
    RECIPIENT_UPDATED = "recipient.updated"
    RECIPIENT_ERASED = "recipient.erased"
    CATEGORY_CREATED = "category.created"
    CATEGORY_UPDATED = "category.updated"
    ADDRESS_ERASED = "address.erased"


class ActorKind(enum.StrEnum):
    """Who made a change: a tenant's API key, the operator's admin token, a console
    user, the ``homing`` command, or Homing itself."""

    API_KEY = "api_key"
    ADMIN = "admin"
    USER = "user"
    CLI = "cli"
    SYSTEM = "system"


@dataclass(frozen=True, slots=True)
class Actor:
    """The one who made a change: a kind and an id (an API key's id, ``admin token``,
    a user's id), and a display name where there is one. Never a secret."""

    kind: ActorKind
    id: str
    name: str | None = None


def _payload_of(job: Job, channel: Channel) -> dict[str, Any]:
    if job.channel is not channel:
        raise ValueError(f"a {job.channel.value} job has no {channel.value} payload")
    return job.payload


def email_payload(job: Job) -> EmailPayload:
    """An email job's payload (ValueError for a job of another channel)."""
    return cast(EmailPayload, _payload_of(job, Channel.EMAIL))


def sms_payload(job: Job) -> SmsPayload:
    """An SMS job's payload (ValueError for a job of another channel)."""
    return cast(SmsPayload, _payload_of(job, Channel.SMS))


def chat_payload(job: Job) -> ChatPayload:
    """A chat job's payload (ValueError for a job of another channel)."""
    return cast(ChatPayload, _payload_of(job, Channel.CHAT))


def webhook_payload(job: Job) -> WebhookPayload:
    """A webhook job's payload (ValueError for a job of another channel)."""
    return cast(WebhookPayload, _payload_of(job, Channel.WEBHOOK))
