"""A job keeps the ``traceparent`` of the span that accepted it (docs/tracing.md).

Written only while tracing is on; NULL otherwise and for every job accepted before.
Nullable without a default, so PostgreSQL adds it without rewriting the table.

Revision ID: 0040
Revises: 0039
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("traceparent", sa.String(55), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "traceparent")
