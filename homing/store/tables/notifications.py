"""Tables of multi-channel notifications (migration 0031, docs/notifications.md): one
row per notification and one per step (a channel it may go by), in the order tried;
and digests (migration 0033): one row per recipient, key and window, and the data of
each notification gathered into it, in order.

They live beside ``homing.store.tables.core`` on the same ``metadata``; ``core``
imports this module, so ``core.metadata`` holds these tables too.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
)

from homing.store.tables.columns import ID, UTCDateTime, metadata

notifications = Table(
    "notifications",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    # all | first | escalate
    Column("strategy", String(10), nullable=False),
    # running | succeeded | failed
    Column("status", String(20), nullable=False),
    Column("escalate_after_seconds", Integer),
    Column("recipient", String(255), nullable=False),
    Column("template", String(255), nullable=False),
    Column("category", String(64)),
    Column("idempotency_key", String(255)),
    Column("request_hash", String(64)),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("completed_at", UTCDateTime),
    # A notification gathered into a digest (migration 0033): it makes no job itself.
    Column("digest_id", ID),
    UniqueConstraint(
        "tenant_id", "idempotency_key", name="uq_notifications_tenant_idempotency_key"
    ),
    # Retention deletes the ended oldest first; erasure finds a recipient's (migration 0037).
    Index("ix_notifications_completed", "completed_at"),
    Index("ix_notifications_recipient", "tenant_id", "recipient"),
    # The console's list, newest first, of every status or one (migration 0038).
    Index("ix_notifications_tenant", "tenant_id", "id"),
    Index("ix_notifications_tenant_status", "tenant_id", "status", "id"),
)

notification_steps = Table(
    "notification_steps",
    metadata,
    Column(
        "notification_id",
        ID,
        ForeignKey("notifications.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("position", Integer, nullable=False),
    Column("tenant_id", ID, nullable=False),
    Column("channel", String(20), nullable=False),
    # pending (not made yet) | queued (its job made, outcome not known) | accepted |
    # succeeded | failed | skipped | escalated | not_needed
    Column("status", String(20), nullable=False),
    Column("reason", String(40)),
    Column("job_id", ID),
    # An in-app step's feed item: its seen or read mark is the step's success signal.
    Column("item_id", ID),
    # The job a pending step makes (rendered and addressed at accept); dropped once made.
    Column("spec", JSON),
    # Epoch seconds: an escalating step with no success signal by then is escalated.
    Column("due_at", Float),
    # The success signal seen for its job (delivered, opened, clicked, seen, read…),
    # recorded even when it came after the next step was sent.
    Column("signal", String(20)),
    Column("signal_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("notification_id", "position", name="pk_notification_steps"),
    # The sweep walks the steps still watched (queued, or escalated without a signal).
    Index("ix_notification_steps_watch", "status", "notification_id", "position"),
    # A message's page finds the notification its job is a step of (migration 0038).
    Index("ix_notification_steps_job", "job_id"),
)

digests = Table(
    "digests",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    # The recipient's external id, as the notifications name it.
    Column("recipient", String(255), nullable=False),
    Column("key", String(64), nullable=False),
    # The window's number for this recipient and key: 0, 1, 2… (the next one opens
    # when this one is closed or full).
    Column("seq", Integer, nullable=False),
    # open | sent | failed
    Column("status", String(20), nullable=False),
    # Why it failed: the code of the refusal its send met.
    Column("reason", String(40)),
    # Epoch seconds: the window closes then, and the sweep sends it.
    Column("close_at", Float, nullable=False),
    Column("item_count", Integer, nullable=False),
    Column("data_bytes", Integer, nullable=False),
    # The request of the notification that opened it (template, channels, strategy…):
    # what the digest is sent as, with ``items`` and ``count`` as its data.
    Column("request", JSON, nullable=False),
    Column("api_key_id", ID),
    # The notification the digest was sent as, once sent.
    Column("notification_id", ID),
    Column("created_at", UTCDateTime, nullable=False),
    Column("sent_at", UTCDateTime),
    UniqueConstraint("tenant_id", "recipient", "key", "seq", name="uq_digests_window"),
    # The sweep reads the open digests whose window has closed.
    Index("ix_digests_due", "status", "close_at"),
)

digest_items = Table(
    "digest_items",
    metadata,
    Column("digest_id", ID, ForeignKey("digests.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("notification_id", ID, nullable=False),
    Column("data", JSON),
    PrimaryKeyConstraint("digest_id", "position", name="pk_digest_items"),
)
