"""The core tables (tenants to alerts), as SQLAlchemy Core metadata. Alembic migrations
create them; queries are written against them. One schema serves SQLite and PostgreSQL.

``metadata`` here holds every table, the other groups (``inbound``, ``console``,
``audit``, ``templates``, ``feed``) included."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    text,
)

# The other groups are defined in their own modules on the same metadata; importing
# it here is what makes ``metadata`` hold every table.
from homing.store.tables import audit as audit
from homing.store.tables import console as console
from homing.store.tables import feed as feed
from homing.store.tables import inbound as inbound
from homing.store.tables import notifications as notifications
from homing.store.tables import recipients as recipients
from homing.store.tables import templates as templates
from homing.store.tables.columns import ID as ID
from homing.store.tables.columns import UTCDateTime as UTCDateTime
from homing.store.tables.columns import metadata as metadata

tenants = Table(
    "tenants",
    metadata,
    Column("id", ID, primary_key=True),
    Column("name", String(200), nullable=False),
    Column("plan", String(20), nullable=False),
    Column("suspended", Boolean, nullable=False, default=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("rate_limit_per_minute", Integer),
    Column("quota_overrides", JSON),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False, index=True),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("prefix", String(20), nullable=False),
    Column("name", String(200), nullable=False),
    Column("test", Boolean, nullable=False, default=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used_at", UTCDateTime),
    Column("revoked_at", UTCDateTime),
)

provider_accounts = Table(
    "provider_accounts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("channel", String(20), nullable=False),
    Column("provider", String(40), nullable=False),
    Column("priority", Integer, nullable=False),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("credentials_sealed", Text, nullable=False),
    Column("credentials_preview", String(200), nullable=False),
    Column("config", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("deleted_at", UTCDateTime),
    # Set when a provider answered that these credentials are refused (migration 0015);
    # cleared when the tenant updates or re-checks the account.
    Column("credentials_rejected_at", UTCDateTime),
    Index("ix_provider_accounts_tenant_channel", "tenant_id", "channel", "priority"),
)

# The jobs a frequency cap counts (``ix_jobs_capped_*``): sent in a category, not
# SUPPRESSED; by recipient, those that name one. The counting queries repeat them word
# for word, so both databases prove the partial indexes usable, and a count of the jobs
# that name no recipient cannot take the recipients' index (homing.store.preferences).
CAPPED = "category IS NOT NULL AND status <> 'SUPPRESSED'"
CAPPED_BY_RECIPIENT = f"recipient_id IS NOT NULL AND {CAPPED}"

jobs = Table(
    "jobs",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("channel", String(20), nullable=False),
    Column("queue", String(40), nullable=False),
    Column("status", String(20), nullable=False),
    Column("priority", Integer, nullable=False),
    Column("payload", JSON, nullable=False),
    Column("delivery", String(20), nullable=False),
    Column("provider_pin", String(100)),
    Column("fallback_pin", String(100)),
    Column("idempotency_key", String(255)),
    Column("request_hash", String(64)),
    Column("attempts_made", Integer, nullable=False, default=0),
    Column("skipped_providers", JSON, nullable=False),
    Column("provider", String(40)),
    Column("provider_message_id", String(255)),
    Column("error", Text),
    Column("error_class", String(40)),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("completed_at", UTCDateTime),
    Column("ordering_key", String(255)),
    Column("test", Boolean, nullable=False, default=False, server_default=false()),
    # When retention replaced the payload's bodies by a marker (migration 0012).
    Column("payload_scrubbed_at", UTCDateTime),
    # The comparison key of the address a job is sent to (``Mailbox.key``, as
    # suppression compares), filled at accept; searched by ``GET /v1/jobs?to=``.
    Column("recipient", String(400)),
    # Not delivered by then, the job ends FAILED "expired" (``ttl_seconds``; migration 0014).
    Column("expires_at", UTCDateTime),
    # Sent to a recipient (its ``recipients.id``) in a category (migration 0025): what
    # a category's frequency cap counts (``ix_jobs_capped_recipient``, migration 0039).
    Column("recipient_id", ID),
    Column("category", String(64)),
    # When it is due (a scheduled send, quiet hours), and why: ``requested`` or
    # ``quiet_hours`` (migration 0029; docs/scheduling.md). None: due on acceptance.
    Column("send_at", UTCDateTime),
    Column("schedule_reason", String(20)),
    # The W3C ``traceparent`` of the span that accepted it, written only while tracing
    # is on (migration 0040; docs/tracing.md): its deliveries' spans join that trace.
    Column("traceparent", String(55)),
    UniqueConstraint("tenant_id", "idempotency_key", name="uq_jobs_tenant_idempotency_key"),
    Index("ix_jobs_tenant_created", "tenant_id", "id"),
    Index("ix_jobs_tenant_status", "tenant_id", "status", "id"),
    # Inbound events map back to jobs by the provider's message id when no hjid came
    # back (migration 0005).
    Index("ix_jobs_tenant_provider_message_id", "tenant_id", "provider_message_id"),
    # Retention walks finished jobs oldest first (homing/store/retention.py).
    Index("ix_jobs_completed_at", "completed_at"),
    Index(
        "ix_jobs_unscrubbed",
        "completed_at",
        sqlite_where=text("payload_scrubbed_at IS NULL"),
        postgresql_where=text("payload_scrubbed_at IS NULL"),
    ),
    # Job search, newest first within each filter (migration 0011).
    Index("ix_jobs_tenant_recipient", "tenant_id", "recipient", "id"),
    Index("ix_jobs_tenant_channel", "tenant_id", "channel", "id"),
    Index("ix_jobs_status", "status", "id"),
    Index("ix_jobs_recipient", "recipient", "id"),
    # Erasure finds a recipient's jobs; most jobs name none and stay out (migration 0039).
    Index(
        "ix_jobs_recipient_id",
        "recipient_id",
        sqlite_where=text("recipient_id IS NOT NULL"),
        postgresql_where=text("recipient_id IS NOT NULL"),
    ),
    # A category's frequency cap counts a person's recent jobs, by recipient and by
    # address (homing/store/preferences.py, migration 0039). SUPPRESSED jobs are left
    # out, so a flood of capped sends cannot lengthen the next count.
    Index(
        "ix_jobs_capped_recipient",
        "recipient_id",
        "category",
        "created_at",
        sqlite_where=text(CAPPED_BY_RECIPIENT),
        postgresql_where=text(CAPPED_BY_RECIPIENT),
    ),
    Index(
        "ix_jobs_capped_address",
        "tenant_id",
        "recipient",
        "category",
        "created_at",
        sqlite_where=text(CAPPED),
        postgresql_where=text(CAPPED),
    ),
)

# The hot table: a row exists only while its job has work to do. ``available_at`` is
# epoch seconds: when the entry may next be claimed. A claim moves it to the end of
# the lease, so an expired lease makes the entry claimable again with no extra state.
queue_entries = Table(
    "queue_entries",
    metadata,
    Column("job_id", ID, ForeignKey("jobs.id"), primary_key=True),
    Column("tenant_id", ID, nullable=False),
    Column("queue", String(40), nullable=False),
    Column("priority", Integer, nullable=False),
    Column("available_at", Float, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("deferred_seconds", Float, nullable=False, default=0.0),
    # Provider calls made for this entry so far (HOMING_MAX_PROVIDER_CALLS_PER_JOB).
    Column("provider_calls", Integer, nullable=False, default=0, server_default=text("0")),
    Column("claim_token", String(36)),
    Column("created_at", Float, nullable=False),
    # Jobs sharing an ordering key wait behind their head (``available_at`` = BLOCKED)
    # and run in ``seq`` order; see homing/store/ordering.py.
    Column("ordering_key", String(255)),
    Column("seq", BigInteger),
    # The claim walks tenants within a priority and takes each one's oldest due entries.
    Index("ix_queue_entries_fair", "queue", "priority", "tenant_id", "available_at"),
    # Only leased entries: counting a tenant's in-flight jobs never scans its backlog.
    Index(
        "ix_queue_entries_inflight",
        "queue",
        "tenant_id",
        sqlite_where=text("claim_token IS NOT NULL"),
        postgresql_where=text("claim_token IS NOT NULL"),
    ),
    Index(
        "ix_queue_entries_ordering",
        "tenant_id",
        "ordering_key",
        "seq",
        sqlite_where=text("ordering_key IS NOT NULL"),
        postgresql_where=text("ordering_key IS NOT NULL"),
    ),
)

attempts = Table(
    "attempts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("job_id", ID, ForeignKey("jobs.id"), nullable=False, index=True),
    Column("tenant_id", ID, nullable=False),
    Column("number", Integer, nullable=False),
    Column("provider_account_id", ID),
    Column("provider", String(40), nullable=False),
    Column("outcome", String(30), nullable=False),
    Column("status_code", Integer),
    Column("error", Text),
    Column("started_at", UTCDateTime, nullable=False),
    Column("duration_ms", Integer, nullable=False),
    # What the receiver answered, capped (webhooks; migration 0002).
    Column("response_excerpt", Text),
    # The provider failure-ratio alert's window (migration 0015).
    Index("ix_attempts_started_at", "started_at"),
)

dead_letters = Table(
    "dead_letters",
    metadata,
    Column("id", ID, primary_key=True),
    Column("job_id", ID, ForeignKey("jobs.id"), nullable=False, index=True),
    Column("tenant_id", ID, nullable=False, index=True),
    Column("queue", String(40), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("error", Text, nullable=False),
    Column("error_class", String(40), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("redriven_at", UTCDateTime),
    # The dead-letter spike alert and the daily digest (migration 0015).
    Index("ix_dead_letters_created_at", "created_at"),
)

# Jobs accepted per tenant, calendar month (UTC, "2026-05") and channel: the durable
# count monthly quotas are checked against, in the transaction that accepts the job.
usage_counters = Table(
    "usage_counters",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("period", String(7), primary_key=True),
    Column("channel", String(20), primary_key=True),
    Column("used", Integer, nullable=False),
)

# A tenant's outbound webhook signing secrets (sealed, bound to row and field). The
# current one has no ``expires_at``; after a rotation the previous one keeps signing
# until its ``expires_at``.
webhook_secrets = Table(
    "webhook_secrets",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("secret_sealed", Text, nullable=False),
    Column("preview", String(40), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime),
    Index("ix_webhook_secrets_tenant", "tenant_id"),
    Index(
        "uq_webhook_secrets_current",
        "tenant_id",
        unique=True,
        sqlite_where=text("expires_at IS NULL"),
        postgresql_where=text("expires_at IS NULL"),
    ),
)

# A tenant's settings (``GET/PATCH /v1/settings``): one row per tenant that changed
# one, a column per setting; a tenant without a row has every default.
tenant_settings = Table(
    "tenant_settings",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("webhook_signature_format", String(20), nullable=False, server_default="design"),
    Column("updated_at", UTCDateTime, nullable=False),
    # Where Homing's notices to the tenant go (migration 0015; docs/operations.md "Notices").
    Column("contact_email", String(254)),
    Column("operations_url", Text),
    # {"email": seconds, ...}: the ttl of a job that names none (migration 0014).
    Column("default_ttl_seconds", JSON),
    # The mailbox a marketing email's List-Unsubscribe names as a mailto: (migration 0027).
    Column("unsubscribe_mailbox", String(254)),
    # {"start": "21:00", "end": "08:00"}: quiet hours of a category that has none
    # (migration 0029; docs/scheduling.md).
    Column("quiet_hours", JSON),
)

# Endpoint URLs that answered 410 Gone: later jobs to them fail without a call until
# the tenant re-enables the URL. Keyed by the SHA-256 of the normalised URL.
webhook_gone_endpoints = Table(
    "webhook_gone_endpoints",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("url_hash", String(64), primary_key=True),
    Column("url", Text, nullable=False),
    Column("job_id", ID, nullable=False),
    Column("gone_at", UTCDateTime, nullable=False),
)

# Notices to tenants (docs/operations.md "Notices"): one row per event, unique on (tenant, kind,
# event key), so a notice is never sent twice; ``held`` when the tenant's hourly bound
# was reached (recorded, not sent, counted in the next digest).
notices = Table(
    "notices",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("kind", String(60), nullable=False),
    Column("event_key", String(200), nullable=False),
    Column("data", JSON, nullable=False),
    Column("held", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("tenant_id", "kind", "event_key", name="uq_notices_event"),
    Index("ix_notices_tenant_created", "tenant_id", "created_at"),
)

# Operator alerts firing now (homing.alerts): one row per condition, so the process
# that evaluates next knows what to resolve, whichever process it is.
alerts_firing = Table(
    "alerts_firing",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("since", UTCDateTime, nullable=False),
    Column("detail", Text, nullable=False),
)

# The alerts that fired lately (migration 0022): a row when a condition starts firing,
# its ``resolved_at`` set when it clears, both in the transaction that changes
# ``alerts_firing``; kept to the newest HOMING_ALERT_HISTORY_ROWS (homing.store.alert_signals).
alert_history = Table(
    "alert_history",
    metadata,
    Column("id", ID, primary_key=True),
    Column("key", String(200), nullable=False),
    Column("detail", String(500), nullable=False),
    Column("fired_at", UTCDateTime, nullable=False),
    Column("resolved_at", UTCDateTime),
    Index("ix_alert_history_fired_at", "fired_at", "id"),
    Index("ix_alert_history_key", "key"),
)
