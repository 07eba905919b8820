"""Invitations to become a member of a tenant, stored by the hash of their token.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "invitations",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("role", sa.String(10), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("invited_by", ID, sa.ForeignKey("users.id")),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
        sa.Column("accepted_at", UTCDateTime),
        sa.Column("revoked_at", UTCDateTime),
    )
    op.create_index("ix_invitations_tenant_email", "invitations", ["tenant_id", "email"])


def downgrade() -> None:
    op.drop_index("ix_invitations_tenant_email", "invitations")
    op.drop_table("invitations")
