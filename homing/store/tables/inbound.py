"""Tables of inbound events, suppression and sending domains (migration 0005).

They live beside ``homing.store.tables.core`` on the same ``metadata``
(``homing.store.tables.columns``); ``core`` imports this module, so ``core.metadata``
holds these tables too.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, Index, String, Table, Text, UniqueConstraint

from homing.store.tables.columns import ID, UTCDateTime, metadata

# The append-only journal of verified inbound events (the S2S-postback discipline):
# stored before anything is acted on, once per (source, account, event id).
# ``provider_account_id`` is "" for billing events, which belong to no account.
inbound_events = Table(
    "inbound_events",
    metadata,
    Column("id", ID, primary_key=True),
    Column("source", String(20), nullable=False),
    Column("provider_account_id", String(36), nullable=False),
    Column("event_id", String(255), nullable=False),
    Column("tenant_id", ID),
    Column("body_hash", String(64), nullable=False),
    Column("status", String(20), nullable=False),
    Column("vendor_type", String(100)),
    Column("event_type", String(20)),
    Column("job_id", ID),
    Column("recipient", String(320)),
    Column("payload", JSON),
    Column("raw", Text),
    Column("detail", JSON),
    Column("error", Text),
    Column("occurred_at", UTCDateTime),
    Column("received_at", UTCDateTime, nullable=False),
    Column("processed_at", UTCDateTime),
    UniqueConstraint(
        "source", "provider_account_id", "event_id", name="uq_inbound_events_source_event"
    ),
    Index("ix_inbound_events_job", "job_id"),
    Index("ix_inbound_events_received", "received_at"),
    Index("ix_inbound_events_tenant_received", "tenant_id", "received_at"),
    Index("ix_inbound_events_status", "status"),
)

# The same event id arriving again with another body: kept, never applied, alerted.
inbound_conflicts = Table(
    "inbound_conflicts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("source", String(20), nullable=False),
    Column("provider_account_id", String(36), nullable=False),
    Column("event_id", String(255), nullable=False),
    Column("tenant_id", ID),
    Column("original_hash", String(64), nullable=False),
    Column("body_hash", String(64), nullable=False),
    Column("payload", JSON),
    Column("raw", Text),
    Column("received_at", UTCDateTime, nullable=False),
    Index("ix_inbound_conflicts_event", "source", "provider_account_id", "event_id"),
    Index("ix_inbound_conflicts_received", "received_at"),
)

# The secret that proves a provider account's events: a SendGrid verification key, a
# Resend or Mailgun signing secret, Postmark basic-auth credentials. Sealed, bound to
# (provider_inbound, account id, kind).
provider_inbound = Table(
    "provider_inbound",
    metadata,
    Column("provider_account_id", ID, ForeignKey("provider_accounts.id"), primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("kind", String(30), nullable=False),
    Column("secret_sealed", Text, nullable=False),
    Column("preview", String(200), nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Addresses a tenant must not send to on a channel: hard bounces, complaints, manual.
suppressions = Table(
    "suppressions",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("channel", String(20), primary_key=True),
    Column("address", String(320), primary_key=True),
    Column("reason", String(30), nullable=False),
    Column("source", String(40), nullable=False),
    Column("event_entry_id", ID),
    Column("created_at", UTCDateTime, nullable=False),
)

# Sending domains registered with a tenant's provider, and the DNS records it asked for.
sending_domains = Table(
    "sending_domains",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("provider_account_id", ID, ForeignKey("provider_accounts.id"), nullable=False),
    Column("provider", String(40), nullable=False),
    Column("domain", String(253), nullable=False),
    Column("provider_domain_id", String(255), nullable=False),
    Column("status", String(20), nullable=False),
    Column("records", JSON, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("verified_at", UTCDateTime),
    UniqueConstraint(
        "tenant_id", "provider_account_id", "domain", name="uq_sending_domains_account_domain"
    ),
    Index("ix_sending_domains_tenant_domain", "tenant_id", "domain"),
)

# One-time values of signatures that do not cover the body (Mailgun's token), per
# provider account, kept until the signature would be stale anyway (migration 0008),
# with the SHA-256 hex of the body they came with (0023). ``nonce`` is the
# SHA-256 hex of the value, so its size is bounded whatever was sent.
inbound_nonces = Table(
    "inbound_nonces",
    metadata,
    Column("provider_account_id", ID, primary_key=True),
    Column("nonce", String(64), primary_key=True),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("body_hash", String(64)),
    Index("ix_inbound_nonces_expires_at", "expires_at"),
)
