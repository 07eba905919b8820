"""Inbound signature nonces remember the body they came with (Mailgun's retries).

A Mailgun retry carries its first attempt's token; the token is now accepted again with
that same body (the journal then answers the repeat) and refused with any other. The
rows kept before this revision have no body: such a token stays refused, as it was.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbound_nonces") as batch:
        batch.add_column(sa.Column("body_hash", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inbound_nonces") as batch:
        batch.drop_column("body_hash")
