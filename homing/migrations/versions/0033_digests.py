"""Digests: ``digests`` (one per recipient, key and window, with its close time) and
``digest_items`` (each gathered notification's data, in order); a gathered
notification names its digest (``notifications.digest_id``).

Revision ID: 0033
Revises: 0037
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0033"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "digests",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("recipient", sa.String(255), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.String(40)),
        sa.Column("close_at", sa.Float, nullable=False),
        sa.Column("item_count", sa.Integer, nullable=False),
        sa.Column("data_bytes", sa.Integer, nullable=False),
        sa.Column("request", sa.JSON, nullable=False),
        sa.Column("api_key_id", ID),
        sa.Column("notification_id", ID),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("sent_at", UTCDateTime),
        sa.UniqueConstraint("tenant_id", "recipient", "key", "seq", name="uq_digests_window"),
    )
    op.create_index("ix_digests_due", "digests", ["status", "close_at"])
    op.create_table(
        "digest_items",
        sa.Column("digest_id", ID, sa.ForeignKey("digests.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("notification_id", ID, nullable=False),
        sa.Column("data", sa.JSON),
        sa.PrimaryKeyConstraint("digest_id", "position", name="pk_digest_items"),
    )
    op.add_column("notifications", sa.Column("digest_id", ID))


def downgrade() -> None:
    with op.batch_alter_table("notifications") as batch:
        batch.drop_column("digest_id")
    op.drop_table("digest_items")
    op.drop_index("ix_digests_due", table_name="digests")
    op.drop_table("digests")
