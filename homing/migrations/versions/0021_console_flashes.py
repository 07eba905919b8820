"""Console flashes: ``console_flashes``, what a session's next page says was done.

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_flashes",
        sa.Column("id", ID, primary_key=True),
        sa.Column(
            "session_id",
            ID,
            sa.ForeignKey("console_sessions.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("message", sa.String(300), nullable=False),
        sa.Column("secret_sealed", sa.Text),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("console_flashes")
