"""Outbound webhooks: signing secrets, gone endpoints, the response excerpt of attempts.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.String(36)


def upgrade() -> None:
    # Nullable ADD COLUMN: no table copy on SQLite, no rewrite on PostgreSQL.
    op.add_column("attempts", sa.Column("response_excerpt", sa.Text))
    op.create_table(
        "webhook_secrets",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("secret_sealed", sa.Text, nullable=False),
        sa.Column("preview", sa.String(40), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime),
    )
    op.create_index("ix_webhook_secrets_tenant", "webhook_secrets", ["tenant_id"])
    op.create_index(
        "uq_webhook_secrets_current",
        "webhook_secrets",
        ["tenant_id"],
        unique=True,
        sqlite_where=sa.text("expires_at IS NULL"),
        postgresql_where=sa.text("expires_at IS NULL"),
    )
    op.create_table(
        "webhook_gone_endpoints",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("url_hash", sa.String(64), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("job_id", ID, nullable=False),
        sa.Column("gone_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("webhook_gone_endpoints")
    op.drop_index("uq_webhook_secrets_current", table_name="webhook_secrets")
    op.drop_index("ix_webhook_secrets_tenant", table_name="webhook_secrets")
    op.drop_table("webhook_secrets")
    with op.batch_alter_table("attempts") as batch:
        batch.drop_column("response_excerpt")
