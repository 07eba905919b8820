"""Retention: when a job's payload was scrubbed, and the indexes the purge walks.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_UNSCRUBBED = "payload_scrubbed_at IS NULL"


def upgrade() -> None:
    op.add_column("jobs", sa.Column("payload_scrubbed_at", UTCDateTime))
    op.create_index("ix_jobs_completed_at", "jobs", ["completed_at"])
    op.create_index(
        "ix_jobs_unscrubbed",
        "jobs",
        ["completed_at"],
        sqlite_where=sa.text(_UNSCRUBBED),
        postgresql_where=sa.text(_UNSCRUBBED),
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_unscrubbed", "jobs")
    op.drop_index("ix_jobs_completed_at", "jobs")
    op.drop_column("jobs", "payload_scrubbed_at")
