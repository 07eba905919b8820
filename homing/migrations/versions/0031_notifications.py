"""Multi-channel notifications: ``notifications`` (one per request to
``POST /v1/notifications``) and ``notification_steps`` (a channel each, in the order
tried, with its job and outcome).

Revision ID: 0031
Revises: 0029
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0031"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notifications",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("strategy", sa.String(10), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("escalate_after_seconds", sa.Integer),
        sa.Column("recipient", sa.String(255), nullable=False),
        sa.Column("template", sa.String(255), nullable=False),
        sa.Column("category", sa.String(64)),
        sa.Column("idempotency_key", sa.String(255)),
        sa.Column("request_hash", sa.String(64)),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("completed_at", UTCDateTime),
        sa.UniqueConstraint(
            "tenant_id", "idempotency_key", name="uq_notifications_tenant_idempotency_key"
        ),
    )
    op.create_table(
        "notification_steps",
        sa.Column(
            "notification_id",
            ID,
            sa.ForeignKey("notifications.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("tenant_id", ID, nullable=False),
        sa.Column("channel", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.String(40)),
        sa.Column("job_id", ID),
        sa.Column("item_id", ID),
        sa.Column("spec", sa.JSON),
        sa.Column("due_at", sa.Float),
        sa.Column("signal", sa.String(20)),
        sa.Column("signal_at", UTCDateTime),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("notification_id", "position", name="pk_notification_steps"),
    )
    op.create_index(
        "ix_notification_steps_watch",
        "notification_steps",
        ["status", "notification_id", "position"],
    )


def downgrade() -> None:
    op.drop_index("ix_notification_steps_watch", table_name="notification_steps")
    op.drop_table("notification_steps")
    op.drop_table("notifications")
