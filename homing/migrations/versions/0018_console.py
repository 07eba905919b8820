"""The console's people: users, memberships of tenants, signed-in sessions.

Revision ID: 0018
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0018"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", ID, primary_key=True),
        sa.Column("email", sa.String(254), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("operator", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "memberships",
        sa.Column("user_id", ID, sa.ForeignKey("users.id"), primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("role", sa.String(10), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_memberships_tenant", "memberships", ["tenant_id"])
    op.create_table(
        "console_sessions",
        sa.Column("id", ID, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", ID, sa.ForeignKey("users.id"), nullable=False, index=True),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("console_sessions")
    op.drop_index("ix_memberships_tenant", "memberships")
    op.drop_table("memberships")
    op.drop_table("users")
