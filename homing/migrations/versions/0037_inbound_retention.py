"""Retention of inbound conflicts and of notifications, and erasure of a recipient's
notifications: indexes on ``inbound_conflicts.received_at`` and
``notifications.completed_at`` (the purge deletes the oldest in bounded batches by
index, docs/operations.md "Retention"), and on ``notifications (tenant_id, recipient)``
(an erasure finds a recipient's, docs/recipients.md "Erasure").

Revision ID: 0037
Revises: 0032
"""

from __future__ import annotations

from alembic import op

revision = "0037"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_inbound_conflicts_received", "inbound_conflicts", ["received_at"])
    op.create_index("ix_notifications_completed", "notifications", ["completed_at"])
    op.create_index("ix_notifications_recipient", "notifications", ["tenant_id", "recipient"])


def downgrade() -> None:
    op.drop_index("ix_notifications_recipient", table_name="notifications")
    op.drop_index("ix_notifications_completed", table_name="notifications")
    op.drop_index("ix_inbound_conflicts_received", table_name="inbound_conflicts")
