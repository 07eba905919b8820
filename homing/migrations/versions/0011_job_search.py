"""Search jobs: the recipient each job is sent to, and indexes for each filter.

Revision ID: 0011
Revises: 0009

Existing rows keep ``recipient`` NULL: the comparison key comes from the Python
address parser (``homing.addresses``), which a revision may not import, and a
full-table rewrite of ``jobs`` would hold its lock for as long as the table is large.
Jobs accepted before this revision are found by every filter except ``to``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0009"
branch_labels = None
depends_on = None

_INDEXES = {
    "ix_jobs_tenant_recipient": ["tenant_id", "recipient", "id"],
    "ix_jobs_tenant_channel": ["tenant_id", "channel", "id"],
    "ix_jobs_status": ["status", "id"],
    "ix_jobs_recipient": ["recipient", "id"],
}


def upgrade() -> None:
    op.add_column("jobs", sa.Column("recipient", sa.String(400)))
    for name, columns in _INDEXES.items():
        op.create_index(name, "jobs", columns)


def downgrade() -> None:
    for name in _INDEXES:
        op.drop_index(name, table_name="jobs")
    op.drop_column("jobs", "recipient")
