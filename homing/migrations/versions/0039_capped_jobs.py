"""Frequency caps count a person by recipient and by address (docs/recipients.md).

``ix_jobs_recipient_category`` (every job, NULLs included, SUPPRESSED ones too) gives
way to three partial indexes:

- ``ix_jobs_capped_recipient (recipient_id, category, created_at)`` and
  ``ix_jobs_capped_address (tenant_id, recipient, category, created_at)``, both over
  the jobs sent in a category that are not SUPPRESSED (the first, of those that name a
  recipient): the two counts a cap makes stop at the cap, and a flood of capped (so
  SUPPRESSED) sends cannot lengthen them;
- ``ix_jobs_recipient_id (recipient_id)`` over the jobs that name a recipient, for
  erasure. A job sent to an address alone (most of them) is in none of the three.

Revision ID: 0039
Revises: 0038
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None

CAPPED = "category IS NOT NULL AND status <> 'SUPPRESSED'"
CAPPED_BY_RECIPIENT = f"recipient_id IS NOT NULL AND {CAPPED}"


def _partial(name: str, columns: list[str], where: str) -> None:
    clause = sa.text(where)
    op.create_index(name, "jobs", columns, sqlite_where=clause, postgresql_where=clause)


def upgrade() -> None:
    _partial("ix_jobs_recipient_id", ["recipient_id"], "recipient_id IS NOT NULL")
    _partial(
        "ix_jobs_capped_recipient",
        ["recipient_id", "category", "created_at"],
        CAPPED_BY_RECIPIENT,
    )
    _partial("ix_jobs_capped_address", ["tenant_id", "recipient", "category", "created_at"], CAPPED)
    op.drop_index("ix_jobs_recipient_category", table_name="jobs")


def downgrade() -> None:
    op.create_index(
        "ix_jobs_recipient_category", "jobs", ["recipient_id", "category", "created_at"]
    )
    op.drop_index("ix_jobs_capped_address", table_name="jobs")
    op.drop_index("ix_jobs_capped_recipient", table_name="jobs")
    op.drop_index("ix_jobs_recipient_id", table_name="jobs")
