"""The audit log: ``audit_events``, one row per change to a tenant's configuration.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_events",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID),
        sa.Column("actor_kind", sa.String(16), nullable=False),
        sa.Column("actor_id", sa.String(64), nullable=False),
        sa.Column("actor_name", sa.String(200)),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("target_type", sa.String(40), nullable=False),
        sa.Column("target_id", sa.String(320)),
        sa.Column("changes", sa.JSON, nullable=False),
        sa.Column("request_id", sa.String(128)),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_audit_events_tenant", "audit_events", ["tenant_id", "id"])
    op.create_index("ix_audit_events_created_at", "audit_events", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_audit_events_created_at", "audit_events")
    op.drop_index("ix_audit_events_tenant", "audit_events")
    op.drop_table("audit_events")
