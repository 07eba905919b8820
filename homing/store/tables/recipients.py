"""Tables of recipients (migration 0025): the people a tenant sends to, known by the
tenant's ``external_id`` with an address per channel; the tenant's categories of
notification; and each recipient's preferences by category and channel.

They live beside ``homing.store.tables.core`` on the same ``metadata``; ``core``
imports this module, so ``core.metadata`` holds these tables too.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    ForeignKey,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
)

from homing.store.tables.columns import ID, UTCDateTime, metadata

recipients = Table(
    "recipients",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("external_id", String(255), nullable=False),
    # One address per channel, in the form a send takes it (homing.addresses).
    Column("email", String(400)),
    Column("phone", String(20)),
    Column("telegram_chat_id", String(100)),
    Column("slack_channel", String(100)),
    Column("locale", String(35)),
    Column("timezone", String(64)),
    Column("data", JSON),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    UniqueConstraint("tenant_id", "external_id", name="uq_recipients_tenant_external_id"),
)

# How many recipients each tenant has: the bound HOMING_MAX_RECIPIENTS_PER_TENANT is
# checked against this row in the transaction that creates one, not by counting.
recipient_counts = Table(
    "recipient_counts",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("count", Integer, nullable=False),
)

categories = Table(
    "categories",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("key", String(64), nullable=False),
    Column("name", String(200), nullable=False),
    Column("kind", String(20), nullable=False),
    # {channel: bool}: whether a recipient with no preference of its own gets it.
    Column("defaults", JSON, nullable=False),
    Column("frequency_cap", JSON),
    Column("quiet_hours", JSON),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("tenant_id", "key", name="pk_categories"),
)

recipient_preferences = Table(
    "recipient_preferences",
    metadata,
    Column("recipient_id", ID, ForeignKey("recipients.id", ondelete="CASCADE"), nullable=False),
    Column("category_key", String(64), nullable=False),
    Column("channel", String(20), nullable=False),
    Column("allowed", Boolean, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("recipient_id", "category_key", "channel", name="pk_recipient_prefs"),
)

# One-click unsubscribes of an address-only send (migration 0027): the address is
# kept only as its keyed hash (``OptOutLinks.address_ref``), computed by the caller.
address_opt_outs = Table(
    "address_opt_outs",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("channel", String(20), nullable=False),
    Column("category_key", String(64), nullable=False),
    Column("address_ref", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint(
        "tenant_id", "channel", "category_key", "address_ref", name="pk_address_opt_outs"
    ),
)
