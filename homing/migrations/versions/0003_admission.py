"""Admission control: custom tenant limits, test jobs, monthly usage counters.

Revision ID: 0003
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.String(36)


def upgrade() -> None:
    # Plain ADD COLUMN (no table copy on SQLite): nullable, or with a constant default.
    op.add_column("tenants", sa.Column("rate_limit_per_minute", sa.Integer))
    op.add_column("tenants", sa.Column("quota_overrides", sa.JSON))
    op.add_column("jobs", sa.Column("test", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "usage_counters",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("period", sa.String(7), primary_key=True),
        sa.Column("channel", sa.String(20), primary_key=True),
        sa.Column("used", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("usage_counters")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("test")
    with op.batch_alter_table("tenants") as batch:
        batch.drop_column("quota_overrides")
        batch.drop_column("rate_limit_per_minute")
