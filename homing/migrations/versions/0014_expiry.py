"""Expiry: when a job stops being worth delivering, and the tenant's default ttl.

Revision ID: 0014
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0014"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("expires_at", UTCDateTime))
    op.add_column("tenant_settings", sa.Column("default_ttl_seconds", sa.JSON))


def downgrade() -> None:
    with op.batch_alter_table("tenant_settings") as batch:
        batch.drop_column("default_ttl_seconds")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("expires_at")
