"""Scheduling: fair claim index, in-flight index, ordering keys.

Revision ID: 0004
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0001"
branch_labels = None
depends_on = None

LEASED = sa.text("claim_token IS NOT NULL")
ORDERED = sa.text("ordering_key IS NOT NULL")


def upgrade() -> None:
    op.add_column("jobs", sa.Column("ordering_key", sa.String(255)))
    op.add_column("queue_entries", sa.Column("ordering_key", sa.String(255)))
    op.add_column("queue_entries", sa.Column("seq", sa.BigInteger))
    op.drop_index("ix_queue_entries_claim", table_name="queue_entries")
    op.create_index(
        "ix_queue_entries_fair",
        "queue_entries",
        ["queue", "priority", "tenant_id", "available_at"],
    )
    op.create_index(
        "ix_queue_entries_inflight",
        "queue_entries",
        ["queue", "tenant_id"],
        sqlite_where=LEASED,
        postgresql_where=LEASED,
    )
    op.create_index(
        "ix_queue_entries_ordering",
        "queue_entries",
        ["tenant_id", "ordering_key", "seq"],
        sqlite_where=ORDERED,
        postgresql_where=ORDERED,
    )


def downgrade() -> None:
    op.drop_index("ix_queue_entries_ordering", table_name="queue_entries")
    op.drop_index("ix_queue_entries_inflight", table_name="queue_entries")
    op.drop_index("ix_queue_entries_fair", table_name="queue_entries")
    op.create_index(
        "ix_queue_entries_claim", "queue_entries", ["queue", "priority", "available_at"]
    )
    with op.batch_alter_table("queue_entries") as batch:
        batch.drop_column("seq")
        batch.drop_column("ordering_key")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("ordering_key")
