"""Alert history: ``alert_history``, the conditions that fired lately and when each
resolved, kept to the newest HOMING_ALERT_HISTORY_ROWS rows.

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert_history",
        sa.Column("id", ID, primary_key=True),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("detail", sa.String(500), nullable=False),
        sa.Column("fired_at", UTCDateTime, nullable=False),
        sa.Column("resolved_at", UTCDateTime),
    )
    # Newest first and trimmed oldest first on fired_at; a condition's open row by key.
    op.create_index("ix_alert_history_fired_at", "alert_history", ["fired_at", "id"])
    op.create_index("ix_alert_history_key", "alert_history", ["key"])


def downgrade() -> None:
    op.drop_index("ix_alert_history_key", "alert_history")
    op.drop_index("ix_alert_history_fired_at", "alert_history")
    op.drop_table("alert_history")
