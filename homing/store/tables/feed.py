"""Tables of the in-app feed (migration 0028): the items in each recipient's feed, the
tenant's feed secret (sealed) and the browser origins it allows (docs/feed.md).

They live beside ``homing.store.tables.core`` on the same ``metadata``; ``core``
imports this module, so ``core.metadata`` holds these tables too.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    ForeignKey,
    Index,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from homing.store.tables.columns import ID, UTCDateTime, metadata

feed_items = Table(
    "feed_items",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("recipient_id", ID, ForeignKey("recipients.id", ondelete="CASCADE"), nullable=False),
    # 1, 2, 3… per recipient, given under the recipient's lock: a stream resumes after it.
    Column("seq", BigInteger, nullable=False),
    # The COMPLETED job that carries the send (``GET /v1/jobs/{id}``).
    Column("job_id", ID, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("title", Text),
    Column("body", Text, nullable=False),
    Column("url", String(2048)),
    Column("category", String(64)),
    Column("data", JSON),
    Column("seen_at", UTCDateTime),
    Column("read_at", UTCDateTime),
    Column("archived_at", UTCDateTime),
    # Pages newest first and a stream's "after seq" walk one recipient's items in order.
    UniqueConstraint("tenant_id", "recipient_id", "seq", name="uq_feed_items_seq"),
    Index("ix_feed_items_unread", "tenant_id", "recipient_id", "read_at", "archived_at"),
)

# One per tenant that has one: the HMAC key of its recipients' feed tokens.
feed_secrets = Table(
    "feed_secrets",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("secret_sealed", Text, nullable=False),
    Column("preview", String(40), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

# The exact origins (``https://app.example``) a tenant's pages call ``/feed`` from.
feed_origins = Table(
    "feed_origins",
    metadata,
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("origin", String(255), nullable=False),
    # By origin first: a preflight names no tenant (docs/feed.md, "CORS").
    PrimaryKeyConstraint("origin", "tenant_id", name="pk_feed_origins"),
)
