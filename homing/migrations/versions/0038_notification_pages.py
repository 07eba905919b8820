"""The console's notification pages (docs/console.md): indexes on ``notifications
(tenant_id, id)`` and ``(tenant_id, status, id)`` (a tenant's list, newest first, of
every status or one, read backwards from the cursor) and on ``notification_steps
(job_id)`` (a message's page finds the notification its job is a step of).

Revision ID: 0038
Revises: 0033
"""

from __future__ import annotations

from alembic import op

revision = "0038"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_notifications_tenant", "notifications", ["tenant_id", "id"])
    op.create_index(
        "ix_notifications_tenant_status", "notifications", ["tenant_id", "status", "id"]
    )
    op.create_index("ix_notification_steps_job", "notification_steps", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_notification_steps_job", table_name="notification_steps")
    op.drop_index("ix_notifications_tenant_status", table_name="notifications")
    op.drop_index("ix_notifications_tenant", table_name="notifications")
