"""Scheduled sends: when a job is due (``send_at``) and why (``schedule_reason``), and
the tenant's default quiet hours.

Revision ID: 0029
Revises: 0028
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("send_at", UTCDateTime))
    op.add_column("jobs", sa.Column("schedule_reason", sa.String(20)))
    op.add_column("tenant_settings", sa.Column("quiet_hours", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("tenant_settings") as batch:
        batch.drop_column("quiet_hours")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("schedule_reason")
        batch.drop_column("send_at")
